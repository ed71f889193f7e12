"""Textual difference: character-level similarity ratio of input and output.
(docs/scorers.md, Textual Difference)

Mastra's behaviour, number for number. Everything happens in the preprocess step, which
returns `{ratio, confidence, changes, lengthDiff}`; the score is `ratio`, unrounded:

- `ratio`: 1 for equal texts (two empty ones included), 0 when only one is empty, else
  `2 * LCS / (len(a) + len(b))` with LCS the longest common character subsequence, which is
  rapidfuzz's normalised Indel similarity;
- `lengthDiff` = `|len(a) - len(b)| / max(len(a), len(b))` (0 for two empty texts) and
  `confidence` = `1 - lengthDiff`;
- `changes`: a word-level count (see `count_changes`).

With `reference="ground_truth"` the run's ground truth takes the input's place (a reason says
so), and an item without a ground truth is not scorable.

Lengths are counted as JavaScript counts them (UTF-16 code units). Releases of Mastra before
0.14.4 used difflib's ratio instead; the docs' example numbers come from that era.
"""

from __future__ import annotations

from typing import Any

from rapidfuzz.distance import Indel

from core.scorers._reference import (
    Reference,
    check_reference,
    reference_entry,
    reference_scorer,
    reference_text,
)
from core.scorers._text import JS_WHITESPACE_RUN, join_texts, js_trim, utf16_units
from core.scoring import NotScorable, Scorer, StepContext

__all__ = [
    "CATALOG_ENTRY",
    "DESCRIPTION",
    "SCORER_ID",
    "count_changes",
    "create_textual_difference_scorer",
    "textual_difference",
]

SCORER_ID = "textual-difference-scorer"
DESCRIPTION = (
    "Similarity ratio of input and output from their longest common character subsequence,"
    " with the number of changed words and the length difference."
)


def _words(text: str) -> list[str]:
    return [word for word in JS_WHITESPACE_RUN.split(text) if word]


def _greedy_matches(first: list[str], second: list[str]) -> int:
    """How many words of `first` find an equal, still unused word in `second` (order ignored)."""
    remaining: dict[str, int] = {}
    for word in second:
        remaining[word] = remaining.get(word, 0) + 1
    matches = 0
    for word in first:
        if remaining.get(word, 0) > 0:
            remaining[word] -= 1
            matches += 1
    return matches


def count_changes(first: str, second: str) -> int:
    """Mastra's word-level change count between two texts."""
    normal_a = js_trim(JS_WHITESPACE_RUN.sub(" ", first))
    normal_b = js_trim(JS_WHITESPACE_RUN.sub(" ", second))
    if normal_a == normal_b:
        if first == second:
            return 0
        # Only whitespace differs: at least one change, more if the word counts differ.
        return abs(len(_words(first)) - len(_words(second))) or 1
    words_a = normal_a.split(" ") if normal_a else []
    words_b = normal_b.split(" ") if normal_b else []
    if not words_a or not words_b:
        return len(words_a) + len(words_b)
    return max(len(words_a), len(words_b)) - _greedy_matches(words_a, words_b)


def _code_units(units: str | list[int]) -> list[int]:
    return [ord(char) for char in units] if isinstance(units, str) else units


def textual_difference(first: str, second: str) -> dict[str, Any]:
    """The preprocess result `{ratio, confidence, changes, lengthDiff}` for two texts."""
    units_a, units_b = utf16_units(first), utf16_units(second)
    len_a, len_b = len(units_a), len(units_b)
    if first == second:
        ratio = 1.0
    elif not len_a or not len_b:
        ratio = 0.0
    elif isinstance(units_a, str) and isinstance(units_b, str):
        ratio = Indel.normalized_similarity(units_a, units_b)
    else:  # an astral character on one side: compare both as UTF-16 code units
        ratio = Indel.normalized_similarity(_code_units(units_a), _code_units(units_b))
    longest = max(len_a, len_b)
    length_diff = abs(len_a - len_b) / longest if longest else 0.0
    return {
        "ratio": ratio,
        "confidence": 1 - length_diff,
        "changes": count_changes(first, second),
        "lengthDiff": length_diff,
    }


def _generate_score(ctx: StepContext) -> float:
    ratio: float = ctx.results.preprocess_step_result["ratio"]
    return ratio


def create_textual_difference_scorer(reference: Reference = "input") -> Scorer:
    """The textual-difference scorer (id `textual-difference-scorer`).

    Args:
        reference: "input" (Mastra's behaviour) to compare the output with the input, or
            "ground_truth" to compare it with the ground truth (an item without one is not
            scorable).
    """
    mode = check_reference(reference, "create_textual_difference_scorer")

    def preprocess(ctx: StepContext) -> dict[str, Any] | NotScorable:
        text = reference_text(ctx.run, mode)
        if isinstance(text, NotScorable):
            return text
        return textual_difference(text, join_texts(ctx.run.output))

    return reference_scorer(
        SCORER_ID,
        "Textual Difference Scorer",
        DESCRIPTION,
        mode,
        preprocess,
        _generate_score,
        "ratio, changes and lengthDiff compare the ground truth with the output.",
    )


CATALOG_ENTRY = reference_entry(
    SCORER_ID, "Textual Difference", DESCRIPTION, create_textual_difference_scorer
)
