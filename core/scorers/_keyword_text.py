"""Keyword coverage's keywords of a text: its words (`_keyword_words.py`) with the curated
terms, rule compounds and merged numbers found among them (`_keyword_compounds.py`), each
keyword once, as `core/scorers/keyword_coverage.py`'s docstring describes. (The scorer's hot
loop, in a module of its own with the words and compounds.)"""

from __future__ import annotations

from core.scorers._keyword_compounds import _CONSUMED_RUN, _span_at
from core.scorers._keyword_words import _items, _Word


def _keywords(text: str) -> tuple[dict[str, _Word], set[str], list[_Word | None]]:
    """The keywords of a text (surface -> keyword, in order; a keyword sharing a form with an
    earlier one is left out), its matchable pool (every form of every keyword, with the words
    inside its compounds) and its words in order, with None at each phrase break.

    Keywords rarely share a form, so the loop keeps every new surface and counts the forms it
    adds to the pool; when the pool ends up smaller than that count, two keywords did share a
    form and `_first_of_each_form` sorts the kept ones out (the per-keyword disjointness test
    would cost every text what only a few need)."""
    order = _items(text)
    items = order.copy()  # spans consume words in the copy: `order` keeps them all
    kept: dict[str, _Word] = {}
    seen: set[str] = set()
    parts: list[frozenset[str]] = []
    counted = 0  # forms added to `seen`, counting a form shared by two keywords twice
    for position, word in enumerate(items):
        if word is None:
            continue
        role = word.role
        if not role:
            continue
        if role == 2:
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
        elif role == 3:  # a hyphenated word's parts
            parts.append(word.pool)
        surface = word.surface
        if surface not in kept:
            kept[surface] = word
            seen |= word.forms
            counted += word.size
    if len(seen) != counted:
        kept, seen = _first_of_each_form(kept)
    if parts:
        seen.update(*parts)  # the pool: `seen` is this call's own set, no longer needed
    return kept, seen, order


def _first_of_each_form(candidates: dict[str, _Word]) -> tuple[dict[str, _Word], set[str]]:
    """Of the keywords in order of first appearance, those none of whose forms came before
    ("model models" is one keyword), and every form seen."""
    kept: dict[str, _Word] = {}
    seen: set[str] = set()
    for surface, word in candidates.items():
        forms = word.forms
        if forms.isdisjoint(seen):
            kept[surface] = word
        seen |= forms
    return kept, seen
