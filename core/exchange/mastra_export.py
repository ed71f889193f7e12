"""A scorelab experiment written into a Mastra store (docs/mastra.md, "Write-back"), in Mastra's
own schema, so that Mastra's API and Studio list it beside the experiments made in TypeScript.

- The dataset: the Mastra dataset it was imported from when the store has it (its items are the
  experiment's items: same ids), else the one an earlier export made of the same scorelab
  dataset (found by `metadata.scorelabDatasetId`), else a new Mastra dataset (version 1) with an
  item per scorelab item (same ids, input, ground truth, metadata).
- The experiment: a new one (`metadata.scorelabExperimentId` names where it came from); an
  experiment exported before is refused, never written twice.
- One experiment result per item with a stored score (its output, its `comment` and `tags`
  metadata columns as Mastra's comment and tags), and one score (`source` TEST) per stored
  scorer result: score, reason, step results, prompts. Failed scorer runs are never stored in
  scorelab, so never written here either.

Everything goes in one write transaction: the Mastra store gets it all or nothing.
"""

from __future__ import annotations

import json
import uuid
from collections import defaultdict
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from core.exchange.mastra_records import MastraExport
from core.records import DatasetItem, ExperimentInfo, ScorerCatalogEntry, ScorerOutcome
from core.storage.mastra_store import (
    DATASET_ITEMS,
    DATASET_VERSIONS,
    DATASETS,
    EXPERIMENT_RESULTS,
    EXPERIMENTS,
    SCORES,
    MastraStore,
    MastraStoreError,
    open_mastra_store,
)
from core.storage.store import Store

__all__ = ["export_to_mastra"]

_STEP_KEYS = (
    "preprocessStepResult",
    "extractStepResult",
    "analyzeStepResult",
    "preprocessPrompt",
    "extractPrompt",
    "analyzePrompt",
    "generateScorePrompt",
    "generateReasonPrompt",
    "reasonPrompt",
)
_ENTITY = {"id": "scorelab", "name": "scorelab"}


def export_to_mastra(
    store: Store,
    experiment_id: str,
    location: str,
    catalog: Mapping[str, ScorerCatalogEntry] | None = None,
) -> MastraExport:
    """Write experiment `experiment_id` of `store` into the Mastra store at `location`
    (`catalog`: the scorers' names and descriptions, by id, for Mastra's `scorer` column).

    Raises NotFoundError (no such experiment) or MastraStoreError (the store cannot be written,
    or already has this experiment): the Mastra store is unchanged then."""
    info = store.get_experiment(experiment_id)
    outcomes = store.experiment_results(experiment_id)
    if not outcomes:
        raise MastraStoreError(
            f"Experiment {info.name!r} has no stored score: nothing to write into Mastra"
        )
    by_item: dict[str, list[ScorerOutcome]] = defaultdict(list)
    for outcome in outcomes:
        by_item[outcome.item_id].append(outcome)
    items = {item.id: item for item in store.dataset_items_by_id(info.dataset_id, list(by_item))}
    now = datetime.now(UTC)
    with open_mastra_store(location, writable=True) as mastra:
        _refuse_twice(mastra, info)
        dataset_id, version, created = _dataset(mastra, store, info, now)
        mastra_id = str(uuid.uuid4())
        with mastra.writing():
            if created:
                _write_dataset(mastra, store, info, dataset_id, now)
            mastra.insert(
                EXPERIMENTS,
                [_experiment_row(info, mastra_id, dataset_id, version, len(by_item), now)],
            )
            results = [
                _result_row(mastra_id, item_id, items.get(item_id), runs, version, now)
                for item_id, runs in by_item.items()
            ]
            mastra.insert(EXPERIMENT_RESULTS, results)
            mastra.insert(
                SCORES,
                [
                    _score_row(mastra_id, o, items.get(o.item_id), now, catalog or {})
                    for o in outcomes
                ],
            )
        return MastraExport(
            location=mastra.location,
            dataset_id=dataset_id,
            dataset_created=created,
            experiment_id=mastra_id,
            results=len(results),
            scores=len(outcomes),
        )


def _refuse_twice(mastra: MastraStore, info: ExperimentInfo) -> None:
    for experiment in mastra.experiments():
        metadata = experiment.get("metadata") or {}
        if isinstance(metadata, dict) and metadata.get("scorelabExperimentId") == info.id:
            raise MastraStoreError(
                f"Experiment {info.name!r} is already in {mastra.location} as Mastra experiment "
                f"{experiment['id']} (an export writes an experiment once)"
            )


def _dataset(
    mastra: MastraStore, store: Store, info: ExperimentInfo, now: datetime
) -> tuple[str, int, bool]:
    """The Mastra dataset id and version to use, and whether it must be created."""
    datasets = {d["id"]: d for d in mastra.datasets()}
    origin = (info.judge_settings or {}).get("importedFrom") or {}
    source = origin.get("datasetId") if isinstance(origin, dict) else None
    if source in datasets:
        return str(source), int(datasets[source]["version"]), False
    for dataset in datasets.values():
        metadata = dataset.get("metadata") or {}
        if isinstance(metadata, dict) and metadata.get("scorelabDatasetId") == info.dataset_id:
            return str(dataset["id"]), int(dataset["version"]), False
    return str(uuid.uuid4()), 1, True


def _write_dataset(
    mastra: MastraStore, store: Store, info: ExperimentInfo, dataset_id: str, now: datetime
) -> None:
    dataset = store.get_dataset(info.dataset_id)
    mastra.insert(
        DATASETS,
        [
            {
                "id": dataset_id,
                "name": dataset.name,
                "description": f"Exported from scorelab ({dataset.file_name})",
                "metadata": {
                    "scorelabDatasetId": dataset.id,
                    "scorelabFingerprint": dataset.fingerprint,
                },
                "version": 1,
                "createdAt": now,
                "updatedAt": now,
            }
        ],
    )
    mastra.insert(
        DATASET_VERSIONS,
        [{"id": str(uuid.uuid4()), "datasetId": dataset_id, "version": 1, "createdAt": now}],
    )
    rows = [
        {
            "id": item.id,
            "datasetId": dataset_id,
            "datasetVersion": 1,
            "validTo": None,
            "isDeleted": False,
            "input": item.input,
            "groundTruth": item.ground_truth,
            "metadata": _item_metadata(item),
            "createdAt": now,
            "updatedAt": now,
        }
        for item in store.iter_dataset_items(dataset.id)
    ]
    mastra.insert(DATASET_ITEMS, rows)


def _item_metadata(item: DatasetItem) -> dict[str, Any] | None:
    kept = {k: v for k, v in item.metadata.items() if k not in ("comment", "tags")}
    return kept or None


def _experiment_row(
    info: ExperimentInfo,
    mastra_id: str,
    dataset_id: str,
    version: int,
    items: int,
    now: datetime,
) -> dict[str, Any]:
    return {
        "id": mastra_id,
        "name": info.name,
        "description": info.note,
        "metadata": {
            "scorelabExperimentId": info.id,
            "scorelabDatasetId": info.dataset_id,
            "judgeModel": info.judge_model,
            "tags": list(info.tags),
        },
        "datasetId": dataset_id,
        "datasetVersion": version,
        "targetType": "agent",
        "targetId": "scorelab",
        "scorerIds": list(info.scorer_ids),
        "status": "completed",
        "totalItems": items,
        "succeededCount": items,
        "failedCount": 0,
        "skippedCount": 0,
        "startedAt": info.started_at or info.created_at,
        "completedAt": info.finished_at or now,
        "createdAt": info.created_at,
        "updatedAt": now,
    }


def _result_row(
    mastra_id: str,
    item_id: str,
    item: DatasetItem | None,
    runs: list[ScorerOutcome],
    version: int,
    now: datetime,
) -> dict[str, Any]:
    raw = (runs[0].result or {}) if runs else {}
    metadata = item.metadata if item is not None else {}
    tags = metadata.get("tags")
    return {
        "id": str(uuid.uuid4()),
        "experimentId": mastra_id,
        "itemId": item_id,
        "itemDatasetVersion": version,
        "input": raw.get("input", item.input if item else None),
        "output": raw.get("output", item.output if item else None),
        "groundTruth": item.ground_truth if item else None,
        "metadata": _item_metadata(item) if item else None,
        "error": None,
        "startedAt": now,
        "completedAt": now,
        "retryCount": 0,
        "attempt": 0,
        "status": None,
        "tags": [t.strip() for t in str(tags).split(",") if t.strip()] if tags else None,
        "comment": str(metadata["comment"]) if metadata.get("comment") else None,
        "createdAt": now,
    }


def _score_row(
    mastra_id: str,
    outcome: ScorerOutcome,
    item: DatasetItem | None,
    now: datetime,
    catalog: Mapping[str, ScorerCatalogEntry],
) -> dict[str, Any]:
    result = outcome.result or {}
    entry = catalog.get(outcome.scorer_id)
    imported = result.get("mastraScorer")
    scorer = (
        imported
        if isinstance(imported, dict)
        else {
            "id": outcome.scorer_id,
            "name": entry.name if entry else outcome.scorer_id,
            "description": entry.description if entry else "",
            "hasJudge": entry.calls_judge if entry else outcome.judge_calls > 0,
        }
    )
    reason = outcome.reason
    row: dict[str, Any] = {
        "id": str(uuid.uuid4()),
        "scorerId": outcome.scorer_id,
        "runId": mastra_id,
        "scorer": scorer,
        "score": outcome.score,
        "reason": reason if reason is None or isinstance(reason, str) else json.dumps(reason),
        "metadata": {
            "scorelab": {"durationMs": outcome.duration_ms, "judgeCalls": outcome.judge_calls}
        },
        "input": result.get("input", item.input if item else None),
        "output": result.get("output", item.output if item else None),
        "additionalContext": result.get("additionalContext"),
        "requestContext": result.get("requestContext"),
        "entityType": "AGENT",
        "entity": _ENTITY,
        "entityId": outcome.item_id,
        "source": "TEST",
        "createdAt": now,
        "updatedAt": now,
    }
    for key in _STEP_KEYS:
        value = result.get(key)
        if key.endswith("Prompt") and value is not None and not isinstance(value, str):
            value = json.dumps(value)
        row[key] = value
    return row
