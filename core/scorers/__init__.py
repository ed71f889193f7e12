"""Prebuilt scorers: factories named after Mastra's, and the `PREBUILT` catalog.

Every prebuilt scorer reads plain strings as well as Mastra's message shapes (a message dict
with `content`, a list of them, or an agent input with `inputMessages`); see docs/scorers.md,
"Reading inputs and outputs".

    from core.scorers import create_keyword_coverage_scorer, PREBUILT, checks
    result = create_keyword_coverage_scorer().run_sync(input="...", output="...")
    scorer = PREBUILT["tone-scorer"].build({"reference_tone": "Thanks, that is great!"})
    passed = checks.includes("sunny").run_sync(output="It is sunny").score

Each scorer module declares its own `CATALOG_ENTRY` (the checks module: `CATALOG_ENTRIES`),
with the scorer's options declared once as a pydantic model (see `_registry.py`). This
package only collects them: to add a scorer, add its entry to `PREBUILT` below.
"""

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
from core.scorers._option_info import ScorerOption
from core.scorers._options import ScorerOptions
from core.scorers._registry import DataNeed, PrebuiltScorer, ScorerBuildError, build_catalog
from core.scorers._text import ScorerInputError
from core.scorers.answer_relevancy import create_answer_relevancy_scorer
from core.scorers.answer_similarity import create_answer_similarity_scorer
from core.scorers.bias import create_bias_scorer
from core.scorers.completeness import create_completeness_scorer
from core.scorers.content_similarity import create_content_similarity_scorer
from core.scorers.context_precision import create_context_precision_scorer
from core.scorers.context_recall import create_context_recall_scorer
from core.scorers.context_relevance import create_context_relevance_scorer_llm
from core.scorers.exact_match import create_exact_match_scorer
from core.scorers.faithfulness import create_faithfulness_scorer
from core.scorers.hallucination import create_hallucination_scorer
from core.scorers.keyword_coverage import create_keyword_coverage_scorer
from core.scorers.multi_turn_judge import create_multi_turn_judge_scorer
from core.scorers.noise_sensitivity import create_noise_sensitivity_scorer_llm
from core.scorers.prompt_alignment import create_prompt_alignment_scorer_llm
from core.scorers.rubric import create_rubric_scorer
from core.scorers.summarization import create_summarization_scorer
from core.scorers.textual_difference import create_textual_difference_scorer
from core.scorers.token_f1 import create_token_f1_scorer
from core.scorers.tone import create_tone_scorer
from core.scorers.tool_call_accuracy_llm import create_tool_call_accuracy_scorer_llm
from core.scorers.toxicity import create_toxicity_scorer
from core.scorers.trajectory_accuracy_llm import create_trajectory_accuracy_scorer_llm

__all__ = [
    "PREBUILT",
    "DataNeed",
    "PrebuiltScorer",
    "ScorerBuildError",
    "ScorerInputError",
    "ScorerOption",
    "ScorerOptions",
    "checks",
    "create_answer_relevancy_scorer",
    "create_answer_similarity_scorer",
    "create_bias_scorer",
    "create_completeness_scorer",
    "create_content_similarity_scorer",
    "create_context_precision_scorer",
    "create_context_recall_scorer",
    "create_context_relevance_scorer_llm",
    "create_exact_match_scorer",
    "create_faithfulness_scorer",
    "create_hallucination_scorer",
    "create_keyword_coverage_scorer",
    "create_multi_turn_judge_scorer",
    "create_noise_sensitivity_scorer_llm",
    "create_prompt_alignment_scorer_llm",
    "create_rubric_scorer",
    "create_summarization_scorer",
    "create_textual_difference_scorer",
    "create_token_f1_scorer",
    "create_tone_scorer",
    "create_tool_call_accuracy_scorer_llm",
    "create_toxicity_scorer",
    "create_trajectory_accuracy_scorer_llm",
]

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
