"""Keyword coverage's keywords of a text: its words (`_keyword_words.py`) with the curated
terms, rule compounds and merged numbers found among them (`_keyword_compounds.py`), each
keyword once, as `core/scorers/keyword_coverage.py`'s docstring describes. (The hot loop of the
scorer, in a module of its own with the words and compounds: plain typed Python, which
`bench/code_scorers.py --compiled` also times compiled by mypyc.)"""

from __future__ import annotations

from core.scorers._keyword_compounds import _CONSUMED_RUN, _span_at
from core.scorers._keyword_words import _items, _Word


def _keywords(text: str) -> tuple[dict[str, _Word], set[str], list[_Word | None]]:
    """The keywords of a text (surface -> keyword, in order; a keyword sharing a form with an
    earlier one is left out), its matchable pool (every form of every keyword, with the words
    inside its compounds) and its words in order, with None at each phrase break."""
    order = _items(text)
    items = order.copy()  # spans consume words in the copy: `order` keeps them all
    kept: dict[str, _Word] = {}
    seen: set[str] = set()
    parts: list[frozenset[str]] = []
    for position, word in enumerate(items):
        if word is None:
            continue
        role = word.role
        if role != 1:
            if not role:
                continue
            following = items[position + 1]
            span = (
                _span_at(items, position, word)
                if following is not None and following.joins
                else None
            )
            if span is not None:
                word, length = span
                # The span's other words are consumed (items is this call's own list).
                items[position + 1 : position + length] = _CONSUMED_RUN[: length - 1]
                parts.append(word.pool)
            elif not word.is_keyword:
                continue
        surface = word.surface
        if surface not in kept:
            forms = word.forms
            if forms.isdisjoint(seen):
                kept[surface] = word
            seen.update(forms)
            if word.pool is not forms and role == 1:  # a hyphenated word's parts
                parts.append(word.pool)
    if parts:
        seen.update(*parts)  # the pool: `seen` is this call's own set, no longer needed
    return kept, seen, order
