"""The `reference` option declared once (core/scorers/_reference.py): the two-step code
scorer it builds and the catalog entry it declares, for the four scorers that use them."""

from __future__ import annotations

import asyncio

import pytest

from core.scorers import completeness, content_similarity, textual_difference, tone
from core.scorers._reference import ReferenceOptions, reference_entry, reference_scorer
from core.scoring import StepContext


def _length(ctx: StepContext) -> dict[str, int]:
    return {"length": len(str(ctx.run.output))}


def _score(ctx: StepContext) -> float:
    return float(ctx.results.preprocess_step_result["length"])


@pytest.mark.parametrize("reference", ["input", "ground_truth"])
def test_the_scorer_names_its_reference_and_explains_only_the_ground_truth(
    reference: str,
) -> None:
    scorer = reference_scorer("len", "Length", "d", reference, _length, _score, "length: output")  # type: ignore[arg-type]
    steps = [step.name for step in scorer.steps]
    result = asyncio.run(scorer.run(input="q", output="four", ground_truth="g"))
    assert result.score == 4.0
    if reference == "input":
        assert scorer.name == "Length" and steps == ["preprocess", "generateScore"]
        assert result.reason is None
    else:
        assert scorer.name == "Length (vs ground truth)"
        assert steps == ["preprocess", "generateScore", "generateReason"]
        assert result.reason is not None and result.reason.endswith("length: output")


@pytest.mark.parametrize(
    ("module", "options"),
    [
        (completeness, ReferenceOptions),
        (content_similarity, content_similarity.ContentSimilarityOptions),
        (textual_difference, ReferenceOptions),
        (tone, tone.ToneOptions),
    ],
)
def test_the_four_entries_declare_the_reference_option_alike(module: object, options: type) -> None:
    entry = module.CATALOG_ENTRY  # type: ignore[attr-defined]
    assert not entry.calls_judge and entry.options_model is options
    assert "reference" in entry.options_model.model_fields
    own = entry.data_needs({"reference": "ground_truth"})
    assert own != entry.data_needs({"reference": "input"})


def test_an_entry_keeps_the_comparison_it_is_given() -> None:
    entry = reference_entry("x", "X", "d", lambda: None, compares="output vs nothing")  # type: ignore[arg-type,return-value]
    assert entry.comparison({}) == "output vs nothing"
