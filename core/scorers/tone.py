"""Tone: sentiment agreement with a reference tone, or sentiment stability (docs/scorers.md, Tone).

Mastra's behaviour, number for number. Only the output is read (the run's input is ignored,
as in Mastra). Sentiment is the "comparative" score of the npm package `sentiment` 5.0.2,
rebuilt here from its rules on the same lexicon: AFINN-165 (read from the `afinn` package)
plus the emoji scores shipped in `data/emoji-sentiment.tsv`:

1. tokens: lower case; newlines and the characters ``.,/#!?$%^&*;:{}=_`"~()`` become spaces;
   runs of two or more whitespace characters become one space; trim; split on spaces;
2. each token found in the lexicon adds its value, negated when the token just before it is a
   negator ("not", "don't", ...);
3. comparative = that sum / the number of tokens (an empty text has one empty token).

With `reference_tone`, score = `max(0, 1 - |comparative(output) - comparative(reference)|)`
and the preprocess result is `{score, responseSentiment, referenceSentiment, difference}`.
Without it, the output is cut into sentences (runs ending in `.`, `!` or `?`; text after the
last one is dropped, as in Mastra; the whole text when there is none), and score =
`max(0, 1 - population variance of the sentence comparatives)`, with the preprocess result
`{score, avgSentiment, sentimentVariance}`. The score is unrounded.

With `reference="ground_truth"` each item's ground truth is its reference tone: the output's
sentiment should match the expected answer's (`referenceSentiment` is the ground truth's, and
a reason says so); an item without a ground truth is not scorable. A fixed `reference_tone`
and `reference="ground_truth"` would both name the reference, so giving both is an error.
"""

from __future__ import annotations

import re
from importlib import resources
from typing import Any

from core.errors import ScorerConfigError
from core.scorers._data import data_lines
from core.scorers._reference import (
    Reference,
    ReferenceOptions,
    check_reference,
    reference_entry,
    reference_scorer,
    reference_text,
)
from core.scorers._text import JS_WHITESPACE, join_texts, js_trim
from core.scorers.metadata import COMPARES
from core.scoring import NotScorable, Scorer, StepContext

__all__ = [
    "CATALOG_ENTRY",
    "DESCRIPTION",
    "LEXICON",
    "SCORER_ID",
    "ToneOptions",
    "create_tone_scorer",
    "sentiment_comparative",
    "tone_analysis",
]

SCORER_ID = "tone-scorer"
DESCRIPTION = (
    "Sentiment of the output (AFINN-165 lexicon): agreement with a reference tone when one is"
    " given, else how stable the sentiment is from sentence to sentence."
)


class ToneOptions(ReferenceOptions):
    """Options of the tone scorer."""

    reference_tone: str | None = None
    """A text whose sentiment the output should match; without it, the score is how stable
    the output's sentiment is across sentences."""


def _load_lexicon() -> dict[str, int]:
    """AFINN-165 from the `afinn` package, merged with the emoji scores."""
    path = resources.files("afinn").joinpath("data").joinpath("AFINN-en-165.txt")
    lexicon: dict[str, int] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line:
            word, value = line.rsplit("\t", 1)
            lexicon[word] = int(value)
    for line in data_lines("emoji-sentiment.tsv"):
        emoji, value = line.rsplit("\t", 1)
        lexicon[emoji] = int(value)
    return lexicon


LEXICON: dict[str, int] = _load_lexicon()
"""Word or emoji -> valence (-5..+5). Multi-word AFINN entries never match a single token."""

_NEGATORS = frozenset(
    {"cant", "can't", "dont", "don't", "doesnt", "doesn't", "not", "non", "wont", "won't"}
    | {"isnt", "isn't"}
)
# `sentiment` blanks these characters out before splitting (one replacement per character).
_PUNCTUATION = str.maketrans(dict.fromkeys('.,/#!?$%^&*;:{}=_`"~()\n', " "))
_SPACE_RUNS = re.compile(f"[{JS_WHITESPACE}]{{2,}}")
_SENTENCES = re.compile(r"[^.!?]+[.!?]+")


# Whitespace other than a plain space: with none of it, `str.split()` tokenises as `sentiment`.
_OTHER_WHITESPACE = re.compile(f"[{JS_WHITESPACE.replace(' ', '')}\x1c-\x1f\x85]")


def _blank(text: str) -> str:
    """Lower case, with `sentiment`'s punctuation turned into spaces."""
    return text.lower().translate(_PUNCTUATION)


def _tokens_of_blanked(blanked: str) -> list[str]:
    """`sentiment`'s tokens: runs of 2+ whitespace characters collapse, a single tab or other
    lone whitespace character stays inside its token."""
    if _OTHER_WHITESPACE.search(blanked) is None:  # only spaces: split() is the same, in C
        return blanked.split() or [""]
    return js_trim(_SPACE_RUNS.sub(" ", blanked)).split(" ")


def _comparative(tokens: list[str]) -> float:
    if _NEGATORS.isdisjoint(tokens):  # no negation: the plain sum, computed in C
        return sum(filter(None, map(LEXICON.get, tokens))) / len(tokens)
    score = 0
    previous = ""
    for token in tokens:
        value = LEXICON.get(token)
        if value is not None:
            score += -value if previous in _NEGATORS else value
        previous = token
    return score / len(tokens)


def sentiment_comparative(text: str) -> float:
    """The `comparative` of the npm `sentiment` package: lexicon score per token."""
    return _comparative(_tokens_of_blanked(_blank(text)))


def _sentence_comparatives(text: str) -> list[float]:
    """The comparative of each sentence (the whole text when there is none)."""
    spans = [match.span() for match in _SENTENCES.finditer(text)] or [(0, len(text))]
    blanked = _blank(text)
    if len(blanked) != len(text):  # lower() changed a length (a rare letter): one by one
        return [sentiment_comparative(text[start:end]) for start, end in spans]
    # Blanking is per character, so a sentence's blanked text is a slice of the whole's.
    return [_comparative(_tokens_of_blanked(blanked[start:end])) for start, end in spans]


def _stability(text: str) -> dict[str, float]:
    scores = _sentence_comparatives(text)
    # Plain left-to-right sums, as JavaScript's reduce does, to give the same floats.
    total = 0.0
    for value in scores:
        total += value
    average = total / len(scores)
    squares = 0.0
    for value in scores:
        squares += (value - average) ** 2
    variance = squares / len(scores)
    return {"score": max(0.0, 1 - variance), "avgSentiment": average, "sentimentVariance": variance}


def tone_analysis(output: str, reference_tone: str | None = None) -> dict[str, float]:
    """The tone scorer's preprocess result for an output text (see the module docstring)."""
    if not reference_tone:  # an empty reference means none, as in Mastra
        return _stability(output)
    response = sentiment_comparative(output)
    reference = sentiment_comparative(reference_tone)
    difference = abs(response - reference)
    return {
        "score": max(0.0, 1 - difference),
        "responseSentiment": response,
        "referenceSentiment": reference,
        "difference": difference,
    }


def create_tone_scorer(reference_tone: str | None = None, reference: Reference = "input") -> Scorer:
    """The tone scorer (id `tone-scorer`).

    Args:
        reference_tone: a text whose sentiment the output should match; without it the
            scorer measures how stable the output's sentiment is across its sentences.
        reference: "input" (Mastra's behaviour: the input is not read) or "ground_truth":
            each item's ground truth is then its reference tone (an item without one is not
            scorable); not together with `reference_tone`.
    """
    if reference_tone is not None and not isinstance(reference_tone, str):
        raise TypeError(
            f"reference_tone must be a string or None, got {type(reference_tone).__name__}"
        )
    mode = check_reference(reference, "create_tone_scorer")
    if mode == "ground_truth" and reference_tone:
        raise ScorerConfigError(
            id="PREBUILT_SCORER_INVALID_OPTION",
            message="create_tone_scorer: give either reference_tone (one tone for every item)"
            " or reference='ground_truth' (each item's ground truth), not both",
            details={"factory": "create_tone_scorer", "option": "reference"},
        )

    def preprocess(ctx: StepContext) -> dict[str, Any] | NotScorable:
        tone = reference_tone
        if mode == "ground_truth":
            text = reference_text(ctx.run, mode)
            if isinstance(text, NotScorable):
                return text
            tone = text
        return tone_analysis(join_texts(ctx.run.output, "output"), tone)

    return reference_scorer(
        SCORER_ID,
        "Tone Scorer",
        DESCRIPTION,
        mode,
        preprocess,
        _generate_score,
        "referenceSentiment is the ground truth's sentiment.",
    )


def _generate_score(ctx: StepContext) -> float:
    score: float = ctx.results.preprocess_step_result["score"]
    return score


CATALOG_ENTRY = reference_entry(
    SCORER_ID, "Tone", DESCRIPTION, create_tone_scorer, ToneOptions, COMPARES[SCORER_ID]
)
