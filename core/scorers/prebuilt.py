"""The prebuilt scorers' catalog (`PREBUILT`), collected from each scorer module's entry
(docs/scorers.md, Declaring a scorer (for maintainers))."""

from __future__ import annotations

from core.scorers import (
    answer_relevancy,
    answer_similarity,
    bias,
    checks,
    completeness,
    content_similarity,
    context_precision,
    context_recall,
    context_relevance,
    exact_match,
    faithfulness,
    hallucination,
    keyword_coverage,
    multi_turn_judge,
    noise_sensitivity,
    prompt_alignment,
    rubric,
    summarization,
    textual_difference,
    token_f1,
    tone,
    tool_call_accuracy_llm,
    toxicity,
    trajectory_accuracy_llm,
)
from core.scorers._registry import PrebuiltScorer, build_catalog

__all__ = ["PREBUILT"]

# The catalog's order (the dashboard lists scorers in it): code scorers, checks, then the
# LLM-judge scorers in the order of docs/scorers.md.
PREBUILT: dict[str, PrebuiltScorer] = build_catalog(
    [
        keyword_coverage.CATALOG_ENTRY,
        completeness.CATALOG_ENTRY,
        content_similarity.CATALOG_ENTRY,
        textual_difference.CATALOG_ENTRY,
        exact_match.CATALOG_ENTRY,
        token_f1.CATALOG_ENTRY,
        tone.CATALOG_ENTRY,
        *checks.CATALOG_ENTRIES,
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
)
"""Prebuilt scorer id -> catalog entry (name, description, options, `build`, ...)."""
