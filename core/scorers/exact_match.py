"""Exact match: does the output equal the ground truth once both are normalised?
(docs/scorers.md, Exact Match)

The SQuAD-style metric (Rajpurkar et al., 2016, "SQuAD: 100,000+ Questions for Machine
Comprehension of Text", the official evaluation script's `normalize_answer`). Both texts are
normalised in this order:

1. Unicode NFC, then lower case;
2. punctuation removed: every character other than a letter, a digit or whitespace (the
   underscore included) is deleted, not replaced by a space, as SQuAD does: "U.S." is "us"
   and "state-of-the-art" is "stateoftheart". SQuAD deletes ASCII
   punctuation only; this also deletes other scripts' punctuation and symbols (curly quotes,
   "…", "€"), which would otherwise make "“Paris”" differ from "Paris";
3. the English articles "a", "an", "the" removed as whole words;
4. whitespace runs collapsed to one space, ends trimmed.

Score 1.0 when the normalised output equals a normalised ground truth, else 0.0. The ground
truth is the run's `ground_truth`: a string, or a list of acceptable answers (the best match
counts); without one (None, blank, or only blank answers) the run is not scorable. The output
is read like every code scorer reads it (all message texts joined with `", "`).

Results: `preprocess_step_result` = `{"normalisedOutput", "normalisedGroundTruths"}`,
`analyze_step_result` = `{"matches": [bool per ground truth], "bestMatch": index or None}`,
and a one-line reason.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from core.scorers._reference import ground_truth_answers
from core.scorers._registry import PrebuiltScorer, ground_truth_needs
from core.scorers._text import join_texts
from core.scorers.metadata import COMPARES
from core.scoring import NotScorable, Scorer, StepContext, create_scorer

__all__ = [
    "CATALOG_ENTRY",
    "DESCRIPTION",
    "SCORER_ID",
    "create_exact_match_scorer",
    "exact_match",
    "normalise_answer",
]

SCORER_ID = "exact-match-scorer"
DESCRIPTION = (
    "1 when the output equals the ground truth (or one of a list of acceptable answers) after"
    " SQuAD normalisation: lower case, punctuation and articles a/an/the removed, whitespace"
    " collapsed; else 0."
)

# Anything but a letter, a digit or whitespace: "_" is a word character to `\w` but
# punctuation to SQuAD (string.punctuation), hence its own alternative.
_PUNCTUATION = re.compile(r"[^\w\s]|_")
_ARTICLES = re.compile(r"\b(?:a|an|the)\b")


def normalise_answer(text: str) -> str:
    """SQuAD's answer normalisation (see the module docstring)."""
    text = unicodedata.normalize("NFC", text).lower()
    text = _ARTICLES.sub(" ", _PUNCTUATION.sub("", text))
    return " ".join(text.split())


def exact_match(output: str, answers: list[str]) -> float:
    """1.0 when the output matches one of the answers after normalisation, else 0.0."""
    normalised = normalise_answer(output)
    return 1.0 if any(normalise_answer(answer) == normalised for answer in answers) else 0.0


def _preprocess(ctx: StepContext) -> dict[str, Any] | NotScorable:
    answers = ground_truth_answers(ctx.run.ground_truth)
    if isinstance(answers, NotScorable):
        return answers
    return {
        "normalisedOutput": normalise_answer(join_texts(ctx.run.output, "output")),
        "normalisedGroundTruths": [normalise_answer(answer) for answer in answers],
    }


def _analyze(ctx: StepContext) -> dict[str, Any]:
    texts = ctx.results.preprocess_step_result
    matches = [truth == texts["normalisedOutput"] for truth in texts["normalisedGroundTruths"]]
    return {"matches": matches, "bestMatch": matches.index(True) if any(matches) else None}


def _generate_score(ctx: StepContext) -> float:
    return 0.0 if ctx.results.analyze_step_result["bestMatch"] is None else 1.0


def _generate_reason(ctx: StepContext) -> str:
    texts = ctx.results.preprocess_step_result
    truths = texts["normalisedGroundTruths"]
    best = ctx.results.analyze_step_result["bestMatch"]
    answers = "the ground truth" if len(truths) == 1 else f"one of the {len(truths)} answers"
    if best is not None:
        which = "" if len(truths) == 1 else f" (answer {best + 1})"
        return f"The output equals {answers}{which} after normalisation: {truths[best]!r}."
    return (
        f"The output {texts['normalisedOutput']!r} (normalised) does not equal"
        f" {answers.replace('one of', 'any of')}: "
        + ", ".join(repr(truth) for truth in truths)
        + "."
    )


def create_exact_match_scorer() -> Scorer:
    """The exact-match scorer (id `exact-match-scorer`); it takes no options.

    Compares the output with the run's ground truth (a string or a list of acceptable
    answers); see the module docstring for the normalisation.
    """
    return (
        create_scorer(id=SCORER_ID, name="Exact Match Scorer", description=DESCRIPTION)
        .preprocess(_preprocess)
        .analyze(_analyze)
        .generate_score(_generate_score)
        .generate_reason(_generate_reason)
    )


CATALOG_ENTRY = PrebuiltScorer(
    SCORER_ID,
    "Exact Match",
    DESCRIPTION,
    create_exact_match_scorer,
    calls_judge=False,
    compares=COMPARES[SCORER_ID],
    needs=ground_truth_needs,
)
