"""Import of a 100,000-score Mastra store (docs/mastra.md, "Speed").

    python bench/mastra_import.py [--items 25000] [--experiments 1] [--keep PATH]

The store: Mastra's own tables made by Mastra (tests/mastra/store_maker/make_store.mjs, with
node and its `npm ci`, against a loopback fake judge), then filled through scorelab's Mastra
writer (`MastraStore.insert`, JSONB as Mastra writes it) with a dataset of `--items` items in
Mastra's message structure and, per experiment, a result per item and four scores per item
(keyword coverage, completeness, tone, answer relevancy: step results, reasons, the relevancy
judge's prompts), i.e. items x 4 x experiments scores (100,000 by default).

The import (`Service.import_mastra` into a fresh scorelab SQLite file) runs in its own
subprocess: its time is the wall clock around the call, its peak resident memory that
process's `VmHWM` (/proc/self/status). Target: >= 20,000 scores/s and peak RSS < 500 MB.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
MAKER = ROOT / "tests" / "mastra" / "store_maker"
SCORERS = (
    "keyword-coverage-scorer",
    "completeness-scorer",
    "tone-scorer",
    "answer-relevancy-scorer",
)
_TEXT = (
    "watermelon seeds pass through the digestive system fortune cookies were popularised in "
    "california veins appear blue because blue light does not penetrate deeply into tissue "
    "the spiciest part of a chili pepper is the placenta matadors wave red capes by tradition"
)
_WORDS = tuple(_TEXT.split())


def message(role: str, text: str, index: int) -> dict[str, Any]:
    return {
        "id": f"msg-{role}-{index}",
        "role": role,
        "createdAt": "2026-12-01T00:00:00.000Z",
        "content": {"format": 2, "parts": [{"type": "text", "text": text}], "content": text},
    }


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n)).capitalize() + "."


def make_tables(path: Path) -> None:
    """Mastra's tables, made by Mastra (one tiny dataset and its experiments)."""
    from core.testing.fake_judge import FakeJudge, answer_from_schema

    with FakeJudge(answer_from_schema) as judge:
        subprocess.run(
            [
                "node",
                "make_store.mjs",
                "--store",
                f"file:{path}",
                "--judge",
                judge.url,
                "--items",
                "1",
            ],
            cwd=MAKER,
            check=True,
            capture_output=True,
            timeout=300,
        )


def fill(path: Path, items: int, experiments: int) -> int:
    from core.storage.mastra_store import (
        DATASET_ITEMS,
        DATASETS,
        EXPERIMENT_RESULTS,
        EXPERIMENTS,
        SCORES,
        open_mastra_store,
    )

    rng = random.Random(7)
    now = datetime.now(UTC)
    dataset_id = str(uuid.uuid4())
    questions = [(str(uuid.uuid4()), sentence(rng, 9), sentence(rng, 12)) for _ in range(items)]
    written = 0
    with open_mastra_store(f"file:{path}", writable=True) as mastra, mastra.writing():
        mastra.insert(
            DATASETS,
            [{"id": dataset_id, "name": "bench", "version": 1, "createdAt": now, "updatedAt": now}],
        )
        mastra.insert(
            DATASET_ITEMS,
            [
                {
                    "id": item_id,
                    "datasetId": dataset_id,
                    "datasetVersion": 1,
                    "isDeleted": False,
                    "input": {"inputMessages": [message("user", question, n)]},
                    "groundTruth": truth,
                    "metadata": {
                        "category": rng.choice(("Biology", "Law", "Misconceptions")),
                        "difficulty": rng.choice(("easy", "hard")),
                    },
                    "createdAt": now,
                    "updatedAt": now,
                }
                for n, (item_id, question, truth) in enumerate(questions)
            ],
        )
        for _ in range(experiments):
            run_id = str(uuid.uuid4())
            mastra.insert(
                EXPERIMENTS,
                [
                    {
                        "id": run_id,
                        "name": f"bench {run_id[:8]}",
                        "datasetId": dataset_id,
                        "datasetVersion": 1,
                        "status": "completed",
                        "totalItems": items,
                        "succeededCount": items,
                        "failedCount": 0,
                        "skippedCount": 0,
                        "startedAt": now,
                        "completedAt": now,
                        "createdAt": now,
                        "updatedAt": now,
                    }
                ],
            )
            results, scores = [], []
            for n, (item_id, question, truth) in enumerate(questions):
                raw_in = {"inputMessages": [message("user", question, n)]}
                raw_out = [message("assistant", sentence(rng, 14), n)]
                results.append(
                    {
                        "id": str(uuid.uuid4()),
                        "experimentId": run_id,
                        "itemId": item_id,
                        "itemDatasetVersion": 1,
                        "input": raw_in,
                        "output": raw_out,
                        "groundTruth": truth,
                        "metadata": None,
                        "startedAt": now,
                        "completedAt": now,
                        "retryCount": 0,
                        "createdAt": now,
                    }
                )
                for scorer_id in SCORERS:
                    judged = scorer_id == "answer-relevancy-scorer"
                    scores.append(
                        {
                            "id": str(uuid.uuid4()),
                            "scorerId": scorer_id,
                            "runId": run_id,
                            "scorer": {"id": scorer_id, "name": scorer_id, "hasJudge": judged},
                            "score": rng.random(),
                            "source": "TEST",
                            "entityId": item_id,
                            "entityType": "AGENT",
                            "entity": {"id": "inline", "name": "inline"},
                            "preprocessStepResult": {"statements": [question]}
                            if judged
                            else {"referenceKeywords": 9, "responseKeywords": 7},
                            "analyzeStepResult": {"results": [{"result": "yes", "reason": "ok"}]}
                            if judged
                            else None,
                            "reason": sentence(rng, 12) if judged else None,
                            "analyzePrompt": "Evaluate each statement: " + question
                            if judged
                            else None,
                            "input": raw_in,
                            "output": raw_out,
                            "createdAt": now,
                            "updatedAt": now,
                        }
                    )
            mastra.insert(EXPERIMENT_RESULTS, results)
            mastra.insert(SCORES, scores)
            written += len(scores)
    return written


def measure(store: Path, database: Path) -> dict[str, Any]:
    code = f"""
import json, time
from core.service import Service
service = Service({f"sqlite:///{database}"!r})
started = time.perf_counter()
outcome = service.import_mastra({f"file:{store}"!r}, live=False)
seconds = time.perf_counter() - started
status = open("/proc/self/status").read()
peak = int(next(l for l in status.splitlines() if l.startswith("VmHWM")).split()[1]) * 1024
print(json.dumps({{"seconds": seconds, "scores": outcome.new_scores, "items": outcome.new_items,
                  "peak": peak}}))
"""
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    found: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=25_000)
    parser.add_argument("--experiments", type=int, default=1)
    parser.add_argument("--keep", type=Path, help="keep the Mastra store made at this path")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        store = arguments.keep or Path(folder) / "mastra.db"
        started = time.perf_counter()
        make_tables(store)
        made = fill(store, arguments.items, arguments.experiments)
        print(
            f"store: {made:,} scores over {arguments.items:,} items "
            f"({store.stat().st_size / 2**20:.1f} MiB, made in "
            f"{time.perf_counter() - started:.1f} s)"
        )
        first = measure(store, Path(folder) / "scorelab.db")
        rate = first["scores"] / first["seconds"]
        print(
            f"import: {first['scores']:,} scores, {first['items']:,} items in "
            f"{first['seconds']:.2f} s = {rate:,.0f} scores/s (target >= 20,000); peak RSS "
            f"{first['peak'] / 2**20:.0f} MiB (target < 500)"
        )
        again = measure(store, Path(folder) / "scorelab.db")
        print(f"import again: {again['scores']} new scores in {again['seconds']:.2f} s")
        print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f}")


if __name__ == "__main__":
    main()
