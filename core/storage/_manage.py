"""The store's part in managing datasets and experiments: renames, an experiment's note and
tags, and what a deletion would take with it. The values arrive checked by the service
(core/service/manage.py); these methods only write and count."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Select, func, select, update
from sqlalchemy.engine import Connection

from core.records import DatasetInfo, DeletionImpact, ExperimentInfo
from core.storage.database import Database
from core.storage.datasets import DatasetStore
from core.storage.experiments import ExperimentStore
from core.storage.tables import DatasetRow, ExperimentRow, ScoreRow

__all__ = ["ManageStore"]


class ManageStore:
    """`store.manage`: renames, notes and tags, and what a deletion would take."""

    def __init__(
        self, database: Database, datasets: DatasetStore, experiments: ExperimentStore
    ) -> None:
        self._db = database
        self._datasets = datasets
        self._experiments = experiments

    def rename_dataset(self, dataset_id: str, name: str) -> DatasetInfo:
        """Give a dataset a new name; raises NotFoundError."""
        self._datasets.get_dataset(dataset_id)
        table = DatasetRow.__table__
        with self._db.transaction("rename the dataset") as connection:
            connection.execute(update(table).where(table.c.id == dataset_id).values(name=name))
        return self._datasets.get_dataset(dataset_id)

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
        self._experiments.get_experiment(experiment_id)  # NotFoundError
        table = ExperimentRow.__table__
        with self._db.transaction(what) as connection:
            connection.execute(update(table).where(table.c.id == experiment_id).values(**values))
        return self._experiments.get_experiment(experiment_id)

    def dataset_impact(self, dataset_id: str) -> DeletionImpact:
        """What deleting a dataset takes: its items, its experiments and their results (reviews
        are counted by the service); raises NotFoundError."""
        dataset = self._datasets.get_dataset(dataset_id)
        experiments = ExperimentRow.__table__
        ids = select(experiments.c.id).where(experiments.c.dataset_id == dataset_id)
        with self._db.engine.connect() as connection:
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
        info = self._experiments.get_experiment(experiment_id)
        ids = select(ExperimentRow.__table__.c.id).where(
            ExperimentRow.__table__.c.id == experiment_id
        )
        with self._db.engine.connect() as connection:
            results = self._result_count(connection, ids)
        return DeletionImpact(
            kind="experiment", id=info.id, name=info.name, experiments=1, results=results
        )

    @staticmethod
    def _result_count(connection: Connection, experiment_ids: Select[tuple[str]]) -> int:
        results = ScoreRow.__table__
        query = select(func.count()).where(results.c.experiment_id.in_(experiment_ids))
        return int(connection.execute(query).scalar_one())
