"""Tone: sentiment agreement with a reference tone, or sentiment stability (spec §2.5).

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
"""

from __future__ import annotations

import re
from importlib import resources
from typing import Any

from core.scorers._data import data_lines
from core.scorers._text import JS_WHITESPACE, join_texts, js_trim
from core.scoring import Scorer, StepContext, create_scorer

__all__ = [
    "DESCRIPTION",
    "LEXICON",
    "SCORER_ID",
    "create_tone_scorer",
    "sentiment_comparative",
    "tone_analysis",
]

SCORER_ID = "tone-scorer"
DESCRIPTION = (
    "Sentiment of the output (AFINN-165 lexicon): agreement with a reference tone when one is"
    " given, else how stable the sentiment is from sentence to sentence."
)


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


def sentiment_comparative(text: str) -> float:
    """The `comparative` of the npm `sentiment` package: lexicon score per token."""
    tokens = js_trim(_SPACE_RUNS.sub(" ", text.lower().translate(_PUNCTUATION))).split(" ")
    score = 0
    previous = ""
    for token in tokens:
        value = LEXICON.get(token)
        if value is not None:
            score += -value if previous in _NEGATORS else value
        previous = token
    return score / len(tokens)


def _stability(text: str) -> dict[str, float]:
    sentences = _SENTENCES.findall(text) or [text]
    scores = [sentiment_comparative(sentence) for sentence in sentences]
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


def create_tone_scorer(reference_tone: str | None = None) -> Scorer:
    """The tone scorer (id `tone-scorer`).

    Args:
        reference_tone: a text whose sentiment the output should match; without it the
            scorer measures how stable the output's sentiment is across its sentences.
    """
    if reference_tone is not None and not isinstance(reference_tone, str):
        raise TypeError(
            f"reference_tone must be a string or None, got {type(reference_tone).__name__}"
        )

    def preprocess(ctx: StepContext) -> dict[str, Any]:
        return tone_analysis(join_texts(ctx.run.output, "output"), reference_tone)

    return (
        create_scorer(id=SCORER_ID, name="Tone Scorer", description=DESCRIPTION)
        .preprocess(preprocess)
        .generate_score(_generate_score)
    )


def _generate_score(ctx: StepContext) -> float:
    return ctx.results.preprocess_step_result["score"]
