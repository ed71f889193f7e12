"""A Mastra project's own store imported into scorelab (docs/mastra.md, "What is imported").

- A Mastra dataset becomes a scorelab dataset: Mastra's item ids as ids, the input as the text
  a person reads, the ground truth, the metadata as metadata columns; its version in its name.
- A Mastra experiment becomes a scorelab experiment over a dataset of its own: the dataset's
  items with the outputs that experiment produced (so a scorelab experiment over the same
  dataset pairs with it by item id on Compare), a result's `comment` and `tags` as the metadata
  columns `comment` and `tags`; each stored score a scorer result (score, reason, each step's
  result and prompt, the raw input and output Mastra scored).
- Live scores (`source` LIVE) become one experiment per entity (agent or workflow), an item per
  scored run, with its trace, span, thread and resource ids as metadata.

Ids are derived from Mastra's, so a second import finds what the first made and adds only what
is new. The store is read in one read transaction (a consistent view even while Mastra writes),
and nothing is written to scorelab's store before an experiment has been read whole.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from datetime import UTC, datetime
from typing import Any

from core.exchange.mastra_records import (
    MastraDatasetEntry,
    MastraExperimentEntry,
    MastraImport,
    MastraLiveEntry,
    MastraStoreSummary,
)
from core.records import ColumnMapping, DatasetItem, ExperimentStatus
from core.storage.mastra_shelf import (
    add_scored_rows,
    merge_dataset,
    merge_experiment,
    set_run_counts,
)
from core.storage.mastra_store import MastraStore, MastraStoreError, open_mastra_store
from core.storage.store import NotFoundError, Store

__all__ = [
    "MastraStoreError",
    "import_mastra_store",
    "message_text",
    "scorelab_experiment_id",
    "summarize_mastra_store",
]

_LIVE_METADATA = ("traceId", "spanId", "threadId", "resourceId", "entityType", "source")
_STATUSES: dict[str, ExperimentStatus] = {
    "completed": "completed",
    "failed": "failed",
    "running": "running",
    "pending": "pending",
}


def scorelab_id(kind: str, *parts: str) -> str:
    """The scorelab id of something imported from Mastra: `mastra-<kind>-` and a hash of its
    Mastra ids (the same on every import)."""
    digest = hashlib.blake2b("\x1f".join(parts).encode(), digest_size=16).hexdigest()
    return f"mastra-{kind}-{digest}"


def scorelab_experiment_id(mastra_experiment_id: str) -> str:
    """The scorelab experiment a Mastra experiment is imported as."""
    return scorelab_id("e", mastra_experiment_id)


def message_text(value: Any) -> Any:
    """The text a person reads of a Mastra agent input (`{inputMessages: [...]}`) or output (a
    list of messages): each message's text, one per line (prefixed by its role when several
    roles speak). Anything else is returned as it is."""
    messages: Any = value
    if isinstance(value, dict) and isinstance(value.get("inputMessages"), list):
        messages = value["inputMessages"]
    if isinstance(messages, dict) and "role" in messages and "content" in messages:
        messages = [messages]
    if not isinstance(messages, list) or not messages:
        return value
    texts: list[tuple[str, str]] = []
    for message in messages:
        if not isinstance(message, dict) or "content" not in message:
            return value
        texts.append((str(message.get("role", "")), _content_text(message["content"])))
    if len({role for role, _ in texts}) > 1:
        return "\n".join(f"{role}: {text}" for role, text in texts)
    return "\n".join(text for _, text in texts)


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, dict):
        if isinstance(content.get("content"), str):
            return str(content["content"])
        content = content.get("parts", [])
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return json.dumps(content, ensure_ascii=False)


def summarize_mastra_store(location: str) -> MastraStoreSummary:
    """What the Mastra store at `location` holds: its datasets, experiments (with their counts
    and scorers) and live scores by entity. Raises MastraStoreError."""
    with open_mastra_store(location) as mastra, mastra.snapshot():
        experiments = mastra.experiments()
        scorers = mastra.scorer_ids_by_run()
        return MastraStoreSummary(
            location=mastra.location,
            datasets=[
                MastraDatasetEntry(
                    id=d["id"], name=d["name"], version=int(d["version"]), item_count=d["itemCount"]
                )
                for d in mastra.datasets()
            ],
            experiments=[
                MastraExperimentEntry(
                    id=e["id"],
                    name=e.get("name") or e["id"],
                    status=str(e["status"]),
                    dataset_id=e.get("datasetId"),
                    result_count=e["resultCount"],
                    score_count=e["scoreCount"],
                    scorer_ids=scorers.get(e["id"], []),
                )
                for e in experiments
            ],
            live=[
                MastraLiveEntry(entity_type=kind, entity_id=entity, score_count=n)
                for (kind, entity), n in sorted(mastra.live_score_groups().items())
            ],
            skipped_columns=list(mastra.skipped),
        )


def import_mastra_store(
    store: Store,
    location: str,
    *,
    datasets: Sequence[str] | None = None,
    experiments: Sequence[str] | None = None,
    live: bool = True,
) -> MastraImport:
    """Import the Mastra store at `location` into `store`: the datasets and experiments with
    these Mastra ids (None: all of them) and, with `live`, the live scores. Importing again adds
    only what is not there yet. Raises MastraStoreError (the Mastra store cannot be read:
    nothing of it is written then) or StorageError."""
    report: dict[str, Any] = {
        "dataset_ids": [],
        "experiment_ids": [],
        "new_datasets": 0,
        "new_experiments": 0,
        "new_items": 0,
        "new_scores": 0,
        "skipped_scores": 0,
    }
    with open_mastra_store(location) as mastra, mastra.snapshot():
        found = {d["id"]: d for d in mastra.datasets()}
        runs = mastra.experiments()
        _check_chosen("dataset", datasets, found)
        _check_chosen("experiment", experiments, {e["id"]: e for e in runs})
        for dataset in found.values():
            if datasets is None or dataset["id"] in datasets:
                _import_dataset(store, mastra, dataset, report)
        scorers = mastra.scorer_ids_by_run()
        for run in runs:
            if experiments is None or run["id"] in experiments:
                of_run = found.get(run.get("datasetId") or "")
                _import_experiment(store, mastra, run, of_run, scorers.get(run["id"], []), report)
        if live:
            _import_live(store, mastra, report)
        skipped = list(mastra.skipped)
        shown = mastra.location
    return MastraImport(location=shown, skipped_columns=skipped, **report)


def _check_chosen(kind: str, chosen: Sequence[str] | None, found: dict[str, Any]) -> None:
    unknown = [c for c in chosen or () if c not in found]
    if unknown:
        raise MastraStoreError(
            f"No Mastra {kind} with id {', '.join(map(repr, unknown))} in this store "
            f"(it has {len(found)})"
        )


def _import_dataset(
    store: Store, mastra: MastraStore, dataset: dict[str, Any], report: dict[str, Any]
) -> None:
    version = int(dataset["version"])
    dataset_id = scorelab_id("d", dataset["id"], str(version))
    try:
        if store.get_dataset(dataset_id).item_count == dataset["itemCount"]:
            report["dataset_ids"].append(dataset_id)  # this version is stored whole already
            return
    except NotFoundError:
        pass
    items = [
        _item(row, row.get("groundTruth"), row.get("metadata"), None)
        for row in mastra.dataset_items(dataset["id"], version)
    ]
    _store_dataset(
        store,
        dataset_id,
        f"{dataset['name']} (Mastra v{version})",
        f"{mastra.location} · dataset {dataset['id']} v{version}",
        items,
        report,
    )


def _import_experiment(
    store: Store,
    mastra: MastraStore,
    run: dict[str, Any],
    dataset: dict[str, Any] | None,
    scorer_ids: list[str],
    report: dict[str, Any],
) -> None:
    if _already_whole(store, run):
        report["experiment_ids"].append(scorelab_experiment_id(run["id"]))
        return
    items: list[DatasetItem] = []
    for result in mastra.experiment_results(run["id"]):
        metadata = dict(result.get("metadata") or {})
        if result.get("comment"):
            metadata["comment"] = result["comment"]
        if result.get("tags"):
            metadata["tags"] = ", ".join(map(str, result["tags"]))
        items.append(
            _item(
                {"id": result["itemId"], "input": result.get("input")},
                result.get("groundTruth"),
                metadata,
                result.get("output"),
            )
        )
    name = run.get("name") or run["id"]
    base = f"{dataset['name']} · " if dataset else ""
    dataset_id = _store_dataset(
        store,
        scorelab_id("x", run["id"]),
        f"{base}{name} (Mastra experiment)",
        f"{mastra.location} · experiment {run['id']}",
        items,
        report,
    )
    failed = int(run.get("failedCount") or 0)
    origin = {
        "kind": "mastra-experiment",
        "store": mastra.location,
        "experimentId": run["id"],
        "datasetId": run.get("datasetId"),
        "datasetVersion": run.get("datasetVersion"),
        "status": run.get("status"),
        "totalItems": run.get("totalItems"),
        "succeededCount": run.get("succeededCount"),
        "failedCount": failed,
        "skippedCount": run.get("skippedCount"),
        "targetType": run.get("targetType"),
        "targetId": run.get("targetId"),
    }
    _store_experiment(
        store,
        scorelab_experiment_id(run["id"]),
        str(name),
        dataset_id,
        scorer_ids,
        _STATUSES.get(str(run.get("status")), "completed"),
        failed * max(len(scorer_ids), 1),
        run.get("description"),
        origin,
        (run.get("createdAt"), run.get("startedAt"), run.get("completedAt")),
        mastra.scores(run["id"], raw_json=True),
        "entityId",
        {item.id for item in items},
        report,
    )


def _already_whole(store: Store, run: dict[str, Any]) -> bool:
    """Whether a finished Mastra experiment is stored whole already (its items and as many
    scores as Mastra has): a second import then reads none of its rows again."""
    if run.get("status") not in ("completed", "failed"):
        return False
    try:
        info = store.get_experiment(scorelab_experiment_id(run["id"]))
    except NotFoundError:
        return False
    return (
        store.result_count(info.id) == run["scoreCount"]
        and info.total_items == run["resultCount"]
        and info.status == _STATUSES.get(str(run["status"]))
    )


def _import_live(store: Store, mastra: MastraStore, report: dict[str, Any]) -> None:
    for (kind, entity), scorer_ids in sorted(mastra.live_scorer_ids().items()):
        items: dict[str, DatasetItem] = {}
        first: Any = None
        last: Any = None
        for row in mastra.live_scores((kind, entity)):
            metadata = {k: row.get(k) for k in _LIVE_METADATA if row.get(k) is not None}
            last = last or row.get("createdAt")
            first = row.get("createdAt")
            items.setdefault(
                row["runId"],
                _item(
                    {"id": row["runId"], "input": row.get("input")},
                    None,
                    metadata,
                    row.get("output"),
                ),
            )
        label = f"{kind.lower()} {entity}"
        dataset_id = _store_dataset(
            store,
            scorelab_id("ld", kind, entity),
            f"Live scores of {label} (Mastra)",
            f"{mastra.location} · live {kind} {entity}",
            list(items.values()),
            report,
        )
        origin = {
            "kind": "mastra-live",
            "store": mastra.location,
            "entityType": kind,
            "entityId": entity,
        }
        _store_experiment(
            store,
            scorelab_id("l", kind, entity),
            f"Live scores of {label}",
            dataset_id,
            scorer_ids,
            "completed",
            0,
            None,
            origin,
            (first, first, last),
            mastra.live_scores((kind, entity), raw_json=True),
            "runId",
            set(items),
            report,
        )


def _item(row: dict[str, Any], ground_truth: Any, metadata: Any, output: Any) -> DatasetItem:
    return DatasetItem(
        id=str(row["id"]),
        input=message_text(row.get("input")),
        output=message_text(output),
        ground_truth=ground_truth,
        metadata=_flat_metadata(metadata),
    )


def _flat_metadata(metadata: Any) -> dict[str, Any]:
    """Metadata as columns: scalars as they are, anything nested as its JSON text."""
    if not isinstance(metadata, dict):
        return {} if metadata is None else {"metadata": json.dumps(metadata, ensure_ascii=False)}
    return {
        str(key): value
        if value is None or isinstance(value, str | int | float | bool)
        else json.dumps(value, ensure_ascii=False)
        for key, value in metadata.items()
    }


_RAW_KEYS = (
    "input",
    "output",
    "preprocessStepResult",
    "extractStepResult",
    "analyzeStepResult",
    "additionalContext",
    "requestContext",
)
"""JSON columns of a score passed into its scorelab result as the JSON text they are."""
_PROMPTS = (
    "preprocessPrompt",
    "extractPrompt",
    "analyzePrompt",
    "generateScorePrompt",
    "generateReasonPrompt",
    "reasonPrompt",
)
_ORIGIN_KEYS = (
    "id",
    "source",
    "entityType",
    "entityId",
    "traceId",
    "spanId",
    "threadId",
    "resourceId",
    "createdAt",
)


def _score_rows(
    rows: Iterable[dict[str, Any]], item_key: str, items: set[str], skipped: list[int]
) -> Iterator[dict[str, Any]]:
    """Scores (JSON columns as text) as rows of `scorer_results`: the result (Mastra's score
    row in scorelab's result format) assembled as JSON text around the columns' own JSON.
    A score without an item of `items`, a scorer id or a number is counted in `skipped`."""
    for row in rows:
        item_id, scorer_id, score = row.get(item_key), row.get("scorerId"), row.get("score")
        if item_id not in items or not scorer_id or not isinstance(score, int | float):
            skipped[0] += 1
            continue
        head: dict[str, Any] = {"runId": row["runId"], "score": score, "reason": row.get("reason")}
        head.update({k: row[k] for k in _PROMPTS if row.get(k) is not None})
        origin = {k: row[k] for k in _ORIGIN_KEYS if row.get(k) is not None}
        head["mastra"] = _json_ready(origin)
        text = json.dumps(head, ensure_ascii=False)[:-1]
        raw = "".join(f',"{k}":{row[k]}' for k in _RAW_KEYS if row.get(k) is not None)
        extra = "".join(
            f',"mastra{k[0].upper()}{k[1:]}":{row[k]}'
            for k in ("scorer", "metadata")
            if row.get(k) is not None
        )
        yield {
            "item_id": str(item_id),
            "scorer_id": str(scorer_id),
            "score": float(score),
            "reason_json": json.dumps(row.get("reason"), ensure_ascii=False),
            "result_json": text + raw + extra + "}",
        }


def _json_ready(value: Any) -> Any:
    """Datetimes (PostgreSQL gives them) as ISO text, for the JSON column."""
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {k: _json_ready(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_json_ready(v) for v in value]
    return value


def _store_dataset(
    store: Store,
    dataset_id: str,
    name: str,
    file_name: str,
    items: list[DatasetItem],
    report: dict[str, Any],
) -> str:
    metadata = list(dict.fromkeys(k for item in items for k in item.metadata))
    mapping = ColumnMapping(
        id="id", input="input", output="output", ground_truth="ground_truth", metadata=metadata
    )
    existed = _exists(store, dataset_id)
    _, added = merge_dataset(
        store,
        dataset_id=dataset_id,
        name=name,
        file_name=file_name,
        fingerprint=dataset_id,
        columns=["id", "input", "output", "ground_truth", *metadata],
        mapping=mapping,
        items=items,
    )
    report["dataset_ids"].append(dataset_id)
    report["new_datasets"] += 0 if existed else 1
    report["new_items"] += added
    return dataset_id


def _exists(store: Store, dataset_id: str) -> bool:
    try:
        store.get_dataset(dataset_id)
    except NotFoundError:
        return False
    return True


def _store_experiment(
    store: Store,
    experiment_id: str,
    name: str,
    dataset_id: str,
    scorer_ids: list[str],
    status: ExperimentStatus,
    failed_runs: int,
    note: str | None,
    origin: dict[str, Any],
    times: tuple[Any, Any, Any],
    scores: Iterable[dict[str, Any]],
    item_key: str,
    items: set[str],
    report: dict[str, Any],
) -> None:
    created, started, finished = (_when(t) for t in times)
    made = merge_experiment(
        store,
        experiment_id=experiment_id,
        name=name,
        dataset_id=dataset_id,
        scorer_ids=scorer_ids,
        status=status,
        failed_runs=failed_runs,
        note=note,
        tags=["mastra"],
        origin=_json_ready(origin),
        created_at=created,
        started_at=started,
        finished_at=finished,
    )
    skipped = [0]
    added = add_scored_rows(store, experiment_id, _score_rows(scores, item_key, items, skipped))
    set_run_counts(store, experiment_id)
    report["experiment_ids"].append(experiment_id)
    report["new_experiments"] += int(made)
    report["new_scores"] += added
    report["skipped_scores"] += skipped[0]


def _when(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, str) and value:
        try:
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None
        return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
    return None
