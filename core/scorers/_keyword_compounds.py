"""Keyword coverage's compounds: curated terms and rule compounds found in a text's words,
numbers merged with a following "percent", and the variants a reference keyword is also
covered by (a rule compound's verb phrase, a hyphenated term's spaced spelling), as
`core/scorers/keyword_coverage.py`'s docstring describes."""

from __future__ import annotations

from itertools import product

from core.scorers._keyword_lexicon import _DO, _Term
from core.scorers._keyword_words import _ING, _KEYWORDS, _remember, _Word, _word

# --- compounds ------------------------------------------------------------------------------


def _match_term(items: list[_Word | None], start: int, terms: tuple[_Term, ...]) -> _Term | None:
    """The longest curated term starting at `start`, or None."""
    for term in terms:
        end = start + term.length
        if end > len(items):
            continue
        for offset in range(1, term.length):
            item = items[start + offset]
            if item is None or item.forms.isdisjoint(term.words[offset]):
                break
        else:
            return term
    return None


def _span_word(words: list[_Word], forms: frozenset[str]) -> _Word:
    """The keyword made of several words (cached by its surface)."""
    surface = " ".join(word.surface for word in words)
    found = _KEYWORDS.get(surface)
    if found is None:
        found = _Word(surface, forms, True)
        found.pool = forms.union(*(word.forms for word in words if word.is_keyword))
        _remember(_KEYWORDS, surface, found)
    return found


def _term_span(items: list[_Word | None], start: int, word: _Word) -> _Word | None:
    term = _match_term(items, start, word.terms)
    if term is None:
        return None
    # _match_term found a word at every position of the term: the filter drops nothing.
    words = [item for item in items[start : start + term.length] if item is not None]
    return _span_word(words, frozenset({term.key}))


def _reads_as_verb(items: list[_Word | None], start: int) -> bool:
    """Whether the noun-or-verb word at `start` is, from the words before it, a clause's verb:
    after "to", a modal, a subject pronoun or "not" ("to start learning", "we plan testing");
    after a plural noun, its subject ("dashboards make regressions"); or after the subject of
    a question ("does Redis handle caching", "can the cache handle authentication"). A modal
    opens a question only before a determiner or nouns that cannot be verbs: in "you should
    test load balancing", "test" is the verb."""
    before = items[start - 1] if start else None
    if before is None:
        return False
    if before.verb_cue or before.plural:
        return True
    determiner, nouns_only = False, True
    for position in range(start - 1, max(start - 6, -1), -1):  # a subject of up to 4 words
        item = items[position]
        if item is None:
            return False
        if item.aux and position < start - 1:
            return item.surface in _DO or determiner or nouns_only
        if item.object_cue:
            determiner = True
        elif item.is_keyword or item is _CONSUMED:
            nouns_only = nouns_only and item.noun_only
        else:
            return False
    return False


def _compound_span(
    items: list[_Word | None], start: int, modifier: _Word, head: _Word
) -> _Word | None:
    """The rule compound `modifier head`, unless the context reads it as a verb phrase."""
    if head.terms and _match_term(items, start + 1, head.terms) is not None:
        return None
    if modifier.verbish and _reads_as_verb(items, start):
        return None
    if head.head == _ING and start + 2 < len(items):
        after = items[start + 2]
        if after is not None and after.object_cue:
            return None
    surface = modifier.surface + " " + head.surface
    found = _KEYWORDS.get(surface)
    if found is None:
        forms = frozenset(f"{left} {right}" for left, right in product(modifier.forms, head.forms))
        found = _span_word([modifier, head], forms)
    return found


def _percent_span(items: list[_Word | None], start: int, number: _Word) -> tuple[_Word, int] | None:
    """`number` + "percent" / "%" / "per cent" as one number keyword, and its length."""
    following = items[start + 1]
    assert following is not None
    if following.percent:
        length = 2
    elif following.surface == "per" and start + 2 < len(items):
        after = items[start + 2]
        if after is None or after.surface != "cent":
            return None
        length = 3
    else:
        return None
    merged = _word(number.surface.rstrip("%") + "%")
    assert merged is not None
    return merged, length


def _span_at(items: list[_Word | None], position: int, word: _Word) -> tuple[_Word, int] | None:
    """The multi-word (or merged number) keyword starting at a role-2 word, and its length."""
    following = items[position + 1]
    assert following is not None
    if word.terms and not following.forms.isdisjoint(word.term_seconds):
        span = _term_span(items, position, word)
        if span is not None:
            return span, span.surface.count(" ") + 1
    if word.modifier and following.head:
        compound = _compound_span(items, position, word, following)
        return None if compound is None else (compound, 2)
    if word.number and (following.percent or following.surface == "per"):
        return _percent_span(items, position, word)
    return None


# Stands for the words a span consumed after its first: no keyword, no phrase break.
_CONSUMED = _Word("", frozenset(), False)
_CONSUMED.noun_only = True  # a span is a noun phrase
_CONSUMED_RUN: list[_Word | None] = [_CONSUMED] * 16  # longer than any curated term
