"""`run_evals` for flat scorer lists: scorer-core.md §7 cases 33-37 and 40 (accumulator part),
targets, concurrency, `on_item_complete`, validation, the failure policies, the blocking twin,
and a prompt-step scorer against the fake judge.

Not applicable: case 35's agent `scoringData` (a target here is a plain callable returning the
output), case 38 (workflow step scorers) and case 40's persistence and experiment parts (no
score storage in `run_evals`).
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections.abc import Callable
from typing import Any

import pytest

from core import (
    DataItem,
    JudgeConfig,
    MastraError,
    PromptStep,
    Scorer,
    ScorerRunError,
    ScorerRunResult,
    create_scorer,
    not_scorable,
    run_evals,
    run_evals_sync,
)
from core.testing import FakeJudge, Reply


def constant(scorer_id: str, value: Any) -> Scorer:
    return create_scorer(id=scorer_id, description=f"always {value}").generate_score(
        lambda ctx: value
    )


def by_input(scorer_id: str, scores: dict[Any, Any]) -> Scorer:
    """A scorer whose score (or not_scorable) is looked up from the run's input."""

    def score(ctx: Any) -> Any:
        return scores[ctx.run.input]

    return create_scorer(id=scorer_id, description="lookup").generate_score(score)


def failing(scorer_id: str, message: str = "scorer exploded") -> Scorer:
    def score(ctx: Any) -> float:
        raise RuntimeError(message)

    return create_scorer(id=scorer_id, description="fails").generate_score(score)


def recorder(scorer_id: str, seen: list[Any]) -> Scorer:
    def score(ctx: Any) -> float:
        seen.append(ctx.run)
        return 1.0

    return create_scorer(id=scorer_id, description="records its run").generate_score(score)


# ---- §7 cases 33-34: averaging --------------------------------------------------------------


async def test_basic_averaging_over_two_items() -> None:
    data = [
        {"input": "Test input 1", "output": "o1", "groundTruth": "Expected 1"},
        {"input": "Test input 2", "output": "o2", "groundTruth": "Expected 2"},
    ]
    result = await run_evals(
        data=data, scorers=[constant("toxicity", 0.9), constant("relevance", 0.7)]
    )
    assert result.scores == {"toxicity": 0.9, "relevance": 0.7}
    assert result.summary.total_items == 2
    assert result.to_dict()["summary"]["totalItems"] == 2


async def test_averaging_two_different_values() -> None:
    data = [{"input": "a", "output": "x"}, {"input": "b", "output": "y"}]
    result = await run_evals(data=data, scorers=[by_input("test", {"a": 0.6, "b": 1.0})])
    assert result.scores["test"] == pytest.approx(0.8)


# ---- §7 case 40 (accumulator): not-scorable and non-numeric results -------------------------


async def test_not_scorable_results_are_left_out_of_means_and_empty_scorers_omitted() -> None:
    data = [{"input": 1, "output": "x"}, {"input": 2, "output": "y"}]
    scorers = [
        by_input("relevancy", {1: 1, 2: not_scorable("no relevant statement")}),
        by_input("completeness", {1: 0.5, 2: 1}),
        by_input("refund", {1: not_scorable(), 2: not_scorable()}),
    ]
    result = await run_evals(data=data, scorers=scorers)
    assert result.scores == {"relevancy": 1, "completeness": 0.75}
    assert "refund" not in result.to_dict()["scores"]
    assert result.summary.total_items == 2


async def test_not_scorable_from_preprocess_is_left_out() -> None:
    scorer = (
        create_scorer(id="tool-use", description="d")
        .preprocess(lambda ctx: not_scorable("no tool") if ctx.run.input == "skip" else {})
        .generate_score(lambda ctx: 0.4)
    )
    data = [{"input": "skip", "output": "x"}, {"input": "keep", "output": "y"}]
    result = await run_evals(data=data, scorers=[scorer])
    assert result.scores == {"tool-use": 0.4}


# ---- §7 case 35 and targets --------------------------------------------------------------


async def test_without_target_the_items_output_and_fields_reach_the_scorer() -> None:
    seen: list[Any] = []
    data = [
        {
            "input": "question",
            "output": "answer",
            "groundTruth": "truth",
            "requestContext": {"user": "u1"},
        }
    ]
    await run_evals(data=data, scorers=[recorder("r", seen)])
    (run,) = seen
    assert (run.input, run.output, run.ground_truth) == ("question", "answer", "truth")
    assert run.request_context == {"user": "u1"}


async def test_snake_case_ground_truth_and_data_item_objects_are_accepted() -> None:
    seen: list[Any] = []
    data = [
        {"input": "q1", "output": "a1", "ground_truth": "t1"},
        DataItem(input="q2", output="a2", ground_truth="t2"),
    ]
    await run_evals(data=data, scorers=[recorder("r", seen)])
    assert [(run.input, run.output, run.ground_truth) for run in seen] == [
        ("q1", "a1", "t1"),
        ("q2", "a2", "t2"),
    ]


async def test_sync_target_receives_the_input_and_its_result_is_scored() -> None:
    seen: list[Any] = []
    received: list[Any] = []

    def target(value: Any) -> str:
        received.append(value)
        return f"response to {value['q']}"

    data = [{"input": {"q": "X"}, "groundTruth": "truth"}]
    await run_evals(data=data, scorers=[recorder("r", seen)], target=target)
    assert received == [{"q": "X"}]
    (run,) = seen
    assert run.input == {"q": "X"}
    assert run.output == "response to X"
    assert run.ground_truth == "truth"


async def test_async_target_is_awaited_and_overrides_the_items_output() -> None:
    seen: list[Any] = []

    async def target(value: str) -> str:
        await asyncio.sleep(0)
        return value.upper()

    data = [{"input": "abc", "output": "ignored"}, {"input": "de"}]
    await run_evals(data=data, scorers=[recorder("r", seen)], target=target)
    assert sorted(run.output for run in seen) == ["ABC", "DE"]


async def test_target_returning_none_is_still_scored() -> None:
    seen: list[Any] = []
    await run_evals(data=[{"input": "x"}], scorers=[recorder("r", seen)], target=lambda v: None)
    assert len(seen) == 1
    assert seen[0].output is None


# ---- §7 case 36: on_item_complete --------------------------------------------------------


async def test_on_item_complete_sync_is_called_once_per_item_with_full_results() -> None:
    calls: list[dict[str, Any]] = []
    data = [{"input": "i1", "output": "o1"}, {"input": "i2", "output": "o2"}]

    def on_item_complete(**kwargs: Any) -> None:
        calls.append(kwargs)

    await run_evals(
        data=data,
        scorers=[constant("toxicity", 0.9), constant("relevance", 0.7)],
        on_item_complete=on_item_complete,
    )

    assert len(calls) == 2
    first = calls[0]
    assert set(first) == {"item", "target_result", "scorer_results"}
    assert first["item"] == data[0]
    assert first["target_result"] is None
    assert set(first["scorer_results"]) == {"toxicity", "relevance"}
    toxicity = first["scorer_results"]["toxicity"]
    assert isinstance(toxicity, ScorerRunResult)
    assert toxicity.score == 0.9
    assert toxicity.input == "i1"
    assert toxicity.output == "o1"
    assert calls[1]["scorer_results"]["relevance"].output == "o2"


async def test_on_item_complete_async_receives_the_target_result() -> None:
    calls: list[tuple[Any, Any, dict[str, Any]]] = []

    async def on_item_complete(*, item: Any, target_result: Any, scorer_results: Any) -> None:
        await asyncio.sleep(0)
        calls.append((item, target_result, scorer_results))

    data = [{"input": 2}, {"input": 3}]
    await run_evals(
        data=data,
        scorers=[constant("c", 1)],
        target=lambda x: x * 10,
        on_item_complete=on_item_complete,
    )
    assert [(item, target_result) for item, target_result, _ in calls] == [
        ({"input": 2}, 20),
        ({"input": 3}, 30),
    ]
    assert all(results["c"].score == 1 for _, _, results in calls)


async def test_on_item_complete_runs_after_the_items_scorers() -> None:
    events: list[str] = []

    def score(ctx: Any) -> float:
        events.append(f"score {ctx.run.input}")
        return 1.0

    scorer = create_scorer(id="s", description="d").generate_score(score)
    await run_evals(
        data=[{"input": "a", "output": ""}, {"input": "b", "output": ""}],
        scorers=[scorer],
        on_item_complete=lambda **kw: events.append(f"done {kw['item']['input']}"),
    )
    assert events == ["score a", "done a", "score b", "done b"]


# ---- concurrency ------------------------------------------------------------------------


class InFlight:
    """Counts the scorer runs in progress at once."""

    def __init__(self) -> None:
        self.current = 0
        self.maximum = 0
        self.order: list[Any] = []

    def scorer(self, hold: Callable[[], Any]) -> Scorer:
        async def score(ctx: Any) -> float:
            self.current += 1
            self.maximum = max(self.maximum, self.current)
            self.order.append(ctx.run.input)
            try:
                await hold()
            finally:
                self.current -= 1
            return 1.0

        return create_scorer(id="slow", description="d").generate_score(score)


async def test_concurrency_eight_runs_eight_items_at_once() -> None:
    flight = InFlight()
    all_started = asyncio.Event()

    async def hold() -> None:
        if flight.current == 8:
            all_started.set()
        # Each run waits until all eight are in flight: this only finishes if they overlap.
        await asyncio.wait_for(all_started.wait(), timeout=5)

    data = [{"input": i, "output": "o"} for i in range(8)]
    result = await run_evals(data=data, scorers=[flight.scorer(hold)], concurrency=8)

    assert flight.maximum == 8
    assert result.summary.total_items == 8


async def test_concurrency_is_an_upper_bound() -> None:
    flight = InFlight()

    async def hold() -> None:
        for _ in range(3):
            await asyncio.sleep(0)

    data = [{"input": i, "output": "o"} for i in range(20)]
    result = await run_evals(data=data, scorers=[flight.scorer(hold)], concurrency=4)

    assert flight.maximum == 4
    assert result.summary.total_items == 20
    assert sorted(flight.order) == list(range(20))


async def test_concurrency_one_runs_items_one_after_another_in_order() -> None:
    flight = InFlight()

    async def hold() -> None:
        await asyncio.sleep(0)

    data = [{"input": i, "output": "o"} for i in range(5)]
    await run_evals(data=data, scorers=[flight.scorer(hold)])

    assert flight.maximum == 1
    assert flight.order == [0, 1, 2, 3, 4]


async def test_sync_targets_run_off_the_event_loop_and_overlap() -> None:
    barrier = threading.Barrier(3, timeout=5)

    def target(value: int) -> int:
        barrier.wait()  # only passes if three sync targets run at the same time
        return value

    data = [{"input": i} for i in range(3)]
    result = await run_evals(data=data, scorers=[constant("c", 1)], target=target, concurrency=3)
    assert result.summary.total_items == 3


# ---- validation ---------------------------------------------------------------------------


async def test_empty_data_raises_no_data_provided() -> None:
    with pytest.raises(MastraError) as caught:
        await run_evals(data=[], scorers=[constant("c", 1)])
    assert caught.value.id == "RUN_EXPERIMENT_FAILED_NO_DATA_PROVIDED"
    assert "Data array is empty" in str(caught.value)


async def test_item_without_input_raises_invalid_data_item_naming_the_index() -> None:
    seen: list[Any] = []
    data = [{"input": "ok", "output": "o"}, {"input": "ok", "output": "o"}, {"output": "o"}]
    with pytest.raises(MastraError) as caught:
        await run_evals(data=data, scorers=[recorder("r", seen)])
    assert caught.value.id == "INVALID_DATA_ITEM"
    assert re.search(r"\bindex 2\b", str(caught.value))
    assert "input" in str(caught.value)
    assert seen == []  # validation happens before any item runs


async def test_item_without_output_and_without_target_is_invalid() -> None:
    with pytest.raises(MastraError) as caught:
        await run_evals(data=[{"input": "q"}], scorers=[constant("c", 1)])
    assert caught.value.id == "INVALID_DATA_ITEM"
    assert "index 0" in str(caught.value)
    assert "output" in str(caught.value)


async def test_item_without_output_is_fine_with_a_target() -> None:
    result = await run_evals(data=[{"input": "q"}], scorers=[constant("c", 1)], target=str)
    assert result.scores == {"c": 1}


@pytest.mark.parametrize("item", ["just a string", 42, None])
async def test_item_that_is_not_a_mapping_is_invalid(item: Any) -> None:
    with pytest.raises(MastraError) as caught:
        await run_evals(data=[{"input": 1, "output": 1}, item], scorers=[constant("c", 1)])
    assert caught.value.id == "INVALID_DATA_ITEM"
    assert "index 1" in str(caught.value)


async def test_empty_scorers_without_gates_raises_no_scorers_provided() -> None:
    with pytest.raises(MastraError) as caught:
        await run_evals(data=[{"input": 1, "output": 1}], scorers=[])
    assert caught.value.id == "NO_SCORERS_PROVIDED"
    assert "At least one scorer or gate must be provided" in str(caught.value)


async def test_empty_scorers_with_a_gate_is_allowed() -> None:
    result = await run_evals(
        data=[{"input": 1, "output": 1}], scorers=[], gates=[constant("gate", 1)]
    )
    assert result.scores == {}
    assert result.verdict == "passed"


async def test_duplicate_scorer_ids_are_rejected() -> None:
    with pytest.raises(MastraError) as caught:
        await run_evals(
            data=[{"input": 1, "output": 1}],
            scorers=[constant("same", 1), {"scorer": constant("same", 0.5), "threshold": 0.5}],
        )
    assert caught.value.id == "DUPLICATE_SCORER_ID"
    assert "same" in str(caught.value)


@pytest.mark.parametrize("concurrency", [0, -1, 1.5, True, "4"])
async def test_bad_concurrency_is_rejected(concurrency: Any) -> None:
    with pytest.raises(MastraError) as caught:
        await run_evals(
            data=[{"input": 1, "output": 1}], scorers=[constant("c", 1)], concurrency=concurrency
        )
    assert caught.value.id == "INVALID_CONCURRENCY"


@pytest.mark.parametrize("on_error", ["ignore", None, "RAISE"])
async def test_bad_on_error_is_rejected(on_error: Any) -> None:
    with pytest.raises(MastraError) as caught:
        await run_evals(
            data=[{"input": 1, "output": 1}], scorers=[constant("c", 1)], on_error=on_error
        )
    assert caught.value.id == "INVALID_ON_ERROR"


# ---- §7 case 37: on_error="raise" ----------------------------------------------------------


async def test_target_failure_raises_wrapped_target_error() -> None:
    original = ValueError("target broke")

    def target(value: Any) -> Any:
        raise original

    with pytest.raises(MastraError) as caught:
        await run_evals(data=[{"input": "q"}], scorers=[constant("c", 1)], target=target)

    error = caught.value
    assert error.id == "RUN_EXPERIMENT_TARGET_FAILED_TO_GENERATE_RESULT"
    assert "Error generating result from target" in str(error)
    assert error.__cause__ is original
    assert json.loads(error.details["item"]) == {"input": "q"}


async def test_scorer_failure_raises_wrapped_scorer_error() -> None:
    with pytest.raises(MastraError) as caught:
        await run_evals(
            data=[{"input": "q", "output": "o"}],
            scorers=[constant("fine", 1), failing("broken")],
        )

    error = caught.value
    assert error.id == "RUN_EXPERIMENT_SCORER_FAILED_TO_SCORE_RESULT"
    assert error.details["scorerId"] == "broken"
    assert "broken" in str(error)
    assert isinstance(error.__cause__, ScorerRunError)
    assert str(error.__cause__) == "Scorer Run Failed: scorer exploded"
    assert isinstance(error.__cause__.__cause__, RuntimeError)
    assert error.to_dict()["cause"]["code"] == "MASTR_SCORER_FAILED_TO_RUN_WORKFLOW_FAILED"


async def test_scorer_failure_stops_the_batch_before_on_item_complete() -> None:
    completed: list[Any] = []
    data = [{"input": "q", "output": "o"}]
    with pytest.raises(MastraError):
        await run_evals(
            data=data,
            scorers=[failing("broken")],
            on_item_complete=lambda **kw: completed.append(kw),
        )
    assert completed == []


async def test_scorer_failure_on_a_later_item_raises_with_concurrency() -> None:
    scorer = by_input("lookup", {0: 1, 1: 1, 2: 1})  # item 3 has no entry: KeyError
    data = [{"input": i, "output": "o"} for i in range(4)]
    with pytest.raises(MastraError) as caught:
        await run_evals(data=data, scorers=[scorer], concurrency=2)
    assert caught.value.id == "RUN_EXPERIMENT_SCORER_FAILED_TO_SCORE_RESULT"
    assert caught.value.details["scorerId"] == "lookup"


# ---- on_error="record" ---------------------------------------------------------------------


async def test_record_mode_keeps_going_and_reports_items_in_data_order() -> None:
    def target(value: str) -> str:
        if value == "target-fails":
            raise ConnectionError("model down")
        return value

    scorers = [
        by_input("quality", {"good": 1.0, "ok": 0.5, "scorer-fails": 0.0}),
        by_input("strict", {"good": 1.0, "ok": 0.0}),  # "scorer-fails" → KeyError
    ]
    data = [
        {"input": "good", "id": "a"},
        {"input": "target-fails", "id": "b"},
        {"input": "ok", "id": "c"},
        {"input": "scorer-fails", "id": "d"},
    ]

    result = await run_evals(
        data=data, scorers=scorers, target=target, on_error="record", concurrency=3
    )

    assert result.items is not None
    assert [item.index for item in result.items] == [0, 1, 2, 3]
    assert [item.id for item in result.items] == ["a", "b", "c", "d"]
    assert [item.status for item in result.items] == ["success", "failed", "success", "failed"]
    assert [item.phase for item in result.items] == [None, "target", None, "scorer"]
    assert [item.scorer_id for item in result.items] == [None, None, None, "strict"]
    target_error = result.items[1].error
    assert target_error is not None
    assert target_error.name == "ConnectionError"
    assert target_error.message == "model down"
    scorer_error = result.items[3].error
    assert scorer_error is not None
    assert scorer_error.name == "ScorerRunError"
    assert scorer_error.code == "MASTR_SCORER_FAILED_TO_RUN_WORKFLOW_FAILED"
    # The failed item's 0.0 from "quality" is not averaged: successful items only.
    assert result.scores == {"quality": 0.75, "strict": 0.5}
    assert result.summary.total_items == 2
    assert result.summary.failed_items == 2
    data_dict = result.to_dict()
    assert data_dict["summary"] == {"totalItems": 2, "failedItems": 2}
    assert data_dict["items"][1] == {
        "index": 1,
        "id": "b",
        "status": "failed",
        "phase": "target",
        "error": {"name": "ConnectionError", "message": "model down"},
    }


async def test_record_mode_with_every_item_successful() -> None:
    result = await run_evals(
        data=[{"input": 1, "output": 1}], scorers=[constant("c", 0.5)], on_error="record"
    )
    assert result.items is not None
    assert [(item.status, item.phase, item.error) for item in result.items] == [
        ("success", None, None)
    ]
    assert result.summary.failed_items == 0


async def test_raise_mode_has_no_items_key() -> None:
    result = await run_evals(data=[{"input": 1, "output": 1}], scorers=[constant("c", 0.5)])
    assert result.items is None
    assert "items" not in result.to_dict()


# ---- run_evals_sync ------------------------------------------------------------------------


def test_run_evals_sync_from_plain_code() -> None:
    result = run_evals_sync(
        data=[{"input": "a", "output": "x"}, {"input": "b", "output": "y"}],
        scorers=[by_input("s", {"a": 0.2, "b": 0.4})],
    )
    assert result.scores["s"] == pytest.approx(0.3)
    assert result.summary.total_items == 2


async def test_run_evals_sync_inside_a_running_event_loop() -> None:
    asyncio.get_running_loop()  # this test body runs inside a loop

    async def score(ctx: Any) -> float:
        await asyncio.sleep(0)
        return 0.5

    scorer = create_scorer(id="async", description="d").generate_score(score)
    result = run_evals_sync(data=[{"input": 1, "output": 1}], scorers=[scorer])
    assert result.scores == {"async": 0.5}


def test_run_evals_sync_raises_validation_errors() -> None:
    with pytest.raises(MastraError) as caught:
        run_evals_sync(data=[], scorers=[constant("c", 1)])
    assert caught.value.id == "RUN_EXPERIMENT_FAILED_NO_DATA_PROVIDED"


# ---- a prompt-step scorer against the fake judge ---------------------------------------------


async def test_prompt_step_scorer_through_run_evals_with_concurrency(
    judge_server: FakeJudge, judge_config: JudgeConfig, monkeypatch: pytest.MonkeyPatch
) -> None:
    def responder(request: dict[str, Any]) -> Reply:
        prompt = next(m["content"] for m in request["messages"] if m["role"] == "user")
        number = int(re.search(r"item (\d+)", prompt).group(1))  # type: ignore[union-attr]
        return Reply(json.dumps({"score": number / 10}), delay=0.02)

    monkeypatch.setattr(judge_server, "responder", responder)
    scorer = create_scorer(id="judged", description="d", judge=judge_config).generate_score(
        PromptStep(description="Score", create_prompt=lambda ctx: f"rate item {ctx.run.input}")
    )
    collected: dict[int, ScorerRunResult] = {}

    def on_item_complete(*, item: Any, target_result: Any, scorer_results: Any) -> None:
        collected[item["input"]] = scorer_results["judged"]

    data = [{"input": i, "output": f"answer {i}"} for i in range(8)]
    result = await run_evals(
        data=data, scorers=[scorer], concurrency=4, on_item_complete=on_item_complete
    )

    assert judge_server.call_count == 8
    assert result.summary.total_items == 8
    assert result.scores["judged"] == pytest.approx(sum(range(8)) / 80)
    assert sorted(collected) == list(range(8))
    for index, run_result in collected.items():
        assert run_result.score == pytest.approx(index / 10)
        assert run_result.judge is not None
        (execution,) = run_result.judge["generateScore"].executions
        assert execution.status == "success"
        assert execution.prompt == f"rate item {index}"
        assert execution.output == pytest.approx(index / 10)
        assert execution.attempt_count == 1
