"""Prebuilt scorers: factories named after Mastra's, and the `PREBUILT` catalog.

Every prebuilt scorer reads plain strings as well as Mastra's message shapes (a message dict
with `content`, a list of them, or an agent input with `inputMessages`); see docs/scorers.md,
"Reading inputs and outputs".

    from core.scorers import create_keyword_coverage_scorer, PREBUILT, checks
    result = create_keyword_coverage_scorer().run_sync(input="...", output="...")
    scorer = PREBUILT["tone-scorer"].build({"reference_tone": "Thanks, that is great!"})
    passed = checks.includes("sunny").run_sync(output="It is sunny").score

Each scorer module declares its own `CATALOG_ENTRY` (the checks module: `CATALOG_ENTRIES`),
with the scorer's options declared once as a pydantic model (see `_registry.py`) and what it
compares read from `metadata.py`. `prebuilt.py` collects them: to add a scorer, add its entry to
`PREBUILT` there and what it compares to `metadata.COMPARES`. The names here are imported on
first use (PEP 562), so reading `core.scorers.metadata` imports no scorer module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core._lazy import lazy_import

if TYPE_CHECKING:
    from core.scorers import checks
    from core.scorers._option_info import ScorerOption
    from core.scorers._options import ScorerOptions
    from core.scorers._registry import DataNeed, PrebuiltScorer, ScorerBuildError
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
    from core.scorers.prebuilt import PREBUILT
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

_HOMES = {
    "ScorerOption": "core.scorers._option_info",
    "ScorerOptions": "core.scorers._options",
    "DataNeed": "core.scorers._registry",
    "PrebuiltScorer": "core.scorers._registry",
    "ScorerBuildError": "core.scorers._registry",
    "ScorerInputError": "core.scorers._text",
    "create_answer_relevancy_scorer": "core.scorers.answer_relevancy",
    "create_answer_similarity_scorer": "core.scorers.answer_similarity",
    "create_bias_scorer": "core.scorers.bias",
    "create_completeness_scorer": "core.scorers.completeness",
    "create_content_similarity_scorer": "core.scorers.content_similarity",
    "create_context_precision_scorer": "core.scorers.context_precision",
    "create_context_recall_scorer": "core.scorers.context_recall",
    "create_context_relevance_scorer_llm": "core.scorers.context_relevance",
    "create_exact_match_scorer": "core.scorers.exact_match",
    "create_faithfulness_scorer": "core.scorers.faithfulness",
    "create_hallucination_scorer": "core.scorers.hallucination",
    "create_keyword_coverage_scorer": "core.scorers.keyword_coverage",
    "create_multi_turn_judge_scorer": "core.scorers.multi_turn_judge",
    "create_noise_sensitivity_scorer_llm": "core.scorers.noise_sensitivity",
    "create_prompt_alignment_scorer_llm": "core.scorers.prompt_alignment",
    "create_rubric_scorer": "core.scorers.rubric",
    "create_summarization_scorer": "core.scorers.summarization",
    "create_textual_difference_scorer": "core.scorers.textual_difference",
    "create_token_f1_scorer": "core.scorers.token_f1",
    "create_tone_scorer": "core.scorers.tone",
    "create_tool_call_accuracy_scorer_llm": "core.scorers.tool_call_accuracy_llm",
    "create_toxicity_scorer": "core.scorers.toxicity",
    "create_trajectory_accuracy_scorer_llm": "core.scorers.trajectory_accuracy_llm",
    "PREBUILT": "core.scorers.prebuilt",
}
"""Where each public name lives (the submodules, such as `checks`, are found as submodules)."""


def __getattr__(name: str) -> Any:
    return lazy_import(__name__, _HOMES, globals(), name)
