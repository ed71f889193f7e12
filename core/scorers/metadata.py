"""What each prebuilt scorer compares, in words, without importing the scorers: the one table the
scorer modules declare their catalog entries from (`COMPARES`) and what an experiment's
scorers compared (`comparisons`), which `scorelab export` shows in the "Compares" column
without building the catalog (issue 21: the CLI answers in under a second).

Plain Python, importing nothing of the core (core/scorers/__init__.py loads the scorer modules
only when one of its names is used). A scorer not in the table (one a user wrote) compares
nothing known: it gets no comparison, as from the catalog. See docs/scorers.md, Declaring a
scorer (for maintainers).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.records import ExperimentInfo, ScorerSpec

__all__ = [
    "COMPARES",
    "GROUND_TRUTH",
    "Compares",
    "comparison",
    "comparisons",
    "reference_comparison",
    "tone_comparison",
    "worded",
]

GROUND_TRUTH = "ground_truth"
"""The `DataNeed.column` of the dataset's mapped ground-truth column (other needs name a
metadata column, which reaches the scorers in each item's request context)."""

Compares = str | Callable[[Mapping[str, Any]], str]
"""What a score compares, in words ("output vs ground truth"), or a function of the scorer's
options that says it."""


def reference_comparison(options: Mapping[str, Any]) -> str:
    """The words for a two-text code scorer's `reference` option."""
    if options.get("reference") == GROUND_TRUTH:
        return "output vs ground truth"
    return "output vs input"


def tone_comparison(options: Mapping[str, Any]) -> str:
    """The tone scorer's words: a given reference tone, the ground truth's, or stability."""
    if options.get("reference_tone"):
        return "output tone vs the given reference tone"
    if options.get("reference") == GROUND_TRUTH:
        return "output tone vs ground truth tone"
    return "output tone stability (output only)"


_GIVEN_TEXT = "output vs the given text"
_TOOL_CALLS = "the output's tool calls"

COMPARES: Mapping[str, Compares] = {
    "keyword-coverage-scorer": reference_comparison,
    "completeness-scorer": reference_comparison,
    "content-similarity-scorer": reference_comparison,
    "textual-difference-scorer": reference_comparison,
    "exact-match-scorer": "output vs ground truth",
    "token-f1-scorer": "output vs ground truth",
    "tone-scorer": tone_comparison,
    "checks.includes": _GIVEN_TEXT,
    "checks.excludes": _GIVEN_TEXT,
    "checks.equals": _GIVEN_TEXT,
    "checks.matches": "output vs the given pattern",
    "checks.similarity": _GIVEN_TEXT,
    "checks.calledTool": _TOOL_CALLS,
    "checks.didNotCall": _TOOL_CALLS,
    "checks.toolOrder": _TOOL_CALLS,
    "checks.maxToolCalls": _TOOL_CALLS,
    "checks.usedNoTools": _TOOL_CALLS,
    "checks.noToolErrors": _TOOL_CALLS,
    "answer-relevancy-scorer": "output vs input",
    "faithfulness-scorer": "output vs context",
    "hallucination-scorer": "output vs context",
    "bias-scorer": "output only",
    "toxicity-scorer": "output only",
    "context-precision-scorer": "context vs input and output",
    "context-relevance-scorer": "context vs input",
    "context-recall-scorer": "ground truth vs context",
    "prompt-alignment-scorer": "output vs prompt",
    "noise-sensitivity-scorer": "output vs baseline response on a noisy query",
    "llm-tool-call-accuracy-scorer": "tool calls vs input",
    "answer-similarity-scorer": "output vs ground truth",
    "summarization-scorer": "summary (output) vs source (input)",
    "rubric-scorer": "output vs rubric",
    "multi-turn-judge-scorer": "assistant turns vs criterion",
    "llm-trajectory-accuracy-scorer": "trajectory vs expected trajectory",
}
"""Prebuilt scorer id -> what it compares; each scorer module's catalog entry reads its own."""


def worded(compares: Compares, options: Mapping[str, Any] | None = None) -> str:
    """`compares` in words for these options."""
    return compares if isinstance(compares, str) else compares(options or {})


def comparison(spec: ScorerSpec) -> str | None:
    """What a chosen prebuilt scorer compares with its options; None for any other id."""
    compares = COMPARES.get(spec.scorer_id)
    return None if compares is None else worded(compares, spec.options)


def comparisons(
    info: ExperimentInfo, compare: Callable[[ScorerSpec], str | None] = comparison
) -> dict[str, str]:
    """What each scorer of an experiment compared, by scorer id (`compare` says it of a chosen
    scorer, None when unknown: by default from `COMPARES`); empty for an import whose file did
    not list the scorers behind the ids."""
    specs: Sequence[ScorerSpec] = info.scorers
    if len(specs) != len(info.scorer_ids):
        return {}
    found = {}
    for spec, scorer_id in zip(specs, info.scorer_ids, strict=True):
        said = compare(spec)
        if said is not None:
            found[scorer_id] = said
    return found
