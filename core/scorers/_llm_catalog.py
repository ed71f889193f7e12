"""Catalog entries of the LLM-judge prebuilt scorers (spec prebuilt-scorers.md §4), in the
order of the spec; `core.scorers` adds them to `PREBUILT`.

Their options are the factories' keyword arguments; the judge itself is passed as `model=`
(a litellm model string or a `JudgeConfig`) and is not listed as an option.
"""

from __future__ import annotations

from core.scorers import (
    answer_relevancy,
    answer_similarity,
    bias,
    context_precision,
    context_recall,
    context_relevance,
    faithfulness,
    hallucination,
    multi_turn_judge,
    noise_sensitivity,
    prompt_alignment,
    rubric,
    summarization,
    tool_call_accuracy_llm,
    toxicity,
    trajectory_accuracy_llm,
)
from core.scorers._registry import PrebuiltScorer

__all__ = ["LLM_SCORERS"]

LLM_SCORERS: list[PrebuiltScorer] = [
    answer_relevancy.CATALOG_ENTRY,
    faithfulness.CATALOG_ENTRY,
    hallucination.CATALOG_ENTRY,
    bias.CATALOG_ENTRY,
    toxicity.CATALOG_ENTRY,
    context_precision.CATALOG_ENTRY,
    context_relevance.CATALOG_ENTRY,
    context_recall.CATALOG_ENTRY,
    prompt_alignment.CATALOG_ENTRY,
    noise_sensitivity.CATALOG_ENTRY,
    tool_call_accuracy_llm.CATALOG_ENTRY,
    answer_similarity.CATALOG_ENTRY,
    summarization.CATALOG_ENTRY,
    rubric.CATALOG_ENTRY,
    multi_turn_judge.CATALOG_ENTRY,
    trajectory_accuracy_llm.CATALOG_ENTRY,
]
"""One entry per LLM-judge scorer, all with `calls_judge=True`."""
