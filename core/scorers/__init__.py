"""Prebuilt scorers: factories named after Mastra's, and the `PREBUILT` catalog.

Every prebuilt scorer reads plain strings as well as Mastra's message shapes (a message dict
with `content`, a list of them, or an agent input with `inputMessages`), per spec §1.3.

    from core.scorers import create_keyword_coverage_scorer, PREBUILT, checks
    result = create_keyword_coverage_scorer().run_sync(input="...", output="...")
    scorer = PREBUILT["tone-scorer"].factory(reference_tone="Thanks, that is great!")
    passed = checks.includes("sunny").run_sync(output="It is sunny").score

To add scorers to the catalog (the LLM-judge ones, for instance), append `PrebuiltScorer`
entries to `_ENTRIES` below.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.scorers import checks, exact_match, token_f1
from core.scorers._llm_catalog import LLM_SCORERS
from core.scorers._registry import (
    DataNeed,
    PrebuiltScorer,
    ScorerOption,
    build_catalog,
    ground_truth_needs,
    reference_comparison,
    reference_needs,
    reference_option,
)
from core.scorers._text import ScorerInputError
from core.scorers.answer_relevancy import create_answer_relevancy_scorer
from core.scorers.answer_similarity import create_answer_similarity_scorer
from core.scorers.bias import create_bias_scorer
from core.scorers.completeness import DESCRIPTION as _COMPLETENESS
from core.scorers.completeness import create_completeness_scorer
from core.scorers.content_similarity import DESCRIPTION as _CONTENT_SIMILARITY
from core.scorers.content_similarity import create_content_similarity_scorer
from core.scorers.context_precision import create_context_precision_scorer
from core.scorers.context_recall import create_context_recall_scorer
from core.scorers.context_relevance import create_context_relevance_scorer_llm
from core.scorers.exact_match import create_exact_match_scorer
from core.scorers.faithfulness import create_faithfulness_scorer
from core.scorers.hallucination import create_hallucination_scorer
from core.scorers.keyword_coverage import DESCRIPTION as _KEYWORD_COVERAGE
from core.scorers.keyword_coverage import create_keyword_coverage_scorer
from core.scorers.multi_turn_judge import create_multi_turn_judge_scorer
from core.scorers.noise_sensitivity import create_noise_sensitivity_scorer_llm
from core.scorers.prompt_alignment import create_prompt_alignment_scorer_llm
from core.scorers.rubric import create_rubric_scorer
from core.scorers.summarization import create_summarization_scorer
from core.scorers.textual_difference import DESCRIPTION as _TEXTUAL_DIFFERENCE
from core.scorers.textual_difference import create_textual_difference_scorer
from core.scorers.token_f1 import create_token_f1_scorer
from core.scorers.tone import DESCRIPTION as _TONE
from core.scorers.tone import create_tone_scorer
from core.scorers.tool_call_accuracy_llm import create_tool_call_accuracy_scorer_llm
from core.scorers.toxicity import create_toxicity_scorer
from core.scorers.trajectory_accuracy_llm import create_trajectory_accuracy_scorer_llm

__all__ = [
    "PREBUILT",
    "DataNeed",
    "PrebuiltScorer",
    "ScorerInputError",
    "ScorerOption",
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

_IGNORE_CASE = ScorerOption("ignore_case", "bool", "Compare case-insensitively.", default=True)
_CHECK_ID = ScorerOption(
    "id", "str", "Scorer id, to run several checks of one kind side by side.", default=None
)


def _target(description: str) -> ScorerOption:
    return ScorerOption("value", "str", description, required=True)


def _tone_comparison(options: Mapping[str, Any]) -> str:
    if options.get("reference_tone"):
        return "output tone vs the given reference tone"
    if options.get("reference") == "ground_truth":
        return "output tone vs ground truth tone"
    return "output tone stability (output only)"


_CODE_SCORERS = [
    PrebuiltScorer(
        "keyword-coverage-scorer",
        "Keyword Coverage",
        _KEYWORD_COVERAGE,
        create_keyword_coverage_scorer,
        calls_judge=False,
        compares=reference_comparison,
        needs=reference_needs,
        options=(reference_option(),),
    ),
    PrebuiltScorer(
        "completeness-scorer",
        "Completeness",
        _COMPLETENESS,
        create_completeness_scorer,
        calls_judge=False,
        compares=reference_comparison,
        needs=reference_needs,
        options=(reference_option(),),
    ),
    PrebuiltScorer(
        "content-similarity-scorer",
        "Content Similarity",
        _CONTENT_SIMILARITY,
        create_content_similarity_scorer,
        calls_judge=False,
        compares=reference_comparison,
        needs=reference_needs,
        options=(
            reference_option(),
            _IGNORE_CASE,
            ScorerOption(
                "ignore_whitespace",
                "bool",
                "Collapse whitespace in the stored texts (the score ignores whitespace anyway).",
                default=True,
            ),
        ),
    ),
    PrebuiltScorer(
        "textual-difference-scorer",
        "Textual Difference",
        _TEXTUAL_DIFFERENCE,
        create_textual_difference_scorer,
        calls_judge=False,
        compares=reference_comparison,
        needs=reference_needs,
        options=(reference_option(),),
    ),
    PrebuiltScorer(
        exact_match.SCORER_ID,
        "Exact Match",
        exact_match.DESCRIPTION,
        create_exact_match_scorer,
        calls_judge=False,
        compares="output vs ground truth",
        needs=ground_truth_needs,
    ),
    PrebuiltScorer(
        token_f1.SCORER_ID,
        "Token F1",
        token_f1.DESCRIPTION,
        create_token_f1_scorer,
        calls_judge=False,
        compares="output vs ground truth",
        needs=ground_truth_needs,
    ),
    PrebuiltScorer(
        "tone-scorer",
        "Tone",
        _TONE,
        create_tone_scorer,
        calls_judge=False,
        compares=_tone_comparison,
        needs=reference_needs,
        options=(
            reference_option(),
            ScorerOption(
                "reference_tone",
                "str",
                "A text whose sentiment the output should match; without it, the score is"
                " how stable the output's sentiment is across sentences.",
                default=None,
            ),
        ),
    ),
]

_CHECKS = [
    PrebuiltScorer(
        "checks.includes",
        "Check: includes",
        "1 when the output contains the text, else 0.",
        checks.includes,
        calls_judge=False,
        compares="output vs the given text",
        options=(_target("Text the output must contain."), _IGNORE_CASE, _CHECK_ID),
    ),
    PrebuiltScorer(
        "checks.excludes",
        "Check: excludes",
        "1 when the output does not contain the text, else 0.",
        checks.excludes,
        calls_judge=False,
        compares="output vs the given text",
        options=(_target("Text the output must not contain."), _IGNORE_CASE, _CHECK_ID),
    ),
    PrebuiltScorer(
        "checks.equals",
        "Check: equals",
        "1 when the assistant's answer equals the text, else 0.",
        checks.equals,
        calls_judge=False,
        compares="output vs the given text",
        options=(_target("The exact expected answer."), _IGNORE_CASE, _CHECK_ID),
    ),
    PrebuiltScorer(
        "checks.matches",
        "Check: matches",
        "1 when the assistant's answer matches the regular expression, else 0.",
        checks.matches,
        calls_judge=False,
        compares="output vs the given pattern",
        options=(
            ScorerOption("pattern", "regex", "A Python regular expression.", required=True),
            ScorerOption("exact", "bool", "The whole answer must match.", default=False),
            _CHECK_ID,
        ),
    ),
    PrebuiltScorer(
        "checks.similarity",
        "Check: similarity",
        "Character similarity (Dice) of the assistant's answer to the text; pass/fail with a"
        " threshold.",
        checks.similarity,
        calls_judge=False,
        compares="output vs the given text",
        options=(
            _target("The text to compare with."),
            _IGNORE_CASE,
            ScorerOption(
                "threshold", "float", "Score 1 at or above it, else 0; raw score when unset."
            ),
            _CHECK_ID,
        ),
    ),
    PrebuiltScorer(
        "checks.calledTool",
        "Check: called tool",
        "1 when the tool was called at least the given number of times, else 0.",
        checks.called_tool,
        calls_judge=False,
        compares="the output's tool calls",
        options=(
            ScorerOption("name", "str", "The tool name.", required=True),
            ScorerOption("times", "int", "Minimum number of calls.", default=1),
            _CHECK_ID,
        ),
    ),
    PrebuiltScorer(
        "checks.didNotCall",
        "Check: did not call",
        "1 when the tool was never called, else 0.",
        checks.did_not_call,
        calls_judge=False,
        compares="the output's tool calls",
        options=(ScorerOption("name", "str", "The tool name.", required=True), _CHECK_ID),
    ),
    PrebuiltScorer(
        "checks.toolOrder",
        "Check: tool order",
        "1 when the tools were called in the given order (others may come between), else 0.",
        checks.tool_order,
        calls_judge=False,
        compares="the output's tool calls",
        options=(
            ScorerOption("names", "list[str]", "Tool names in expected order.", required=True),
            _CHECK_ID,
        ),
    ),
    PrebuiltScorer(
        "checks.maxToolCalls",
        "Check: max tool calls",
        "1 when there were at most the given number of tool calls, else 0.",
        checks.max_tool_calls,
        calls_judge=False,
        compares="the output's tool calls",
        options=(
            ScorerOption("limit", "int", "Maximum number of tool calls.", required=True),
            _CHECK_ID,
        ),
    ),
    PrebuiltScorer(
        "checks.usedNoTools",
        "Check: used no tools",
        "1 when no tool was called, else 0.",
        checks.used_no_tools,
        calls_judge=False,
        compares="the output's tool calls",
        options=(_CHECK_ID,),
    ),
    PrebuiltScorer(
        "checks.noToolErrors",
        "Check: no tool errors",
        "1 when no tool invocation failed, else 0.",
        checks.no_tool_errors,
        calls_judge=False,
        compares="the output's tool calls",
        options=(_CHECK_ID,),
    ),
]

# The catalog. Other scorer families register by adding their entries to this list.
_ENTRIES: list[PrebuiltScorer] = [*_CODE_SCORERS, *_CHECKS, *LLM_SCORERS]

PREBUILT: dict[str, PrebuiltScorer] = build_catalog(_ENTRIES)
"""Prebuilt scorer id -> catalog entry (factory, name, description, calls_judge, options)."""
