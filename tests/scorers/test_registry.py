"""The one way to declare a prebuilt scorer: its options model is the only declaration of its
options; the catalog's options, the stand-in values, `build` and its errors, the catalog
record and the judge-call estimate are all derived from it."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import Annotated, Any, Literal

import pytest
from pydantic import Field
from pydantic_core import PydanticUndefined

from core import JudgeConfig, PromptStep, Scorer, ScorerConfigError, create_scorer
from core.scorers import PREBUILT, PrebuiltScorer, ScorerBuildError, ScorerOptions
from core.scorers._option_info import describe_options, placeholder_options, type_label
from core.scorers._options import OptionType

JUDGE = JudgeConfig(model="openai/any", api_key="test")


class _Group(ScorerOptions):
    """A nested options group."""

    low: float = 0.1
    high: int = 3


class _Everything(ScorerOptions):
    """One field of each kind forms know."""

    flag: bool = True
    """A switch."""
    count: int = 2
    """How many."""
    weight: float = Field(0.5, ge=0, le=1)
    """How much."""
    label: str | None = None
    """A free text."""
    mode: Literal["fast", "slow"] = "slow"
    """A choice."""
    words: list[str] | None = None
    """Several texts."""
    records: Annotated[Any, OptionType("list[dict]")] = None
    """JSON records."""
    pattern: Annotated[str | re.Pattern[str], OptionType("regex")] = "x"
    """A regular expression."""
    group: _Group = Field(default_factory=_Group)
    """Tuning."""
    hook: Callable[..., Any] | None = None
    """A function only Python callers can give."""
    needed: str
    """Required, declared last."""


def test_each_field_becomes_one_option_with_its_type_default_and_description() -> None:
    options = {option.name: option for option in describe_options(_Everything)}
    shown = {name: (o.type, o.default, o.required, o.choices) for name, o in options.items()}
    assert shown == {
        "flag": ("bool", True, False, None),
        "count": ("int", 2, False, None),
        "weight": ("float", 0.5, False, None),
        "label": ("str", None, False, None),
        "mode": ("choice", "slow", False, ("fast", "slow")),
        "words": ("list[str]", None, False, None),
        "records": ("list[dict]", None, False, None),
        "pattern": ("regex", "x", False, None),
        "group": ("dict", None, False, None),
        "hook": ("callable", None, False, None),
        "needed": ("str", None, True, None),
    }
    assert options["flag"].description == "A switch."
    assert options["group"].description == "Tuning. Defaults: low 0.1, high 3."
    assert [name for name, option in options.items() if option.code_only] == ["hook"]


def test_required_options_come_first_then_declaration_order() -> None:
    names = [option.name for option in describe_options(_Everything)]
    assert names[0] == "needed"
    assert names[1:] == [name for name in _Everything.model_fields if name != "needed"]


def test_an_annotation_forms_cannot_show_is_refused_when_described() -> None:
    class _Odd(ScorerOptions):
        when: complex = 1j

    with pytest.raises(TypeError, match="OptionType"):
        describe_options(_Odd)
    assert type_label(Annotated[complex, OptionType("str")]) == ("str", None)


def test_placeholders_fill_only_the_required_options() -> None:
    class _Needs(ScorerOptions):
        tools: Annotated[Any, OptionType("list[dict]"), Field(examples=[[{"id": "t"}]])]
        level: Literal["a", "b"]
        limit: int
        text: str
        optional: int = 4

    assert placeholder_options(_Needs) == {
        "tools": [{"id": "t"}],
        "level": "a",
        "limit": 1,
        "text": "x",
    }


# ---- every prebuilt entry: one declaration, no drift ----


@pytest.mark.parametrize("scorer_id", list(PREBUILT))
def test_catalog_options_are_the_models_fields(scorer_id: str) -> None:
    entry = PREBUILT[scorer_id]
    fields = entry.options_model.model_fields
    assert {option.name for option in entry.options} == set(fields)
    for option in entry.options:
        info = fields[option.name]
        assert option.required == info.is_required()
        if info.default is not PydanticUndefined:
            assert option.default == info.default
        assert option.description, f"{scorer_id}.{option.name} needs a docstring"
    listed = entry.catalog_entry().options
    assert [(o.name, o.type, o.code_only) for o in listed] == [
        (o.name, o.type, o.code_only) for o in entry.options
    ]


@pytest.mark.parametrize("scorer_id", list(PREBUILT))
def test_factory_keywords_match_the_model(scorer_id: str) -> None:
    """A factory's own keyword arguments are options of the model, with the same defaults; a
    factory without `**options` takes exactly the model's fields."""
    entry = PREBUILT[scorer_id]
    fields = entry.options_model.model_fields
    parameters = inspect.signature(entry.factory).parameters
    named = {
        name: parameter
        for name, parameter in parameters.items()
        if name not in ("model", "options")
        and parameter.kind not in (parameter.VAR_KEYWORD, parameter.VAR_POSITIONAL)
    }
    assert set(named) <= set(fields)
    if not any(p.kind is p.VAR_KEYWORD for p in parameters.values()):
        assert set(named) == set(fields)
    for name, parameter in named.items():
        if parameter.default is parameter.empty:
            assert fields[name].is_required(), name
        else:
            assert fields[name].default == parameter.default, name


@pytest.mark.parametrize("scorer_id", list(PREBUILT))
def test_every_entry_builds_and_knows_its_steps(scorer_id: str) -> None:
    entry = PREBUILT[scorer_id]
    record = entry.catalog_entry()
    assert record.id == scorer_id and record.steps
    assert record.steps[-1].name in ("generateScore", "generateReason")
    prompts = sum(1 for step in record.steps if step.kind == "prompt")
    assert entry.judge_calls_per_item() == (prompts if entry.calls_judge else 0)
    assert (prompts > 0) == entry.calls_judge


def test_options_given_by_a_python_caller_reach_the_factory() -> None:
    entry = PREBUILT["checks.calledTool"]
    scorer = entry.build({"name": "search", "times": "2", "id": None})  # None: not given
    result = scorer.run_sync(output="no tools")
    assert result.preprocess_step_result["expectedTimes"] == 2  # "2" validated to an int
    tone = PREBUILT["tone-scorer"].build({"referenceTone": "Great!"})  # Mastra's camelCase
    assert tone.run_sync(output="Great!").preprocess_step_result["referenceSentiment"] > 0


# ---- build errors name the scorer, the option and what is allowed ----


def test_an_unknown_option_lists_the_scorers_options() -> None:
    with pytest.raises(ScorerBuildError) as caught:
        PREBUILT["content-similarity-scorer"].build({"loud": True})
    assert str(caught.value) == (
        "Scorer 'content-similarity-scorer' has no option 'loud' "
        "(its options: reference, ignore_case, ignore_whitespace)"
    )
    assert caught.value.option == "loud" and caught.value.scorer_id == "content-similarity-scorer"
    with pytest.raises(ScorerBuildError, match=r"has no option 'x' \(its options: none\)"):
        PREBUILT["exact-match-scorer"].build({"x": 1})


def test_a_missing_required_option_is_named_with_what_it_is() -> None:
    with pytest.raises(ScorerBuildError) as caught:
        PREBUILT["checks.includes"].build({})
    assert str(caught.value) == (
        "Cannot build scorer 'checks.includes': option 'value' is required "
        "(Text the output must contain.)"
    )


@pytest.mark.parametrize(
    ("scorer_id", "options", "message"),
    [
        (
            "tone-scorer",
            {"reference": "expected"},
            "option 'reference': Input should be 'input' or 'ground_truth' (got str 'expected')",
        ),
        (
            "checks.maxToolCalls",
            {"limit": "many"},
            "option 'limit': Input should be a valid integer",
        ),
        (
            "answer-relevancy-scorer",
            {"uncertainty_weight": 2},
            "option 'uncertainty_weight': Input should be less than or equal to 1",
        ),
        (
            "context-relevance-scorer",
            {"penalties": {"unused_high_relevance_context": -1}},
            "option 'penalties.unused_high_relevance_context': Input should be greater than",
        ),
        (
            "faithfulness-scorer",
            {"context": []},
            "option 'context': Value error, must not be empty",
        ),
    ],
)
def test_a_bad_value_says_what_is_allowed(
    scorer_id: str, options: dict[str, Any], message: str
) -> None:
    with pytest.raises(ScorerBuildError) as caught:
        PREBUILT[scorer_id].build(options, JUDGE)
    assert str(caught.value).startswith(f"Cannot build scorer {scorer_id!r}: ")
    assert message in str(caught.value)
    assert caught.value.option == next(iter(options))


def test_a_judge_scorer_without_a_judge_says_to_choose_one() -> None:
    for judge in (None, JudgeConfig(model="", api_key="test")):
        with pytest.raises(ScorerBuildError, match="calls an LLM judge: choose a judge model"):
            PREBUILT["bias-scorer"].build({}, judge)
    assert PREBUILT["tone-scorer"].build({}, None).id == "tone-scorer"  # code: no judge needed


def test_a_factory_that_refuses_or_returns_something_else_is_reported() -> None:
    with pytest.raises(ScorerBuildError, match=r"Cannot build scorer 'checks.matches': .*"):
        PREBUILT["checks.matches"].build({"pattern": "("})  # re.compile refuses it

    def not_a_scorer() -> object:
        return "scorer"

    odd = PrebuiltScorer("odd", "Odd", "returns a string", not_a_scorer, False)  # type: ignore[arg-type]
    with pytest.raises(ScorerBuildError, match="The factory of 'odd' did not return a Scorer"):
        odd.build()


def test_build_errors_are_config_errors() -> None:
    with pytest.raises(ScorerConfigError) as caught:
        PREBUILT["checks.includes"].build({"nope": 1})
    assert isinstance(caught.value, ValueError)
    assert caught.value.to_dict()["details"] == {"scorerId": "checks.includes", "option": "nope"}


# ---- judge-call estimates ----


def _two_prompts(model: JudgeConfig, **options: Any) -> Scorer:
    return (
        create_scorer(id="two", description="two prompts", judge=model)
        .generate_score(PromptStep(description="s", create_prompt=lambda ctx: "s"))
        .generate_reason(PromptStep(description="r", create_prompt=lambda ctx: "r"))
    )


class _NeedsTopic(ScorerOptions):
    topic: str
    """What to judge."""


def test_judge_calls_per_item_count_prompt_steps() -> None:
    entry = PrebuiltScorer("two", "Two", "two prompts", _two_prompts, True, _NeedsTopic)
    assert entry.judge_calls_per_item() == 2  # the required topic is stood in for
    assert entry.judge_calls_per_item({"topic": "x"}) == 2
    assert entry.judge_calls_per_item({"topic": 3}) == 1  # cannot build yet: at least one
    assert PREBUILT["faithfulness-scorer"].judge_calls_per_item({"scale": 2}) == 3
    assert PREBUILT["multi-turn-judge-scorer"].judge_calls_per_item() == 1  # code reason
    assert PREBUILT["tone-scorer"].judge_calls_per_item() == 0
