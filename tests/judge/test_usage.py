"""Usage normalisation (scorer-core.md §4.2 and §7 case 21), usage sums, and the conversion of
litellm/OpenAI usage objects."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from core import JudgeUsage
from core.judge.call import usage_from_litellm


def keys(usage: JudgeUsage) -> dict[str, int]:
    """The reported keys, in Mastra's camelCase."""
    return usage.model_dump(by_alias=True, exclude_none=True)


# ---- §7 case 21 ------------------------------------------------------------------------------


def test_normalize_none_is_empty() -> None:
    usage = JudgeUsage.normalize(None)
    assert keys(usage) == {}
    assert usage.is_empty()


def test_normalize_input_only_computes_total() -> None:
    assert keys(JudgeUsage.normalize({"inputTokens": 5})) == {"inputTokens": 5, "totalTokens": 5}


def test_normalize_legacy_prompt_and_completion_tokens_and_drops_raw() -> None:
    usage = JudgeUsage.normalize(
        {"promptTokens": 3, "completionTokens": 4, "raw": {"prompt_tokens": 3}}
    )
    assert keys(usage) == {"inputTokens": 3, "outputTokens": 4, "totalTokens": 7}


def test_normalize_keeps_numeric_extras_and_drops_non_numeric_ones() -> None:
    usage = JudgeUsage.normalize({"totalTokens": 9, "reasoningTokens": 2, "cachedInputTokens": "x"})
    assert keys(usage) == {"totalTokens": 9, "reasoningTokens": 2}


# ---- §4.2 rules ----------------------------------------------------------------------------


def test_normalize_null_input_tokens_falls_back_to_prompt_tokens() -> None:
    usage = JudgeUsage.normalize({"inputTokens": None, "promptTokens": 6, "outputTokens": 1})
    assert keys(usage) == {"inputTokens": 6, "outputTokens": 1, "totalTokens": 7}


def test_normalize_null_output_tokens_falls_back_to_completion_tokens() -> None:
    usage = JudgeUsage.normalize({"outputTokens": None, "completionTokens": 8})
    assert keys(usage) == {"outputTokens": 8, "totalTokens": 8}


def test_normalize_non_numeric_input_tokens_does_not_fall_back_to_prompt_tokens() -> None:
    usage = JudgeUsage.normalize({"inputTokens": "12", "promptTokens": 12, "outputTokens": 4})
    assert usage.input_tokens is None
    assert keys(usage) == {"outputTokens": 4, "totalTokens": 4}


def test_normalize_non_numeric_output_tokens_does_not_fall_back_to_completion_tokens() -> None:
    usage = JudgeUsage.normalize({"outputTokens": [], "completionTokens": 5, "inputTokens": 2})
    assert keys(usage) == {"inputTokens": 2, "totalTokens": 2}


@pytest.mark.parametrize(
    "key",
    [
        "inputTokens",
        "outputTokens",
        "totalTokens",
        "reasoningTokens",
        "cachedInputTokens",
        "cacheCreationInputTokens",
    ],
)
def test_normalize_drops_booleans(key: str) -> None:
    assert keys(JudgeUsage.normalize({key: True})) == {}
    assert keys(JudgeUsage.normalize({key: False})) == {}


def test_normalize_boolean_input_tokens_is_dropped_not_replaced() -> None:
    usage = JudgeUsage.normalize({"inputTokens": True, "promptTokens": 3, "outputTokens": 2})
    assert keys(usage) == {"outputTokens": 2, "totalTokens": 2}


def test_normalize_boolean_total_is_recomputed() -> None:
    usage = JudgeUsage.normalize({"inputTokens": 3, "outputTokens": 2, "totalTokens": False})
    assert keys(usage) == {"inputTokens": 3, "outputTokens": 2, "totalTokens": 5}


def test_normalize_reported_total_wins_over_the_sum() -> None:
    usage = JudgeUsage.normalize({"inputTokens": 1, "outputTokens": 2, "totalTokens": 10})
    assert keys(usage) == {"inputTokens": 1, "outputTokens": 2, "totalTokens": 10}


def test_normalize_total_is_absent_when_neither_side_is_numeric() -> None:
    usage = JudgeUsage.normalize({"reasoningTokens": 4, "inputTokens": "n/a"})
    assert keys(usage) == {"reasoningTokens": 4}


def test_normalize_copies_cache_creation_tokens() -> None:
    usage = JudgeUsage.normalize(
        {"inputTokens": 100, "cachedInputTokens": 60, "cacheCreationInputTokens": 40}
    )
    assert keys(usage) == {
        "inputTokens": 100,
        "totalTokens": 100,
        "cachedInputTokens": 60,
        "cacheCreationInputTokens": 40,
    }


def test_normalize_drops_unknown_keys() -> None:
    usage = JudgeUsage.normalize(
        {"inputTokens": 1, "providerMetadata": {"x": 1}, "prompt_tokens": 50, "cost": 0.1}
    )
    assert keys(usage) == {"inputTokens": 1, "totalTokens": 1}


@pytest.mark.parametrize("raw", ["10", 10, [("inputTokens", 1)], SimpleNamespace(inputTokens=1)])
def test_normalize_non_mapping_is_empty(raw: Any) -> None:
    assert keys(JudgeUsage.normalize(raw)) == {}


def test_normalize_integral_floats_become_ints() -> None:
    usage = JudgeUsage.normalize({"inputTokens": 5.0, "outputTokens": 2.0})
    assert keys(usage) == {"inputTokens": 5, "outputTokens": 2, "totalTokens": 7}
    assert all(type(value) is int for value in keys(usage).values())


# ---- JudgeUsage + JudgeUsage ---------------------------------------------------------------


def test_sum_of_two_attempts() -> None:
    one = JudgeUsage.normalize({"inputTokens": 10, "outputTokens": 20, "totalTokens": 30})
    assert keys(one + one) == {"inputTokens": 20, "outputTokens": 40, "totalTokens": 60}


def test_sum_adds_only_keys_defined_on_a_side() -> None:
    left = JudgeUsage(input_tokens=5, reasoning_tokens=1)
    right = JudgeUsage(output_tokens=3, reasoning_tokens=2, cached_input_tokens=4)
    assert keys(left + right) == {
        "inputTokens": 5,
        "outputTokens": 3,
        "reasoningTokens": 3,
        "cachedInputTokens": 4,
    }


def test_sum_with_empty_usage_is_identity() -> None:
    usage = JudgeUsage(input_tokens=7, total_tokens=7)
    assert usage + JudgeUsage() == usage
    assert JudgeUsage() + usage == usage
    assert (JudgeUsage() + JudgeUsage()).is_empty()


def test_sum_does_not_mutate_operands() -> None:
    left = JudgeUsage(input_tokens=1)
    right = JudgeUsage(input_tokens=2)
    assert (left + right).input_tokens == 3
    assert (left.input_tokens, right.input_tokens) == (1, 2)


def test_sum_with_a_non_usage_raises_type_error() -> None:
    with pytest.raises(TypeError):
        JudgeUsage(input_tokens=1) + {"inputTokens": 1}  # type: ignore[operator]


# ---- usage_from_litellm ------------------------------------------------------------------


FULL_OPENAI_USAGE: dict[str, Any] = {
    "prompt_tokens": 100,
    "completion_tokens": 30,
    "total_tokens": 130,
    "completion_tokens_details": {"reasoning_tokens": 12},
    "prompt_tokens_details": {"cached_tokens": 64},
    "cache_creation_input_tokens": 8,
}
FULL_EXPECTED = {
    "inputTokens": 100,
    "outputTokens": 30,
    "totalTokens": 130,
    "reasoningTokens": 12,
    "cachedInputTokens": 64,
    "cacheCreationInputTokens": 8,
}


def test_usage_from_litellm_none_is_empty() -> None:
    assert usage_from_litellm(None).is_empty()


def test_usage_from_litellm_on_a_dict() -> None:
    assert keys(usage_from_litellm(FULL_OPENAI_USAGE)) == FULL_EXPECTED


def test_usage_from_litellm_on_a_plain_dict_without_details() -> None:
    usage = usage_from_litellm(
        {"prompt_tokens": 4, "completion_tokens": 6, "completion_tokens_details": None}
    )
    assert keys(usage) == {"inputTokens": 4, "outputTokens": 6, "totalTokens": 10}


def test_usage_from_litellm_on_attribute_objects() -> None:
    usage = SimpleNamespace(
        prompt_tokens=100,
        completion_tokens=30,
        total_tokens=130,
        completion_tokens_details=SimpleNamespace(reasoning_tokens=12),
        prompt_tokens_details=SimpleNamespace(cached_tokens=64),
        cache_creation_input_tokens=8,
    )
    assert keys(usage_from_litellm(usage)) == FULL_EXPECTED


def test_usage_from_litellm_on_an_object_missing_attributes() -> None:
    usage = SimpleNamespace(prompt_tokens=3)
    assert keys(usage_from_litellm(usage)) == {"inputTokens": 3, "totalTokens": 3}


def test_usage_from_litellm_on_litellm_usage() -> None:
    import litellm

    usage = litellm.Usage(
        prompt_tokens=100,
        completion_tokens=30,
        total_tokens=130,
        completion_tokens_details={"reasoning_tokens": 12},
        prompt_tokens_details={"cached_tokens": 64},
        cache_creation_input_tokens=8,
    )
    assert keys(usage_from_litellm(usage)) == FULL_EXPECTED


def test_usage_from_litellm_drops_non_numeric_values() -> None:
    usage = usage_from_litellm(
        {"prompt_tokens": "many", "completion_tokens": 2, "total_tokens": None}
    )
    assert keys(usage) == {"outputTokens": 2, "totalTokens": 2}


def test_usage_from_litellm_on_pydantic_models_reads_fields_extras_and_properties() -> None:
    from pydantic import BaseModel, ConfigDict

    class ProxyUsage(BaseModel):  # a provider SDK's usage: fields, extras, a computed key
        model_config = ConfigDict(extra="allow")
        prompt_tokens: int
        completion_tokens: int | None = None

        @property
        def cache_creation_input_tokens(self) -> int:
            return 8

    usage = usage_from_litellm(ProxyUsage(prompt_tokens=100, completion_tokens=30, total_tokens=5))
    assert keys(usage) == {
        "inputTokens": 100,
        "outputTokens": 30,
        "totalTokens": 5,  # an extra key, as reported
        "cacheCreationInputTokens": 8,
    }

    class StrictUsage(BaseModel):  # no extras at all
        prompt_tokens: int

    assert keys(usage_from_litellm(StrictUsage(prompt_tokens=3))) == {
        "inputTokens": 3,
        "totalTokens": 3,
    }
