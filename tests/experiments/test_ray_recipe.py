"""What a Ray worker rebuilds (core/experiments/ray_recipe.py): the recipe holds no key, the
worker resolves it where the call is made and names the node when it cannot. No Ray needed."""

from __future__ import annotations

import pickle

import pytest

from core.experiments.ray_recipe import recipe_of
from core.judge import JudgeConfig
from core.judge.credentials import JudgeSetupError
from core.records import ScorerSpec

TYPED_KEY = "sk-typed-for-ray-0123456789abcdef"
SCORERS = [ScorerSpec(scorer_id="answer-relevancy-scorer"), ScorerSpec(scorer_id="tone-scorer")]


def test_the_recipe_the_tasks_carry_holds_no_key() -> None:
    judge = JudgeConfig(
        model="openai/fake-judge", api_base="http://127.0.0.1:9/v1", api_key=TYPED_KEY
    )
    recipe, typed = recipe_of(SCORERS, judge, TYPED_KEY)
    assert TYPED_KEY.encode() not in pickle.dumps(recipe)
    assert recipe.judge is not None and recipe.judge.api_key is None
    assert recipe.key is not None and recipe.key.source == "typed"
    assert typed is not None and typed.get_secret_value() == TYPED_KEY
    rebuilt = recipe.build(typed)
    assert [s.id for s in rebuilt] == ["answer-relevancy-scorer", "tone-scorer"]


def test_a_blank_typed_key_is_no_typed_key() -> None:
    judge = JudgeConfig(model="openai/fake-judge", api_base="http://127.0.0.1:9/v1")
    recipe, typed = recipe_of(SCORERS, judge, "   ")
    assert typed is None
    assert recipe.key is not None and recipe.key.source != "typed"


def test_a_worker_without_the_key_says_where_it_runs() -> None:
    judge = JudgeConfig(model="openai/fake-judge", api_base="http://127.0.0.1:9/v1")
    recipe, _ = recipe_of(SCORERS, judge, TYPED_KEY)
    with pytest.raises(JudgeSetupError, match=r"On the Ray worker .*typed .* missing.*scale\.md"):
        recipe.build(None)  # the typed key did not travel with the task


def test_the_prebuilt_catalog_travels_by_name_not_by_value() -> None:
    from core.scorers import PREBUILT

    recipe, _ = recipe_of(SCORERS, None, None, PREBUILT)
    assert recipe.catalog is None and recipe.key is None
