"""Token F1: word overlap of the output with the ground truth, as SQuAD scores answers.
(docs/scorers.md, Token F1)

Both texts are normalised as exact match does (`exact_match.normalise_answer`: lower case,
punctuation and the articles a/an/the removed, whitespace collapsed) and split on spaces.
With `common` the size of the multiset intersection of the two token lists (a token repeated
twice on both sides counts twice):

- precision = common / output tokens, recall = common / ground-truth tokens,
  F1 = 2 * precision * recall / (precision + recall);
- both token lists empty: 1.0 (nothing was expected and nothing was said); exactly one
  empty, or no common token: 0.0.

The ground truth is the run's `ground_truth`: a string, or a list of acceptable answers, in
which case the best F1 counts (SQuAD's max over gold answers). Without one (None, blank, or
only blank answers) the run is not scorable.

Results: `preprocess_step_result` = `{"normalisedOutput", "normalisedGroundTruths",
"outputTokenCount", "groundTruthTokenCounts"}`, `analyze_step_result` = `{"comparisons":
[{"commonTokens", "precision", "recall", "f1"} per ground truth], "bestMatch": index}`,
score = the best F1, unrounded, and a one-line reason.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from core.scorers._reference import ground_truth_answers
from core.scorers._registry import PrebuiltScorer, ground_truth_needs
from core.scorers._text import join_texts
from core.scorers.exact_match import normalise_answer
from core.scorers.metadata import COMPARES
from core.scoring import NotScorable, Scorer, StepContext, create_scorer

__all__ = ["CATALOG_ENTRY", "DESCRIPTION", "SCORER_ID", "create_token_f1_scorer", "token_f1"]

SCORER_ID = "token-f1-scorer"
DESCRIPTION = (
    "Word-overlap F1 of the output with the ground truth (best over a list of acceptable"
    " answers), on SQuAD-normalised tokens: precision and recall of the shared words."
)


def _compare(output_tokens: list[str], truth_tokens: list[str]) -> dict[str, float | int]:
    if not output_tokens or not truth_tokens:
        f1 = 1.0 if not output_tokens and not truth_tokens else 0.0
        return {"commonTokens": 0, "precision": f1, "recall": f1, "f1": f1}
    common = sum((Counter(output_tokens) & Counter(truth_tokens)).values())
    if not common:
        return {"commonTokens": 0, "precision": 0.0, "recall": 0.0, "f1": 0.0}
    precision = common / len(output_tokens)
    recall = common / len(truth_tokens)
    f1 = 2 * precision * recall / (precision + recall)
    return {"commonTokens": common, "precision": precision, "recall": recall, "f1": f1}


def token_f1(output: str, answers: list[str]) -> float:
    """The best token F1 of the output against the answers (see the module docstring)."""
    output_tokens = normalise_answer(output).split()
    return max(_compare(output_tokens, normalise_answer(a).split())["f1"] for a in answers)


def _preprocess(ctx: StepContext) -> dict[str, Any] | NotScorable:
    answers = ground_truth_answers(ctx.run.ground_truth)
    if isinstance(answers, NotScorable):
        return answers
    output = normalise_answer(join_texts(ctx.run.output, "output"))
    truths = [normalise_answer(answer) for answer in answers]
    return {
        "normalisedOutput": output,
        "normalisedGroundTruths": truths,
        "outputTokenCount": len(output.split()),
        "groundTruthTokenCounts": [len(truth.split()) for truth in truths],
    }


def _analyze(ctx: StepContext) -> dict[str, Any]:
    texts = ctx.results.preprocess_step_result
    output_tokens = texts["normalisedOutput"].split()
    comparisons = [_compare(output_tokens, t.split()) for t in texts["normalisedGroundTruths"]]
    # The first of equally good answers, so that the reason names a stable one.
    best = max(range(len(comparisons)), key=lambda index: (comparisons[index]["f1"], -index))
    return {"comparisons": comparisons, "bestMatch": best}


def _generate_score(ctx: StepContext) -> float:
    analysis = ctx.results.analyze_step_result
    f1: float = analysis["comparisons"][analysis["bestMatch"]]["f1"]
    return f1


def _generate_reason(ctx: StepContext) -> str:
    texts = ctx.results.preprocess_step_result
    analysis = ctx.results.analyze_step_result
    best = analysis["bestMatch"]
    comparison = analysis["comparisons"][best]
    count = len(texts["normalisedGroundTruths"])
    against = "the ground truth" if count == 1 else f"answer {best + 1} of {count} (the best)"
    return (
        f"{comparison['commonTokens']} shared token(s) between the output"
        f" ({texts['outputTokenCount']} tokens) and {against}"
        f" ({texts['groundTruthTokenCounts'][best]} tokens): precision"
        f" {comparison['precision']:.2f}, recall {comparison['recall']:.2f},"
        f" F1 {comparison['f1']:.2f}."
    )


def create_token_f1_scorer() -> Scorer:
    """The token-F1 scorer (id `token-f1-scorer`); it takes no options.

    Compares the output with the run's ground truth (a string or a list of acceptable
    answers); see the module docstring for the formula and the empty cases.
    """
    return (
        create_scorer(id=SCORER_ID, name="Token F1 Scorer", description=DESCRIPTION)
        .preprocess(_preprocess)
        .analyze(_analyze)
        .generate_score(_generate_score)
        .generate_reason(_generate_reason)
    )


CATALOG_ENTRY = PrebuiltScorer(
    SCORER_ID,
    "Token F1",
    DESCRIPTION,
    create_token_f1_scorer,
    calls_judge=False,
    compares=COMPARES[SCORER_ID],
    needs=ground_truth_needs,
)
