"""Judge-bound throughput: N items × one prompt-step scorer through `run_evals` against a loopback
fake judge, next to raw `litellm.acompletion` calls at the same concurrency; then a stored
experiment through the Service with answer relevancy (three judge calls per item) next to the
same scorer through `run_evals`.

    python bench/judge_throughput.py [--items 300] [--concurrency 8 32] [--rounds 5]
                                     [--stored-items 150] [--stored-rounds 3]
                                     [--own-cpu-rounds 3]

First, scorelab's own CPU per prompt step, with litellm's call replaced by a canned answer.

The fake judge (core.testing.fake_judge) runs in its own process, as a real provider would, and
answers instantly, so the figures measure the client side: litellm plus our pipeline. Raw sends
the very request scorelab's step sends (checked once before measuring: same messages, the
schema in the prompt, same retry settings, so the same litellm client and connection pool),
from `concurrency` workers sharing the items as the engine's do. The
machine may be shared: each round runs raw and scorelab back to back in this one process (the
order swapped every round), and prints both rates, the CPU this process spent per call (all
its threads: litellm's and the Service writer's included) and the 1-minute load average. The
ratio to read is the median of the rounds'; the CPU per call says where a gap comes from
(scorelab's own work per call is the difference of the two; their ratio is what the rates'
ratio would be where this process's CPU is the limit, which a loaded machine hides). Target:
run_evals ≥ 0.95 of the raw calls/s at each concurrency, and the Service's judge calls/s no
lower than run_evals'.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import statistics
import tempfile
import time
import urllib.request
from collections.abc import Awaitable, Callable
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import _loopback_judge as loopback

from core import JudgeConfig, PromptStep, create_scorer, run_evals
from core._sync import run_coroutine_sync
from core.judge import _litellm
from core.records import ExperimentConfig, ScorerSpec
from core.scorers.answer_relevancy import create_answer_relevancy_scorer
from core.service import Service

MODEL, INSTRUCTIONS = loopback.MODEL, loopback.INSTRUCTIONS
start_fake_judge = loopback.start_fake_judge
RELEVANCY = "answer-relevancy-scorer"


def prompt_for(index: int) -> str:
    return f"Score this answer from 0 to 1.\nQuestion {index}: what is 2+2?\nAnswer: 4"


async def raw_calls(url: str, items: int, concurrency: int) -> float:
    return await loopback.raw_calls(url, items, concurrency, prompt_for)


async def scorer_calls(url: str, items: int, concurrency: int) -> float:
    judge = JudgeConfig(
        model=MODEL,
        instructions=INSTRUCTIONS,
        api_base=url,
        api_key="bench",
        model_settings={"num_retries": 0},
    )
    scorer = create_scorer(id="judge-score", description="One prompt step", judge=judge)
    scorer = scorer.generate_score(
        PromptStep(description="Score", create_prompt=lambda ctx: prompt_for(ctx.run.input))
    )
    data = [{"input": i, "output": "4"} for i in range(items)]
    started = time.perf_counter()
    result = await run_evals(data=data, scorers=[scorer], concurrency=concurrency)
    elapsed = time.perf_counter() - started
    assert result.summary.total_items == items and result.scores == {"judge-score": 1}
    return items / elapsed


async def own_cpu(items: int, rounds: int) -> None:
    """Scorelab's own CPU per prompt step: the same run_evals with `litellm.acompletion`
    replaced by one canned response (no HTTP, no litellm work), so what is left is the
    pipeline: scorer, judge call, records, engine. Stable under load, unlike the rates."""
    module = _litellm.litellm()
    canned = module.ModelResponse(
        id="canned",
        model="fake-judge-model",
        choices=[{"index": 0, "finish_reason": "stop", "message": {"content": '{"score": 1}'}}],
        usage={"prompt_tokens": 10, "completion_tokens": 20, "total_tokens": 30},
    )

    async def answer(**_arguments: object) -> object:
        await asyncio.sleep(0)
        return canned

    real = module.acompletion
    module.acompletion = answer
    try:
        await scorer_calls("http://127.0.0.1:9/v1", 50, 4)
        spent = []
        for _ in range(rounds):
            gc.collect()
            cpu = time.process_time()
            await scorer_calls("http://127.0.0.1:9/v1", items, 32)
            spent.append((time.process_time() - cpu) * 1000 / items)
    finally:
        module.acompletion = real
    print(
        f"scorelab's own CPU per prompt step (acompletion canned, {items} items, concurrency 32): "
        + ", ".join(f"{ms:.3f}" for ms in spent)
        + f" ms (median {statistics.median(spent):.3f}; load {load():.1f})\n"
    )


def load() -> float:
    return os.getloadavg()[0]


async def _timed(measure: Callable[[], Awaitable[float]]) -> tuple[float, float]:
    """(rate, CPU ms of this process per unit of the rate's count)."""
    cpu = time.process_time()
    started = time.perf_counter()
    rate = await measure()
    count = rate * (time.perf_counter() - started)
    return rate, (time.process_time() - cpu) * 1000 / max(count, 1)


def _summary(label: str, ratios: list[float], raw_cpu: list[float], our_cpu: list[float]) -> None:
    median = statistics.median
    cpu_ratios = [raw / ours for raw, ours in zip(raw_cpu, our_cpu, strict=True)]
    print(
        f"  {label}: median ratio {median(ratios):.2f} (min {min(ratios):.2f}, max "
        f"{max(ratios):.2f}); CPU per call: raw {median(raw_cpu):.2f} ms, scorelab "
        f"{median(our_cpu):.2f} ms; CPU-bound ratio (raw CPU / scorelab CPU per call) median "
        f"{median(cpu_ratios):.2f} (min {min(cpu_ratios):.2f}, max {max(cpu_ratios):.2f})"
    )


async def check_same_request(url: str) -> None:
    """Both sides must send litellm the very same arguments (messages, retry settings, hence
    the same client and connection pool): one call of each, recorded and compared."""
    module = _litellm.litellm()
    real = module.acompletion
    sent: list[dict[str, object]] = []

    async def recorded(**arguments: object) -> object:
        sent.append(arguments)
        return await real(**arguments)

    module.acompletion = recorded
    try:
        await raw_calls(url, 1, 1)
        await scorer_calls(url, 1, 1)
    finally:
        module.acompletion = real
    assert sent[0] == sent[1], f"raw and scorelab send different requests:\n{sent}"


async def measure(url: str, items: int, levels: list[int], rounds: int) -> None:
    await check_same_request(url)
    widest = max(levels)  # warm-up: imports, and as many pooled connections as either uses
    await raw_calls(url, 2 * widest, widest)
    await scorer_calls(url, 2 * widest, widest)
    print(f"run_evals vs raw litellm: {items} items per measurement; fake judge at {url}")
    print(
        f"{'conc.':>5} {'round':>5} {'raw calls/s':>11} {'cpu ms':>6} "
        f"{'scorelab/s':>10} {'cpu ms':>6} {'ratio':>6} {'load':>5}"
    )
    for level in levels:
        ratios: list[float] = []
        raw_cpu: list[float] = []
        our_cpu: list[float] = []
        for index in range(rounds):
            sides = [("raw", raw_calls), ("ours", scorer_calls)]
            if index % 2:
                sides.reverse()  # alternate who goes first, so drift in the load evens out
            measured: dict[str, tuple[float, float]] = {}
            for name, side in sides:
                measured[name] = await _timed(
                    lambda side=side, level=level: side(url, items, level)
                )
            (raw, raw_ms), (ours, our_ms) = measured["raw"], measured["ours"]
            ratios.append(ours / raw)
            raw_cpu.append(raw_ms)
            our_cpu.append(our_ms)
            print(
                f"{level:>5} {index + 1:>5} {raw:>11.1f} {raw_ms:>6.2f} {ours:>10.1f} "
                f"{our_ms:>6.2f} {ours / raw:>6.2f} {load():>5.1f}",
                flush=True,
            )
        _summary(f"concurrency {level}", ratios, raw_cpu, our_cpu)


# ---- a stored experiment through the Service vs the same scorer through run_evals ----------


def _requests(url: str) -> int:
    stats_url = url.removesuffix("/v1") + "/__stats"
    with urllib.request.urlopen(stats_url) as answer:
        count: int = json.load(answer)["requests"]
        return count


def _questions(items: int) -> list[tuple[str, str]]:
    return [(f"What is {i} plus 2? Say it in words.", f"It is {i + 2}.") for i in range(items)]


def relevancy_run_evals(url: str, items: int, concurrency: int) -> tuple[float, int]:
    """(judge calls/s, calls) of answer relevancy over `items` through run_evals."""
    judge = JudgeConfig(model=MODEL, api_base=url, api_key="bench")
    scorer = create_answer_relevancy_scorer(judge)
    data = [{"input": q, "output": a} for q, a in _questions(items)]
    before = _requests(url)
    started = time.perf_counter()
    result = run_coroutine_sync(run_evals(data=data, scorers=[scorer], concurrency=concurrency))
    elapsed = time.perf_counter() - started
    calls = _requests(url) - before
    assert result.summary.total_items == items and RELEVANCY in result.scores, result
    return calls / elapsed, calls


def relevancy_service(
    service: Service, dataset_id: str, url: str, items: int, concurrency: int
) -> tuple[float, int]:
    """(judge calls/s, calls) of the same experiment started and waited for through the
    Service, its results written to the store."""
    before = _requests(url)
    started = time.perf_counter()
    experiment_id = service.start_experiment(
        ExperimentConfig(
            dataset_id=dataset_id,
            scorers=[ScorerSpec(scorer_id=RELEVANCY)],
            judge_model=MODEL,
            api_base=url,
            concurrency=concurrency,
        ),
        api_key="bench",
    )
    final = service.wait(experiment_id)
    elapsed = time.perf_counter() - started
    calls = _requests(url) - before
    stored = service.store.result_count(experiment_id)
    assert final.counts.succeeded == items and stored == items, final
    return calls / elapsed, calls


def measure_stored(url: str, items: int, concurrency: int, rounds: int, folder: Path) -> None:
    service = Service(f"sqlite:///{folder / 'bench.db'}")
    rows = "input,output\n" + "".join(f'"{q}","{a}"\n' for q, a in _questions(items))
    dataset = service.import_dataset("bench.csv", rows.encode())
    relevancy_run_evals(url, 10, 4)  # warm-up of both paths
    print(
        f"\nanswer relevancy, {items} items, concurrency {concurrency}: the Service (SQLite in "
        f"{folder}) vs run_evals, in judge calls/s"
    )
    print(
        f"{'round':>5} {'run_evals':>9} {'cpu ms':>6} {'Service':>8} {'cpu ms':>6} "
        f"{'ratio':>6} {'load':>5}"
    )
    ratios: list[float] = []
    evals_cpu: list[float] = []
    service_cpu: list[float] = []
    try:
        for index in range(rounds):
            sides: list[tuple[str, Callable[[], tuple[float, int]]]] = [
                ("evals", lambda: relevancy_run_evals(url, items, concurrency)),
                (
                    "service",
                    lambda: relevancy_service(service, dataset.id, url, items, concurrency),
                ),
            ]
            if index % 2:
                sides.reverse()
            measured: dict[str, tuple[float, float]] = {}
            for name, side in sides:
                cpu = time.process_time()
                rate, calls = side()
                measured[name] = (rate, (time.process_time() - cpu) * 1000 / max(calls, 1))
            (bare, bare_ms), (kept, kept_ms) = measured["evals"], measured["service"]
            ratios.append(kept / bare)
            evals_cpu.append(bare_ms)
            service_cpu.append(kept_ms)
            print(
                f"{index + 1:>5} {bare:>9.1f} {bare_ms:>6.2f} {kept:>8.1f} {kept_ms:>6.2f} "
                f"{kept / bare:>6.2f} {load():>5.1f}",
                flush=True,
            )
    finally:
        service.store.close()
    median = statistics.median
    print(
        f"  Service / run_evals: median ratio {median(ratios):.2f} (min {min(ratios):.2f}, max "
        f"{max(ratios):.2f}); CPU per judge call: run_evals {median(evals_cpu):.2f} ms, "
        f"Service {median(service_cpu):.2f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[8, 32])
    parser.add_argument("--rounds", type=int, default=5, help="0: skip the run_evals part")
    parser.add_argument("--stored-items", type=int, default=150, help="0: skip the Service part")
    parser.add_argument("--stored-rounds", type=int, default=3, help="0: skip the Service part")
    parser.add_argument("--own-cpu-rounds", type=int, default=3, help="0: skip that part")
    arguments = parser.parse_args()
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if arguments.own_cpu_rounds > 0:
        asyncio.run(own_cpu(2000, arguments.own_cpu_rounds))
    if arguments.rounds > 0:
        process, url = start_fake_judge()
        try:
            asyncio.run(measure(url, arguments.items, arguments.concurrency, arguments.rounds))
        finally:
            process.terminate()
            process.wait()
    if arguments.stored_items > 0 and arguments.stored_rounds > 0:
        process, url = start_fake_judge("--from-schema")
        try:
            with tempfile.TemporaryDirectory() as folder:
                measure_stored(
                    url,
                    arguments.stored_items,
                    arguments.concurrency[0],
                    arguments.stored_rounds,
                    Path(folder),
                )
        finally:
            process.terminate()
            process.wait()
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
