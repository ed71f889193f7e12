"""Writing 100k successful scorer results (each with a Mastra-format result and a judge
record) to the store, as the service does: bulk inserts in batches.

    python bench/write_results.py [--results 100000] [--batch 500] [--postgres URL]

Target: seconds, not minutes. SQLite in a temporary file always; PostgreSQL too when a URL is
given (or SCORELAB_TEST_POSTGRES_URL is set; a fresh schema is used and dropped).
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
import uuid
from pathlib import Path

import sqlalchemy

from core.records import ColumnMapping, DatasetItem, ScorerOutcome, ScorerSpec
from core.run_results import JudgeUsage
from core.storage import Store


def outcome(n: int) -> ScorerOutcome:
    execution = {
        "status": "success",
        "prompt": f"Score how well the answer addresses question {n}. Answer with JSON.",
        "judgeModelId": "gpt-4o-mini-2024-07-18",
        "judgeProvider": "openai",
        "attemptCount": 1,
        "modelCallCount": 1,
        "durationMs": 812,
        "output": 0.75,
        "usage": {"inputTokens": 310, "outputTokens": 12, "totalTokens": 322},
    }
    result = {
        "runId": str(uuid.UUID(int=n)),
        "input": f"How do I configure option {n}?",
        "output": f"Set option {n} in the settings file, then restart the service.",
        "groundTruth": f"Set option {n} and restart.",
        "score": 0.75,
        "reason": "The answer covers the setting and the restart.",
        "analyzeStepResult": {"verdicts": [{"verdict": "yes", "reason": "covers it"}] * 3},
        "generateScorePrompt": execution["prompt"],
        "judge": {"generateScore": {"executions": [execution]}},
    }
    return ScorerOutcome(
        item_id=f"item-{n // 4:06d}",
        scorer_id=f"scorer-{n % 4}",
        status="success",
        score=0.75,
        reason=result["reason"],
        result=result,
        duration_ms=812,
        usage=JudgeUsage(input_tokens=310, output_tokens=12, total_tokens=322),
        judge_calls=1,
        judge_attempts=1,
    )


def measure(label: str, url: str, outcomes: list[ScorerOutcome], batch: int) -> None:
    store = Store(url)
    items = [
        DatasetItem(id=f"item-{n:06d}", input="q", output="a")
        for n in range(len(outcomes) // 4 + 1)
    ]
    dataset = store.save_dataset(
        name="bench",
        file_name="bench.csv",
        format="csv",
        fingerprint="0" * 64,
        columns=["input", "output"],
        mapping=ColumnMapping(input="input", output="output"),
        items=items,
    )
    experiment = store.create_experiment(
        name="bench",
        dataset_id=dataset.id,
        scorers=[ScorerSpec(scorer_id=f"scorer-{k}") for k in range(4)],
        scorer_ids=[f"scorer-{k}" for k in range(4)],
        judge_model="openai/gpt-4o-mini",
        api_base=None,
        judge_settings={},
        concurrency=8,
    )
    started = time.perf_counter()
    for start in range(0, len(outcomes), batch):
        store.add_results(experiment.id, outcomes[start : start + batch])
    elapsed = time.perf_counter() - started
    assert store.result_count(experiment.id) == len(outcomes)
    started = time.perf_counter()
    means = store.get_experiment(experiment.id).scores
    query = time.perf_counter() - started
    assert means == {f"scorer-{k}": 0.75 for k in range(4)}
    store.close()
    print(
        f"  {label:<10} {elapsed:6.2f} s  ({len(outcomes) / elapsed:,.0f} results/s; "
        f"per-scorer means in SQL: {query * 1000:.0f} ms)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=int, default=100_000)
    parser.add_argument("--batch", type=int, default=500, help="results per add_results call")
    parser.add_argument("--postgres", default=os.environ.get("SCORELAB_TEST_POSTGRES_URL"))
    arguments = parser.parse_args()
    outcomes = [outcome(n) for n in range(arguments.results)]
    print(f"{arguments.results:,} results, batches of {arguments.batch} (target: seconds)")
    with tempfile.TemporaryDirectory() as folder:
        measure("SQLite", f"sqlite:///{Path(folder) / 'bench.db'}", outcomes, arguments.batch)
    if arguments.postgres:
        base = arguments.postgres.replace("postgresql://", "postgresql+psycopg://", 1)
        schema = f"bench_{uuid.uuid4().hex[:8]}"
        admin = sqlalchemy.create_engine(base)
        with admin.begin() as connection:
            connection.execute(sqlalchemy.text(f'CREATE SCHEMA "{schema}"'))
        try:
            separator = "&" if "?" in base else "?"
            url = f"{base}{separator}options=-csearch_path%3D{schema}"
            measure("PostgreSQL", url, outcomes, arguments.batch)
        finally:
            with admin.begin() as connection:
                connection.execute(sqlalchemy.text(f'DROP SCHEMA "{schema}" CASCADE'))
            admin.dispose()


if __name__ == "__main__":
    main()
