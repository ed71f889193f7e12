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

import numpy as np

from core.scorers._text import JS_WHITESPACE_RUN, join_texts, js_trim
from core.scoring import Scorer, StepContext, create_scorer

__all__ = ["DESCRIPTION", "SCORER_ID", "create_content_similarity_scorer", "dice_similarity"]

SCORER_ID = "content-similarity-scorer"
DESCRIPTION = (
    "Character-level similarity of input and output (Dice coefficient on character bigrams),"
    " optionally ignoring case and whitespace."
)


def _bigram_codes(text: str) -> np.ndarray:
    """Each bigram of UTF-16 code units (JavaScript's characters) packed into one integer."""
    units = np.frombuffer(text.encode("utf-16-le", "surrogatepass"), dtype=np.uint16)
    units = units.astype(np.uint32)
    return (units[:-1] << 16) | units[1:]


def dice_similarity(first: str, second: str) -> float:
    """Dice coefficient of character bigrams, whitespace ignored (string-similarity's rules)."""
    first = JS_WHITESPACE_RUN.sub("", first)
    second = JS_WHITESPACE_RUN.sub("", second)
    if first == second:
        return 1.0
    codes_a, codes_b = _bigram_codes(first), _bigram_codes(second)
    if not len(codes_a) or not len(codes_b):  # a string of fewer than 2 characters
        return 0.0
    # Each bigram of the second string consumes one remaining occurrence in the first: the
    # multiset intersection, whose size is the sum over shared bigrams of the smaller count.
    # numpy does it in a few vector operations instead of one Python step per bigram.
    unique_a, counts_a = np.unique(codes_a, return_counts=True)
    unique_b, counts_b = np.unique(codes_b, return_counts=True)
    _, in_a, in_b = np.intersect1d(unique_a, unique_b, assume_unique=True, return_indices=True)
    shared = int(np.minimum(counts_a[in_a], counts_b[in_b]).sum())
    # len(codes) is the string length - 1, so this is 2 * shared / (len_a + len_b - 2).
    return 2.0 * shared / (len(codes_a) + len(codes_b))


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
