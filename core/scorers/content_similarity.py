"""Content similarity: Dice similarity of character bigrams (docs/scorers.md, Content Similarity).

Mastra's behaviour, number for number: the joined input and output texts are optionally
lower-cased and whitespace-collapsed (`processedInput` / `processedOutput`), then compared with
the Sørensen–Dice coefficient on the multisets of their character bigrams, after **all**
whitespace is removed (so `ignore_whitespace` changes only the stored processed strings, never
the score). Equal strings score 1; a string shorter than 2 characters scores 0 otherwise.
Characters are counted as JavaScript counts them (UTF-16 code units).

With `reference="ground_truth"` the run's ground truth takes the input's place (it fills
`processedInput`; a reason says so), and an item without a ground truth is not scorable.

One departure: Mastra replaces its defaults with any options object it is given, so passing
only `{ignoreWhitespace: true}` silently turns case folding off. Python keyword arguments
keep the defaults of the options not given.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING

from core.scorers._reference import (
    Reference,
    ReferenceOptions,
    check_reference,
    reference_entry,
    reference_scorer,
    reference_text,
)
from core.scorers._text import collapse_js_whitespace, join_texts, remove_js_whitespace
from core.scoring import NotScorable, Scorer, StepContext

if TYPE_CHECKING:  # numpy is imported on first use: `import core.scorers` (the CLI's listing
    import numpy as np  # and export commands) starts without it

__all__ = [
    "CATALOG_ENTRY",
    "DESCRIPTION",
    "SCORER_ID",
    "ContentSimilarityOptions",
    "create_content_similarity_scorer",
    "dice_similarity",
]

SCORER_ID = "content-similarity-scorer"
DESCRIPTION = (
    "Character-level similarity of input and output (Dice coefficient on character bigrams),"
    " optionally ignoring case and whitespace."
)


def _sorted_bigrams(data: bytes) -> np.ndarray:
    """Every bigram of UTF-16 code units (JavaScript's characters) of UTF-16-LE `data`, each
    read as one 32-bit integer straight from the bytes (a view with a 2-byte stride), sorted."""
    import numpy as np

    return np.sort(np.ndarray((len(data) // 2 - 1,), "<u4", data, 0, (2,)))


@functools.cache
def _ranks() -> np.ndarray:
    """0, 1, 2, ... for the first 65,536 occurrences (made once)."""
    import numpy as np

    return np.arange(1 << 16)


def _shared_bigrams(first: np.ndarray, second: np.ndarray) -> int:
    """Size of the multiset intersection of two sorted bigram arrays.

    The k-th occurrence (from 0) of a bigram in `first` is shared when `second` holds that
    bigram more than k times, so the count needs no per-bigram Python step: a few vector
    operations (binary searches) whatever the text length.
    """
    import numpy as np

    ranks = _ranks()
    in_second = np.searchsorted(second, first, "right")
    in_second -= np.searchsorted(second, first, "left")
    ranks = np.arange(len(first)) if len(first) > len(ranks) else ranks[: len(first)]
    occurrence = ranks - np.searchsorted(first, first, "left")
    return int(np.count_nonzero(occurrence < in_second))


def dice_similarity(first: str, second: str) -> float:
    """Dice coefficient of character bigrams, whitespace ignored (string-similarity's rules)."""
    first = remove_js_whitespace(first)
    second = remove_js_whitespace(second)
    if first == second:
        return 1.0
    data_a = first.encode("utf-16-le", "surrogatepass")
    data_b = second.encode("utf-16-le", "surrogatepass")
    if len(data_a) < 4 or len(data_b) < 4:  # fewer than 2 UTF-16 units: no bigram
        return 0.0
    codes_a, codes_b = _sorted_bigrams(data_a), _sorted_bigrams(data_b)
    if len(codes_a) > len(codes_b):  # search the shorter array's bigrams in the longer one
        codes_a, codes_b = codes_b, codes_a
    # len(codes) is the string length - 1, so this is 2 * shared / (len_a + len_b - 2).
    return 2.0 * _shared_bigrams(codes_a, codes_b) / (len(codes_a) + len(codes_b))


class ContentSimilarityOptions(ReferenceOptions):
    """Options of the content-similarity scorer."""

    ignore_case: bool = True
    """Compare case-insensitively."""
    ignore_whitespace: bool = True
    """Collapse whitespace in the stored texts (the score ignores whitespace anyway)."""


def _process(text: str, ignore_case: bool, ignore_whitespace: bool) -> str:
    if ignore_case:
        text = text.lower()
    if ignore_whitespace:
        text = collapse_js_whitespace(text)
    return text


def create_content_similarity_scorer(
    ignore_case: bool = True, ignore_whitespace: bool = True, reference: Reference = "input"
) -> Scorer:
    """The content-similarity scorer (id `content-similarity-scorer`).

    Args:
        ignore_case: lower-case both texts before comparing.
        ignore_whitespace: collapse whitespace runs and trim (only the stored strings change).
        reference: "input" (Mastra's behaviour) to compare the output with the input, or
            "ground_truth" to compare it with the ground truth, which then fills
            `processedInput`; an item without a ground truth is not scorable.
    """
    mode = check_reference(reference, "create_content_similarity_scorer")

    def preprocess(ctx: StepContext) -> dict[str, str] | NotScorable:
        text = reference_text(ctx.run, mode)
        if isinstance(text, NotScorable):
            return text
        return {
            "processedInput": _process(text, ignore_case, ignore_whitespace),
            "processedOutput": _process(
                join_texts(ctx.run.output, "output"), ignore_case, ignore_whitespace
            ),
        }

    def generate_score(ctx: StepContext) -> float:
        result = ctx.results.preprocess_step_result
        return dice_similarity(result["processedInput"], result["processedOutput"])

    return reference_scorer(
        SCORER_ID,
        "Content Similarity Scorer",
        DESCRIPTION,
        mode,
        preprocess,
        generate_score,
        "processedInput holds the processed ground truth.",
    )


CATALOG_ENTRY = reference_entry(
    SCORER_ID,
    "Content Similarity",
    DESCRIPTION,
    create_content_similarity_scorer,
    ContentSimilarityOptions,
)
