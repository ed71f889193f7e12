"""The store's part in managing datasets and experiments: renames, an experiment's note and
tags, and what a deletion would take with it. The values arrive checked by the service
(core/service/manage.py); these methods only write and count."""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Literal

from sqlalchemy import ColumnElement, Select, func, select, update
from sqlalchemy.engine import Connection, Engine

from core.errors import ExperimentConfigError
from core.records import DatasetInfo, DeletionImpact, ExperimentInfo
from core.storage.tables import DatasetRow, ExperimentRow, ScoreRow

__all__ = ["StoreManagement"]


class StoreManagement:
    """Mixed into `Store`."""

    if TYPE_CHECKING:  # provided by Store
        engine: Engine
        stale_after_s: float

        def _transaction(self, what: str) -> AbstractContextManager[Connection]: ...

        def get_dataset(self, dataset_id: str) -> DatasetInfo: ...

        def get_experiment(self, experiment_id: str) -> ExperimentInfo: ...

    def rename_dataset(self, dataset_id: str, name: str) -> DatasetInfo:
        """Give a dataset a new name; raises NotFoundError."""
        self.get_dataset(dataset_id)
        table = DatasetRow.__table__
        with self._transaction("rename the dataset") as connection:
            connection.execute(update(table).where(table.c.id == dataset_id).values(name=name))
        return self.get_dataset(dataset_id)

    def rename_experiment(self, experiment_id: str, name: str) -> ExperimentInfo:
        """Give an experiment a new name; raises NotFoundError."""
        return self._update_notes(experiment_id, "rename the experiment", name=name)

    def set_experiment_note(
        self, experiment_id: str, note: str | None, tags: Sequence[str]
    ) -> ExperimentInfo:
        """Replace an experiment's note and tags; raises NotFoundError."""
        return self._update_notes(
            experiment_id, "save the experiment's note", note=note, tags=list(tags) or None
        )

    def _update_notes(self, experiment_id: str, what: str, **values: object) -> ExperimentInfo:
        self.get_experiment(experiment_id)  # NotFoundError
        table = ExperimentRow.__table__
        with self._transaction(what) as connection:
            connection.execute(update(table).where(table.c.id == experiment_id).values(**values))
        return self.get_experiment(experiment_id)

    def dataset_impact(self, dataset_id: str) -> DeletionImpact:
        """What deleting a dataset takes: its items, its experiments and their results (reviews
        are counted by the service); raises NotFoundError."""
        dataset = self.get_dataset(dataset_id)
        experiments = ExperimentRow.__table__
        ids = select(experiments.c.id).where(experiments.c.dataset_id == dataset_id)
        with self.engine.connect() as connection:
            found = int(
                connection.execute(select(func.count()).select_from(ids.subquery())).scalar_one()
            )
            results = self._result_count(connection, ids)
        return DeletionImpact(
            kind="dataset",
            id=dataset.id,
            name=dataset.name,
            items=dataset.item_count,
            experiments=found,
            results=results,
        )

    def experiment_impact(self, experiment_id: str) -> DeletionImpact:
        """What deleting an experiment takes: its results (reviews are counted by the service);
        raises NotFoundError."""
        info = self.get_experiment(experiment_id)
        ids = select(ExperimentRow.__table__.c.id).where(
            ExperimentRow.__table__.c.id == experiment_id
        )
        with self.engine.connect() as connection:
            results = self._result_count(connection, ids)
        return DeletionImpact(
            kind="experiment", id=info.id, name=info.name, experiments=1, results=results
        )

    def live_experiments(
        self, *, dataset_id: str | None = None, experiment_id: str | None = None
    ) -> list[tuple[str, str]]:
        """(id, name) of the dataset's experiments (or of the one experiment) that some
        process runs now: `running` with a heartbeat fresher than `stale_after_s`,
        whichever process it is (this one, a CLI, a second dashboard, a team server)."""
        with self.engine.connect() as connection:
            return self._live(connection, self._which(dataset_id, experiment_id))

    def refuse_live_runs(
        self,
        connection: Connection,
        kind: Literal["dataset", "experiment"],
        *,
        dataset_id: str | None = None,
        experiment_id: str | None = None,
    ) -> None:
        """Raise ExperimentConfigError naming the experiment when deleting this dataset (or
        experiment) would take a run some process is making now; called inside the deleting
        transaction, so a run that is live when the deletion starts is never deleted."""
        live = self._live(connection, self._which(dataset_id, experiment_id))
        if not live:
            return
        named = ", ".join(f"{name!r} ({experiment_id})" for experiment_id, name in live[:3])
        if len(live) > 3:
            named += f" and {len(live) - 3} more"
        verb = "is" if len(live) == 1 else "are"
        raise ExperimentConfigError(
            f"Cannot delete the {kind}: experiment {named} {verb} running (in this process or "
            "another process: a CLI, a second dashboard, a team server, whose heartbeat is "
            f"less than {self.stale_after_s:g} s old). Wait for it to finish or cancel it "
            "where it runs, then delete"
        )

    @staticmethod
    def _which(dataset_id: str | None, experiment_id: str | None) -> ColumnElement[bool]:
        table = ExperimentRow.__table__
        if experiment_id is not None:
            return table.c.id == experiment_id
        return table.c.dataset_id == dataset_id

    def _live(self, connection: Connection, which: ColumnElement[bool]) -> list[tuple[str, str]]:
        table = ExperimentRow.__table__
        fresh_since = datetime.now(UTC) - timedelta(seconds=self.stale_after_s)
        seen = func.coalesce(table.c.heartbeat_at, table.c.started_at, table.c.created_at)
        query = (
            select(table.c.id, table.c.name)
            .where(which, table.c.status == "running", seen >= fresh_since)
            .order_by(table.c.created_at)
        )
        return [(row.id, row.name) for row in connection.execute(query)]

    def experiment_ids_of(self, dataset_id: str) -> list[str]:
        """The ids of the experiments over a dataset."""
        table = ExperimentRow.__table__
        with self.engine.connect() as connection:
            rows = connection.execute(select(table.c.id).where(table.c.dataset_id == dataset_id))
            return [row.id for row in rows]

    @staticmethod
    def _result_count(connection: Connection, experiment_ids: Select[tuple[str]]) -> int:
        results = ScoreRow.__table__
        query = select(func.count()).where(results.c.experiment_id.in_(experiment_ids))
        return int(connection.execute(query).scalar_one())
