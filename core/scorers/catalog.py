"""The scorers an experiment chooses from: building the chosen ones, checking that a dataset
holds what they need, and saying what each compares (docs/scorers.md, Declaring a scorer
(for maintainers)).

Every refusal is an `ExperimentConfigError` written for the person choosing the scorers.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from functools import cached_property

from core.errors import ExperimentConfigError
from core.judge import JudgeConfig
from core.records import DatasetInfo, ExperimentInfo, ScorerCatalogEntry, ScorerSpec
from core.scorers._registry import GROUND_TRUTH, DataNeed, PrebuiltScorer, ScorerBuildError
from core.scorers.metadata import comparisons
from core.scoring import Scorer

__all__ = ["ScorerCatalog"]


class ScorerCatalog(Mapping[str, PrebuiltScorer]):
    """Catalog id -> prebuilt scorer, with what choosing among them takes."""

    def __init__(self, entries: Mapping[str, PrebuiltScorer]) -> None:
        self._entries = dict(entries)

    def __getitem__(self, scorer_id: str) -> PrebuiltScorer:
        return self._entries[scorer_id]

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    @cached_property
    def records(self) -> tuple[ScorerCatalogEntry, ...]:
        """The catalog as records, with options and steps (built once)."""
        return tuple(entry.catalog_entry() for entry in self._entries.values())

    def entry(self, scorer_id: str) -> PrebuiltScorer:
        """The entry of a catalog id, or an error listing the known ones."""
        entry = self._entries.get(scorer_id)
        if entry is None:
            known = ", ".join(sorted(self._entries))
            raise ExperimentConfigError(f"Unknown scorer {scorer_id!r}; known: {known}")
        return entry

    def build(self, spec: ScorerSpec, judge: JudgeConfig | None) -> Scorer:
        """The scorer for a catalog id and its options."""
        try:
            return self.entry(spec.scorer_id).build(spec.options, judge)
        except ScorerBuildError as error:
            raise ExperimentConfigError(str(error)) from error

    def build_all(self, specs: Sequence[ScorerSpec], judge: JudgeConfig | None) -> list[Scorer]:
        """The chosen scorers: at least one, ids unique (results are keyed by id)."""
        if not specs:
            raise ExperimentConfigError("Choose at least one scorer")
        scorers = [self.build(spec, judge) for spec in specs]
        ids = [scorer.id for scorer in scorers]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise ExperimentConfigError(
                f"Scorer id {', '.join(map(repr, repeated))} is chosen twice; results are keyed "
                "by id (give checks an `id` option to run several side by side)"
            )
        return scorers

    def data_problems(self, dataset: DatasetInfo, specs: Sequence[ScorerSpec]) -> list[str]:
        """What stops the chosen scorers from running on this dataset: a field they need that
        the dataset does not map (ground truth, a context column, ...), one sentence each."""
        problems = []
        for spec in specs:
            entry = self._entries.get(spec.scorer_id)
            if entry is None:
                continue  # `build` says so
            for need in entry.data_needs(spec.options):
                if not _dataset_has(dataset, need):
                    problems.append(_missing_data_message(entry, need, dataset))
        return problems

    def comparison(self, spec: ScorerSpec) -> str | None:
        """What a chosen scorer compares with its options, in words; None for an unknown id."""
        entry = self._entries.get(spec.scorer_id)
        return entry.comparison(spec.options) if entry is not None else None

    def comparisons(self, info: ExperimentInfo) -> dict[str, str]:
        """What each scorer of an experiment compared, in words, by scorer id."""
        return comparisons(info, self.comparison)

    def judge_calls_per_item(self, specs: Sequence[ScorerSpec]) -> int:
        """Judge calls per item at least (the fallback and retries can add more)."""
        return sum(
            self._entries[spec.scorer_id].judge_calls_per_item(spec.options)
            for spec in specs
            if spec.scorer_id in self._entries
        )


def _dataset_has(dataset: DatasetInfo, need: DataNeed) -> bool:
    if need.column == GROUND_TRUTH:
        return dataset.mapping.ground_truth is not None
    return need.column in dataset.mapping.metadata


def _missing_data_message(entry: PrebuiltScorer, need: DataNeed, dataset: DatasetInfo) -> str:
    columns = ", ".join(repr(c) for c in dataset.columns) or "none"
    if need.column == GROUND_TRUTH:
        fix = (
            "Import the file again with its ground-truth column mapped (the Datasets page, or "
            "--ground-truth-column in the CLI)"
        )
        if any(option.name == "reference" for option in entry.options):
            fix += ", or set the scorer's reference option to input"
        return (
            f"{entry.name} needs {need.what}, but dataset {dataset.name!r} maps no "
            f"ground-truth column (its columns: {columns}). {fix}."
        )
    instead = f", or give the scorer's {need.option!r} option" if need.option else ""
    return (
        f"{entry.name} needs {need.what} from a column named {need.column!r}, but dataset "
        f"{dataset.name!r} has no such column (its columns: {columns}). Add a "
        f"{need.column!r} column to the file and import it again{instead}."
    )
