"""Keyword coverage's compounds: curated terms and rule compounds found in a text's words,
numbers merged with a following "percent", and the variants a reference keyword is also
covered by (a rule compound's verb phrase, a hyphenated term's spaced spelling), as
`core/scorers/keyword_coverage.py`'s docstring describes."""

from __future__ import annotations

from collections.abc import Iterable
from itertools import product

from core.scorers._keyword_lexicon import _DO, _Term, two_word_splits
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
        found.alpha = True
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
    if not found.acts:
        found.acts = rule_acts(modifier, head)
    return found


def rule_acts(modifier: _Word, head: _Word) -> frozenset[str]:
    """The verb phrases a rule compound names, as "verb:noun" keys: the head's verbs with the
    modifier as object ("hyperparameter tuning" -> tune:hyperparameter, "schema migration"
    -> migrate:schema). A curated term has none: a term of art stays a term."""
    return frozenset(f"{verb}:{noun}" for verb in head.head_verbs for noun in modifier.forms)


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


# --- variants -------------------------------------------------------------------------------

# Words that may stand between a form of "be" and its participle: "were not tested".
_PASSIVE_GAP = frozenset(
    {"not", "never", "also", "often", "always", "usually", "then", "now", "all", "both",
     "being", "been", "be", "further", "rarely", "still"}
)  # fmt: skip
_MAX_OBJECT_NOUNS = 3  # "tune the model's learning-rate hyperparameters": up to 3 words


def verb_phrases(items: list[_Word | None]) -> set[str]:
    """A text's verb phrases as "verb:noun" keys (see `rule_acts`): a verb and the nouns of
    its object, determiners skipped ("tune hyperparameters", "tuning the hyperparameters");
    a compound head, "of" and the nouns after it ("tuning of hyperparameters", "migration of
    the schema"); a noun, a form of "be" and a participle ("the frameworks were tested").
    Any other word between them (a preposition, a conjunction) ends the phrase: "learning
    about machines" names no object."""
    keys: set[str] = set()
    for position, word in enumerate(items):
        if word is None:
            continue
        if word.be:
            if position:
                _passive(items, position, keys)
            continue
        following = items[position + 1]  # a line always ends with None: never out of range
        if following is not None and following.surface == "of" and word.head_verbs:
            _objects(items, position + 2, word.head_verbs, keys)
        elif word.verbs and following is not None:
            _objects(items, position + 1, word.verbs, keys)
    return keys


def _objects(items: list[_Word | None], start: int, verbs: frozenset[str], keys: set[str]) -> None:
    nouns = 0
    for position in range(start, len(items)):
        item = items[position]
        if item is None or nouns == _MAX_OBJECT_NOUNS:
            return
        if not item.is_keyword:
            if item.object_cue:
                continue
            return
        if item.noun_like:
            keys.update(f"{verb}:{noun}" for verb in verbs for noun in item.forms)
        nouns += 1


def _passive(items: list[_Word | None], be: int, keys: set[str]) -> None:
    subject = items[be - 1]
    if subject is None or not subject.is_keyword or not subject.noun_like:
        return
    for position in range(be + 1, min(be + 4, len(items))):
        item = items[position]
        if item is None:
            return
        if item.participle:
            keys.update(f"{verb}:{noun}" for verb in item.verbs for noun in subject.forms)
            return
        if not (item.be or item.surface in _PASSIVE_GAP or item.surface.endswith("ly")):
            return


def spaced(items: list[_Word | None], parts: tuple[str, ...], pool: set[str]) -> bool:
    """Whether a text has these words in a row, in one phrase (the last in any of its forms):
    "well known" for "well-known", "real time" for "realtime". `pool` is the text's
    matchable forms: a part that is a keyword and not among them rules the text out at once."""
    words = [_word(part) for part in parts]
    for word in words:
        if word is None or (word.is_keyword and word.forms.isdisjoint(pool)):
            return False
    first, middle, width = parts[0], parts[1:-1], len(parts)
    last = words[-1]
    assert last is not None
    for position in range(len(items) - width + 1):
        item = items[position]
        if item is None or item.surface != first:
            continue
        following = items[position + 1 : position + width]
        final = following[-1]
        if (
            final is not None
            and not final.forms.isdisjoint(last.forms)
            and all(
                word is not None and word.surface == part
                for word, part in zip(following, middle, strict=False)
            )
        ):
            return True
    return False


def variant_forms(
    reference: Iterable[_Word],
    reference_order: list[_Word | None],
    response_order: list[_Word | None],
    pool: set[str],
) -> tuple[set[str], int]:
    """(The forms of the reference keywords that the response's pool misses but covers by a
    variant (added to the pool): a compound written as one word ("open source" /
    "opensource"), a rule compound by its verb phrase, a hyphenated keyword by its parts
    spaced apart, a word by its two parts spaced apart ("realtime" / "real time"), and a
    word with its neighbour by the two written as one ("real time" / "realtime"). The
    response's verb phrases are looked for only when a compound needs them. With it, how
    many reference keywords the pool itself covers.)"""
    extra: set[str] = set()
    phrases: set[str] | None = None
    matched = 0
    for word in reference:
        if not word.forms.isdisjoint(pool):
            matched += 1
            continue
        if not word.alpha:
            continue  # a number, URL or dotted token: no variant
        surface = word.surface
        if " " in surface:
            covered = surface.replace(" ", "") in pool
            if not covered and word.acts:
                if phrases is None:
                    phrases = verb_phrases(response_order)
                covered = not word.acts.isdisjoint(phrases)
        elif word.parts:
            covered = spaced(response_order, word.parts, pool)
        else:
            splits = word.splits
            if splits is None:
                splits = word.splits = two_word_splits(surface)
            covered = False
            for split in splits:
                if spaced(response_order, split, pool):
                    covered = True
                    break
            else:
                _join_neighbours(word, reference_order, pool, extra)
        if covered:
            extra.update(word.forms)
    return extra, matched


def _join_neighbours(
    word: _Word, order: list[_Word | None], pool: set[str], extra: set[str]
) -> None:
    """Add the forms of the word and its neighbour when the two, written as one word, are in
    the pool ("real time" / "realtime")."""
    try:
        position = order.index(word)  # the same object: `order` made the keyword
    except ValueError:  # a keyword no word of the text is ("50 percent" -> 50%)
        return
    before = order[position - 1] if position else None
    if before is not None and before.alpha and before.surface + word.surface in pool:
        extra.update(before.forms, word.forms)
        return
    after = order[position + 1]  # a line always ends with None: never out of range
    if after is not None and after.alpha and word.surface + after.surface in pool:
        extra.update(word.forms, after.forms)
