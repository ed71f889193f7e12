"""Managing datasets and experiments (issue 14): rename, a note and tags on an experiment,
finding a stored copy of an upload, and what a deletion takes with it (experiments, results,
reviews): `service.manage`; the checks live here, the writes in
the store (core/storage/_manage.py)."""

from __future__ import annotations

from collections.abc import Sequence

from core.errors import InvalidInputError
from core.records import DatasetInfo, DeletionImpact, ExperimentInfo
from core.service.context import DeskContext
from core.service.experiments_desk import ExperimentsDesk

__all__ = [
    "MAX_NAME_CHARS",
    "MAX_NOTE_CHARS",
    "MAX_TAGS",
    "MAX_TAG_CHARS",
    "ManageDesk",
    "checked_name",
    "checked_note",
    "checked_tags",
]

MAX_NAME_CHARS = 200
MAX_NOTE_CHARS = 4_000
MAX_TAGS = 10
MAX_TAG_CHARS = 32


def checked_name(name: str, what: str) -> str:
    """`name` without surrounding blanks; raises InvalidInputError when it is empty, too long
    or spans lines (`what`: "dataset" or "experiment", for the message)."""
    if not isinstance(name, str):
        raise InvalidInputError(f"The {what} name must be text, got {type(name).__name__}")
    clean = name.strip()
    if not clean:
        raise InvalidInputError(f"The {what} name is empty: give it at least one character")
    if len(clean) > MAX_NAME_CHARS:
        raise InvalidInputError(
            f"The {what} name is {len(clean):,} characters long: at most {MAX_NAME_CHARS} "
            "are allowed"
        )
    if "\n" in clean or "\r" in clean:
        raise InvalidInputError(f"The {what} name must be one line, got {clean[:40]!r}")
    return clean


def checked_note(note: str | None) -> str | None:
    """The note without surrounding blanks (None when empty); raises InvalidInputError when it
    is too long."""
    if note is None:
        return None
    if not isinstance(note, str):
        raise InvalidInputError(f"The experiment note must be text, got {type(note).__name__}")
    clean = note.strip()
    if len(clean) > MAX_NOTE_CHARS:
        raise InvalidInputError(
            f"The experiment note is {len(clean):,} characters long: at most "
            f"{MAX_NOTE_CHARS:,} are allowed"
        )
    return clean or None


def checked_tags(tags: Sequence[str]) -> list[str]:
    """The tags without surrounding blanks, duplicates (ignoring case) dropped, in the order
    given; raises InvalidInputError naming the tag that is empty, too long, holds a comma or a
    line break, or when there are too many."""
    if isinstance(tags, str):
        raise InvalidInputError("Tags must be a list of strings, not one string")
    kept: list[str] = []
    seen: set[str] = set()
    for place, tag in enumerate(tags, start=1):
        if not isinstance(tag, str):
            raise InvalidInputError(f"Tag {place} must be text, got {type(tag).__name__}")
        clean = tag.strip()
        if not clean:
            raise InvalidInputError(f"Tag {place} is empty")
        if len(clean) > MAX_TAG_CHARS:
            raise InvalidInputError(
                f"Tag {place} ({clean[:MAX_TAG_CHARS]}…) is {len(clean)} characters long: "
                f"a tag may have at most {MAX_TAG_CHARS}"
            )
        if any(mark in clean for mark in ",\n\r"):
            raise InvalidInputError(
                f"Tag {place} ({clean!r}) holds a comma or a line break: commas separate tags"
            )
        if clean.casefold() not in seen:
            seen.add(clean.casefold())
            kept.append(clean)
    if len(kept) > MAX_TAGS:
        raise InvalidInputError(
            f"{len(kept)} tags given: an experiment may have at most {MAX_TAGS}"
        )
    return kept


class ManageDesk:
    """`service.manage`: renames, notes and tags, and what a deletion takes."""

    def __init__(self, context: DeskContext, experiments: ExperimentsDesk) -> None:
        self._ctx = context
        self._experiments = experiments

    def find_dataset(self, fingerprint: str) -> DatasetInfo | None:
        """The newest stored dataset with this content fingerprint (the same items, whatever
        the file), if any: an upload already stored can be used instead of a copy."""
        return self._ctx.store.find_dataset(fingerprint) if fingerprint else None

    def rename_dataset(self, dataset_id: str, name: str) -> DatasetInfo:
        """Rename a dataset; raises InvalidInputError for a bad name, NotFoundError."""
        return self._ctx.store.rename_dataset(dataset_id, checked_name(name, "dataset"))

    def rename_experiment(self, experiment_id: str, name: str) -> ExperimentInfo:
        """Rename an experiment; raises InvalidInputError for a bad name, NotFoundError."""
        self._ctx.store.rename_experiment(experiment_id, checked_name(name, "experiment"))
        return self._experiments.get_experiment(experiment_id)

    def set_experiment_note(
        self, experiment_id: str, note: str | None, tags: Sequence[str] = ()
    ) -> ExperimentInfo:
        """Replace an experiment's note (None or blank: none) and tags (at most `MAX_TAGS`, of
        at most `MAX_TAG_CHARS` characters each, no comma); raises InvalidInputError naming
        the bad value, NotFoundError."""
        clean_note, clean_tags = checked_note(note), checked_tags(tags)
        self._ctx.store.set_experiment_note(experiment_id, clean_note, clean_tags)
        return self._experiments.get_experiment(experiment_id)

    def dataset_deletion(self, dataset_id: str) -> DeletionImpact:
        """What `delete_dataset` would take: its items, experiments, results and reviews, and
        how many of those experiments run now, here or in another process (a fresh heartbeat
        in the database); raises NotFoundError."""
        impact = self._ctx.store.dataset_impact(dataset_id)
        ids = self._ctx.store.experiment_ids_of(dataset_id)
        running = set(self._ctx.jobs.running())
        running.update(i for i, _ in self._ctx.store.live_experiments(dataset_id=dataset_id))
        return impact.model_copy(
            update={
                "reviews": self.review_count(ids),
                "running": sum(1 for i in ids if i in running),
            }
        )

    def experiment_deletion(self, experiment_id: str) -> DeletionImpact:
        """What `delete_experiment` would take: its results and reviews, and whether it runs
        now (here or in another process); raises NotFoundError."""
        impact = self._ctx.store.experiment_impact(experiment_id)
        running = int(
            experiment_id in set(self._ctx.jobs.running())
            or bool(self._ctx.store.live_experiments(experiment_id=experiment_id))
        )
        return impact.model_copy(
            update={"reviews": self.review_count([experiment_id]), "running": running}
        )

    def review_count(self, experiment_ids: Sequence[str]) -> int:
        """How many human reviews the experiments hold (deleted with them)."""
        return self._ctx.store.review_count(experiment_ids)
