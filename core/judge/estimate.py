"""Judge cost before a run: the real prompts of a sample, counted and priced by litellm.

`recording()` switches the judge calls of its context to a dry run: no request is sent, each
call's litellm arguments are recorded and the step gets the shortest answer its schema accepts
(so the scorer's later steps build their prompts as they would). `cost_estimate` counts the
recorded prompts with litellm's token counter and prices them with litellm's price table
(docs/core.md, Cost estimate and spend cap). Everything it returns is an estimate.
"""

from __future__ import annotations

import contextvars
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

from core.judge._litellm import litellm
from core.judge.pricing import unit_prices
from core.records import CostEstimate

__all__ = [
    "HIGH_ANSWER_TOKENS",
    "TYPICAL_TEXT_ANSWER_TOKENS",
    "DryRequest",
    "Recorder",
    "active_recorder",
    "cost_estimate",
    "recording",
    "shortest_answer",
]

TYPICAL_TEXT_ANSWER_TOKENS = 120
"""A typical free-text judge answer (a reason): a few sentences."""
TYPICAL_JSON_ANSWER_TOKENS = 60
"""A typical structured answer is at least this long (a verdict with a short explanation)."""
HIGH_ANSWER_TOKENS = 512
"""The longest answer assumed when the settings set no `max_tokens`."""

Kind = Literal["object", "score", "text"]

_ACTIVE: contextvars.ContextVar[Recorder | None] = contextvars.ContextVar(
    "scorelab_judge_recorder", default=None
)


@dataclass(frozen=True, slots=True)
class DryRequest:
    """One judge call of a dry run: what would have been sent and the answer given instead."""

    arguments: dict[str, Any]
    kind: Kind
    answer: str


@dataclass(slots=True)
class Recorder:
    """The judge calls of a dry run, in order."""

    requests: list[DryRequest] = field(default_factory=list)

    def answer(self, arguments: Mapping[str, Any], schema: Any, kind: Kind) -> str:
        """Record the call and give the shortest valid answer (free text: an empty string)."""
        text = "" if schema is None else json.dumps(shortest_answer(schema.json_schema))
        self.requests.append(DryRequest(dict(arguments), kind, text))
        return text


@contextmanager
def recording() -> Iterator[Recorder]:
    """Judge calls in this context (and in tasks created in it) are recorded, never sent."""
    recorder = Recorder()
    token = _ACTIVE.set(recorder)
    try:
        yield recorder
    finally:
        _ACTIVE.reset(token)


def active_recorder() -> Recorder | None:
    """The dry run the current context records into, if any."""
    return _ACTIVE.get()


def shortest_answer(schema: Mapping[str, Any], root: Mapping[str, Any] | None = None) -> Any:
    """A small value valid against a JSON schema (local `$ref`s resolved against `root`)."""
    root = schema if root is None else root
    if "$ref" in schema:
        target: Any = root
        for part in str(schema["$ref"]).lstrip("#/").split("/"):
            target = target[part]
        return shortest_answer(target, root)
    for combiner in ("anyOf", "oneOf", "allOf"):
        if schema.get(combiner):
            return shortest_answer(schema[combiner][0], root)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type", "object")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "object":
        properties = schema.get("properties", {})
        return {name: shortest_answer(sub, root) for name, sub in properties.items()}
    if kind == "array":
        return [shortest_answer(schema.get("items", {}), root)] * int(schema.get("minItems", 1))
    return {"string": "yes", "number": 1, "integer": 1, "boolean": True, "null": None}.get(
        kind, "yes"
    )


def cost_estimate(
    model: str | None,
    sampled: Sequence[Sequence[DryRequest]],
    items: int,
    settings: Mapping[str, Any] | None = None,
) -> CostEstimate:
    """The estimate for `items` items from the judge calls of a sample (one list per sampled
    item). Low and high scale the smallest and the largest sampled item to every item."""
    if not sampled or not model:
        return CostEstimate(judge_model=model, items=items, sample_size=len(sampled))
    per_item = [_item_tokens(model, requests, settings or {}) for requests in sampled]
    calls = max(math.ceil(sum(len(r) for r in sampled) / len(sampled)), 0)

    prompts = [t[0] for t in per_item]
    tokens = {
        "input_tokens_low": min(prompts) * items,
        "input_tokens_typical": round(sum(prompts) / len(prompts) * items),
        "input_tokens_high": max(prompts) * items,
        "output_tokens_low": min(t[1] for t in per_item) * items,
        "output_tokens_typical": round(sum(t[2] for t in per_item) / len(per_item) * items),
        "output_tokens_high": max(t[3] for t in per_item) * items,
    }
    prices = unit_prices(model)

    def dollars(pick: str) -> float | None:
        if prices is None:
            return None
        return (
            tokens[f"input_tokens_{pick}"] * prices[0] + tokens[f"output_tokens_{pick}"] * prices[1]
        )

    return CostEstimate(
        judge_model=model,
        items=items,
        sample_size=len(sampled),
        judge_calls=calls * items,
        priced=prices is not None,
        input_tokens_low=tokens["input_tokens_low"],
        input_tokens_typical=tokens["input_tokens_typical"],
        input_tokens_high=tokens["input_tokens_high"],
        output_tokens_low=tokens["output_tokens_low"],
        output_tokens_typical=tokens["output_tokens_typical"],
        output_tokens_high=tokens["output_tokens_high"],
        cost_usd_low=dollars("low"),
        cost_usd_typical=dollars("typical"),
        cost_usd_high=dollars("high"),
    )


def _item_tokens(
    model: str, requests: Sequence[DryRequest], settings: Mapping[str, Any]
) -> tuple[int, int, int, int]:
    """(prompt tokens, shortest, typical and longest answer tokens) of one item's calls."""
    prompt = shortest = typical = longest = 0
    limit = _answer_limit(settings)
    for request in requests:
        prompt += _prompt_tokens(model, request.arguments)
        low = _text_tokens(model, request.answer) if request.answer else 1
        usual = TYPICAL_TEXT_ANSWER_TOKENS if request.kind == "text" else TYPICAL_JSON_ANSWER_TOKENS
        shortest += low
        typical += min(max(low, usual), limit)
        longest += max(low, limit)
    return prompt, shortest, typical, longest


def _answer_limit(settings: Mapping[str, Any]) -> int:
    for name in ("max_tokens", "max_completion_tokens"):
        value = settings.get(name)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return HIGH_ANSWER_TOKENS


def _prompt_tokens(model: str, arguments: Mapping[str, Any]) -> int:
    messages = arguments.get("messages") or []
    try:
        count = int(litellm().token_counter(model=model, messages=messages))
    except Exception:  # a model litellm cannot tokenise for: its default tokenizer
        count = int(litellm().token_counter(messages=messages))
    response_format = arguments.get("response_format")
    if response_format:
        count += _text_tokens(model, json.dumps(response_format))
    return count


def _text_tokens(model: str, text: str) -> int:
    try:
        return int(litellm().token_counter(model=model, text=text))
    except Exception:
        return int(litellm().token_counter(text=text))
