"""Content similarity: Dice similarity of character bigrams (spec §2.3).

Mastra's behaviour, number for number: the joined input and output texts are optionally
lower-cased and whitespace-collapsed (`processedInput` / `processedOutput`), then compared with
the Sørensen–Dice coefficient on the multisets of their character bigrams, after **all**
whitespace is removed (so `ignore_whitespace` changes only the stored processed strings, never
the score). Equal strings score 1; a string shorter than 2 characters scores 0 otherwise.
Characters are counted as JavaScript counts them (UTF-16 code units).

One departure: Mastra replaces its defaults with any options object it is given, so passing
only `{ignoreWhitespace: true}` silently turns case folding off. Python keyword arguments
keep the defaults of the options not given.
"""

from __future__ import annotations

from collections import Counter
from itertools import pairwise
from typing import Any

from core.scorers._text import JS_WHITESPACE_RUN, join_texts, js_trim, utf16_units
from core.scoring import Scorer, StepContext, create_scorer

__all__ = ["DESCRIPTION", "SCORER_ID", "create_content_similarity_scorer", "dice_similarity"]

SCORER_ID = "content-similarity-scorer"
DESCRIPTION = (
    "Character-level similarity of input and output (Dice coefficient on character bigrams),"
    " optionally ignoring case and whitespace."
)


def _bigrams(text: str | list[int]) -> Counter[Any]:
    if isinstance(text, str):
        return Counter(text[i : i + 2] for i in range(len(text) - 1))
    return Counter(pairwise(text))


def dice_similarity(first: str, second: str) -> float:
    """Dice coefficient of character bigrams, whitespace ignored (string-similarity's rules)."""
    first = JS_WHITESPACE_RUN.sub("", first)
    second = JS_WHITESPACE_RUN.sub("", second)
    if first == second:
        return 1.0
    units_a, units_b = utf16_units(first), utf16_units(second)
    if len(units_a) < 2 or len(units_b) < 2:
        return 0.0
    if isinstance(units_a, str) != isinstance(units_b, str):  # compare like with like
        units_a = [ord(ch) for ch in units_a] if isinstance(units_a, str) else units_a
        units_b = [ord(ch) for ch in units_b] if isinstance(units_b, str) else units_b
    # Each bigram of the second string consumes one remaining occurrence in the first: that
    # is the multiset intersection, whose size is the sum of the per-bigram minimum counts.
    shared = (_bigrams(units_a) & _bigrams(units_b)).total()
    return 2.0 * shared / (len(units_a) + len(units_b) - 2)


def _process(text: str, ignore_case: bool, ignore_whitespace: bool) -> str:
    if ignore_case:
        text = text.lower()
    if ignore_whitespace:
        text = js_trim(JS_WHITESPACE_RUN.sub(" ", text))
    return text


def create_content_similarity_scorer(
    ignore_case: bool = True, ignore_whitespace: bool = True
) -> Scorer:
    """The content-similarity scorer (id `content-similarity-scorer`).

    Args:
        ignore_case: lower-case both texts before comparing.
        ignore_whitespace: collapse whitespace runs and trim (only the stored strings change).
    """

    def preprocess(ctx: StepContext) -> dict[str, str]:
        return {
            "processedInput": _process(
                join_texts(ctx.run.input, "input"), ignore_case, ignore_whitespace
            ),
            "processedOutput": _process(
                join_texts(ctx.run.output, "output"), ignore_case, ignore_whitespace
            ),
        }

    def generate_score(ctx: StepContext) -> float:
        result = ctx.results.preprocess_step_result
        return dice_similarity(result["processedInput"], result["processedOutput"])

    return (
        create_scorer(id=SCORER_ID, name="Content Similarity Scorer", description=DESCRIPTION)
        .preprocess(preprocess)
        .generate_score(generate_score)
    )
