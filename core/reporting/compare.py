"""Paired comparison of experiments: a baseline against one or more candidates.

Items are paired by their id, never by their input text (two items may ask the same thing, and
an edited input must not silently pair with another row). An id that appears more than once on
a side is ambiguous: it is reported and paired with nothing. The difference of means is taken
over the paired items scored on both sides, with a percentile-bootstrap confidence interval.

Pure shaping: no Streamlit, no database.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from html import escape
from itertools import repeat
from statistics import NormalDist
from typing import Any, Literal, NamedTuple

import numpy as np
import pandas as pd

from core._collector import collector_paused
from core.records import (
    DatasetItem,
    ExperimentDetail,
    ExperimentInfo,
    ScorerOutcome,
    StoredScores,
)
from core.reporting.tables import experiment_cost, judge_usage_frame, usage_totals

__all__ = [
    "ITEM_CHANGE_COLUMNS",
    "SCORER_COMPARISON_COLUMNS",
    "UNCHANGED_TOLERANCE",
    "Comparison",
    "DiffSegment",
    "ItemPair",
    "ItemPairing",
    "ScorerComparison",
    "StoredRun",
    "StoredSide",
    "bootstrap_ci",
    "compare",
    "compare_experiments",
    "comparison_words",
    "diff_html",
    "item_changes",
    "item_pair",
    "mismatched_comparisons",
    "scorer_table",
    "usage_side_by_side",
    "word_diff",
]

UNCHANGED_TOLERANCE = 1e-9
"""A paired change with |Δ| at most this is counted as unchanged (float noise is not a change)."""

RESAMPLES = 2_000
"""Bootstrap resamples of the paired differences."""

_MAX_DRAWS = 2_000_000
"""Bootstrap indices drawn at once (bounds memory: 16 MB of int64 per chunk)."""

INDEX_DRAWS = 4_000_000
"""Up to this many indices in all (pairs × resamples), the bootstrap draws each sample's
indices; past it, the distinct values' counts or the normal limit (`bootstrap_ci`)."""

DISTINCT_VALUES = 512
"""Past `INDEX_DRAWS`, differences with at most this many distinct values are resampled
through their counts (a multinomial per sample); more take the normal limit."""

SCORER_COMPARISON_COLUMNS: tuple[str, ...] = (
    "scorer_id",
    "baseline_mean",
    "candidate_mean",
    "mean_change",
    "ci_low",
    "ci_high",
    "improved",
    "regressed",
    "unchanged",
    "baseline_n",
    "candidate_n",
    "paired_n",
)
"""The columns of `scorer_table`."""

ITEM_CHANGE_COLUMNS: tuple[str, ...] = (
    "item_id",
    "status",
    "baseline_score",
    "candidate_score",
    "change",
    "baseline_reason",
    "candidate_reason",
    "baseline_output",
    "candidate_output",
    "input",
)
"""The columns of `item_changes`."""

ChangeStatus = Literal[
    "improved", "regressed", "unchanged", "baseline only", "candidate only", "not scored"
]


# ---- one side ----


class StoredRun(NamedTuple):
    """A stored run as Compare reads it (`StoredScores`): a success, with the attributes of a
    `ScorerOutcome` that Compare shows; `outcome()` makes the record for one item's view."""

    item_id: str
    scorer_id: str
    score: float | None
    reason: Any
    status: Literal["success"] = "success"
    failed_step: None = None
    error: None = None

    def outcome(self) -> ScorerOutcome:
        """The run as a `ScorerOutcome` (its result JSON left out)."""
        return ScorerOutcome(
            item_id=self.item_id,
            scorer_id=self.scorer_id,
            status="success",
            score=self.score,
            reason=self.reason,
        )


Run = ScorerOutcome | StoredRun
"""One run of a side: a record, or a stored run read light."""


@dataclass(frozen=True)
class StoredSide:
    """An experiment read light for Compare (`Service.compare_sides`): its items, its stored
    runs as columns, the stored runs that called the judge with their judge records (what
    the usage table sums), and the failures this process holds."""

    info: ExperimentInfo
    """The experiment."""
    items: Sequence[DatasetItem]
    """Its dataset's items, in file order."""
    scores: StoredScores
    """Every stored run: item, scorer, score, reason."""
    judged: Sequence[ScorerOutcome] = ()
    """The stored runs that called the judge, with their result JSON."""
    failures: Sequence[ScorerOutcome] = ()
    """The failed runs this process holds."""


@dataclass(frozen=True)
class _Side:
    """An experiment indexed for pairing: unique item ids, and per scorer the unambiguous
    outcome of each item (two outcomes for the same item and scorer make it ambiguous)."""

    info: ExperimentInfo
    items: dict[str, DatasetItem]
    all_ids: frozenset[str]
    duplicates: tuple[str, ...]
    outcomes: dict[str, dict[str, Run]]
    ambiguous: dict[str, int]
    usage_outcomes: Sequence[ScorerOutcome]
    _scores: dict[str, dict[str, float]] = field(default_factory=dict, repr=False)

    def score(self, scorer_id: str, item_id: str) -> float | None:
        """The item's numeric score for the scorer (None when not scored, failed or
        ambiguous)."""
        return self.scores(scorer_id).get(item_id)

    def scores(self, scorer_id: str) -> dict[str, float]:
        """Every numeric score of the scorer, by item id (computed once per scorer)."""
        found = self._scores.get(scorer_id)
        if found is None:
            found = {}
            for item_id, outcome in self.outcomes.get(scorer_id, {}).items():
                if outcome.status != "success":
                    continue
                value = outcome.score
                if value.__class__ is float:  # the common case, without a call per run
                    if math.isfinite(value):
                        found[item_id] = value
                elif (number := _number(value)) is not None:
                    found[item_id] = number
            self._scores[scorer_id] = found
        return found

    def outcome(self, scorer_id: str, item_id: str) -> ScorerOutcome | None:
        """The item's outcome for the scorer as a record (None when absent or ambiguous)."""
        run = self.outcomes.get(scorer_id, {}).get(item_id)
        return run.outcome() if isinstance(run, StoredRun) else run


def _side(detail: ExperimentDetail | StoredSide) -> _Side:
    if isinstance(detail, StoredSide):
        stored = detail.scores
        runs: list[Run] = list(
            map(
                StoredRun._make,  # tuple.__new__: no Python call per run
                zip(
                    stored.item_ids,
                    stored.scorer_ids,
                    stored.scores,
                    stored.reasons,
                    repeat("success"),
                    repeat(None),
                    repeat(None),
                    strict=False,
                ),
            )
        )
        runs += detail.failures
        usage = [*detail.judged, *detail.failures]
    else:
        usage = [*detail.results, *detail.failures]
        runs = list(usage)
    counts = Counter(item.id for item in detail.items)
    duplicates = tuple(item_id for item_id, n in counts.items() if n > 1)
    items = {item.id: item for item in detail.items if counts[item.id] == 1}
    outcomes: dict[str, dict[str, Run]] = {}
    ambiguous: dict[str, int] = {}
    dropped: set[tuple[str, str]] = set()  # pairs run more than once: paired with nothing
    for run in runs:
        by_item = outcomes.get(run.scorer_id)
        if by_item is None:
            by_item = outcomes[run.scorer_id] = {}
        item_id = run.item_id
        if item_id in by_item:  # a second run of the pair: ambiguous
            del by_item[item_id]
            dropped.add((run.scorer_id, item_id))
            ambiguous[run.scorer_id] = ambiguous.get(run.scorer_id, 0) + 1
        elif not dropped or (run.scorer_id, item_id) not in dropped:
            by_item[item_id] = run
    ambiguous = {scorer_id: ambiguous.get(scorer_id, 0) for scorer_id in outcomes}
    return _Side(detail.info, items, frozenset(counts), duplicates, outcomes, ambiguous, usage)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


# ---- pairing ----


@dataclass(frozen=True)
class ItemPairing:
    """How the items of a baseline and a candidate were matched (by id only).

    An id duplicated on one side is paired with nothing; it is listed in that side's
    `*_duplicates` and not in the other side's `*_only`.
    """

    paired_ids: tuple[str, ...]
    """Ids found exactly once on each side, in the baseline's order."""
    baseline_only: tuple[str, ...]
    """Ids found once in the baseline and not at all in the candidate."""
    candidate_only: tuple[str, ...]
    """Ids found once in the candidate and not at all in the baseline."""
    baseline_duplicates: tuple[str, ...]
    """Ids found more than once in the baseline's items."""
    candidate_duplicates: tuple[str, ...]
    """Ids found more than once in the candidate's items."""
    input_mismatches: tuple[str, ...]
    """Paired ids whose input differs between the two sides (worth a look: same id, other
    question)."""
    fingerprints_differ: bool
    """True when the two experiments scored datasets with different content fingerprints."""

    @property
    def unpaired(self) -> int:
        """Ids of either side left without a partner (duplicates included)."""
        return (
            len(self.baseline_only)
            + len(self.candidate_only)
            + len(self.baseline_duplicates)
            + len(self.candidate_duplicates)
        )


def _pairing(baseline: _Side, candidate: _Side) -> ItemPairing:
    base_ids, cand_ids = baseline.all_ids, candidate.all_ids
    paired = tuple(item_id for item_id in baseline.items if item_id in candidate.items)
    mismatches = tuple(
        item_id
        for item_id in paired
        if _text(baseline.items[item_id].input) != _text(candidate.items[item_id].input)
    )
    return ItemPairing(
        paired_ids=paired,
        baseline_only=tuple(i for i in baseline.items if i not in cand_ids),
        candidate_only=tuple(i for i in candidate.items if i not in base_ids),
        baseline_duplicates=baseline.duplicates,
        candidate_duplicates=candidate.duplicates,
        input_mismatches=mismatches,
        fingerprints_differ=(
            baseline.info.dataset_fingerprint != candidate.info.dataset_fingerprint
        ),
    )


# ---- statistics ----


def bootstrap_ci(
    differences: Sequence[float] | np.ndarray,
    *,
    resamples: int = RESAMPLES,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile-bootstrap confidence interval of the mean of paired differences.

    Draws `resamples` samples of the differences with replacement (NumPy's generator seeded
    with `seed`, so the same data always gives the same interval), takes each sample's mean, and
    returns the (1 - confidence) / 2 and (1 + confidence) / 2 quantiles of those means. With
    fewer than two differences there is no spread to resample: (NaN, NaN).

    How the resampled means are drawn depends on the size (docs/core.md, "Comparing
    experiments"), each the same statistic:

    - up to `INDEX_DRAWS` indices in all (2,000 pairs at 2,000 resamples), each sample's
      indices are drawn as they always were: the same figures as every earlier version;
    - more pairs over at most `DISTINCT_VALUES` distinct differences (scores on a grid, as a
      keyword coverage or a judge's 0/0.5/1 gives): how often each distinct value is drawn,
      one multinomial per sample, which is the same resampling distribution drawn in
      `resamples × distinct` steps instead of `resamples × pairs`;
    - more pairs of many distinct values: the normal interval `mean ± z · sd / sqrt(n)` (sd
      with divisor n), the limit the bootstrap means reach at that size (their variance is
      exactly sd² / n); at 2,000 pairs and more the two differ by less than the bootstrap's
      own Monte Carlo noise at 2,000 resamples (tests/reporting/test_compare.py checks it).

    Raises ValueError for non-finite differences, `resamples` < 1 or `confidence` outside (0, 1).
    """
    values = np.asarray(differences, dtype=float)
    if values.ndim != 1:
        raise ValueError(f"bootstrap_ci: differences must be one-dimensional, got {values.shape}")
    if not np.isfinite(values).all():
        raise ValueError("bootstrap_ci: differences must be finite numbers (found NaN or inf)")
    if isinstance(resamples, bool) or not isinstance(resamples, int) or resamples < 1:
        raise ValueError(f"bootstrap_ci: resamples must be a positive integer, got {resamples!r}")
    if not 0 < confidence < 1:
        raise ValueError(f"bootstrap_ci: confidence must be in (0, 1), got {confidence!r}")
    if values.size < 2:
        return (math.nan, math.nan)
    tail = (1 - confidence) / 2
    if values.size * resamples > INDEX_DRAWS:
        distinct, counts = np.unique(values, return_counts=True)
        if distinct.size > DISTINCT_VALUES:
            return _normal_interval(values, tail)
        rng = np.random.default_rng(seed)
        drawn = rng.multinomial(values.size, counts / values.size, size=resamples)
        means = drawn @ distinct / values.size
    else:
        means = _bootstrap_means(values, resamples, np.random.default_rng(seed))
    low, high = np.quantile(means, [tail, 1 - tail])
    return (float(low), float(high))


def _normal_interval(values: np.ndarray, tail: float) -> tuple[float, float]:
    mean = float(values.mean())
    spread = NormalDist().inv_cdf(1 - tail) * float(values.std()) / math.sqrt(values.size)
    return (mean - spread, mean + spread)


def _bootstrap_means(values: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    size = values.size
    means = np.empty(resamples)
    chunk = max(1, _MAX_DRAWS // size)
    for start in range(0, resamples, chunk):
        stop = min(start + chunk, resamples)
        picks = rng.integers(0, size, size=(stop - start, size))
        means[start:stop] = values[picks].mean(axis=1)
    return means


@dataclass(frozen=True)
class ScorerComparison:
    """One scorer, baseline against candidate."""

    scorer_id: str
    """The scorer."""
    baseline_mean: float
    """Mean over every item scored on the baseline (paired or not); NaN when none."""
    candidate_mean: float
    """Mean over every item scored on the candidate (paired or not); NaN when none."""
    baseline_n: int
    """Items scored on the baseline."""
    candidate_n: int
    """Items scored on the candidate."""
    paired_n: int
    """Paired items scored on both sides: the differences below are over these."""
    mean_change: float
    """Mean of (candidate − baseline) over the paired items; NaN when there are none."""
    ci_low: float
    """Lower end of the 95% percentile-bootstrap interval of `mean_change` (NaN below 2 pairs)."""
    ci_high: float
    """Upper end of that interval."""
    improved: int
    """Paired items whose score rose by more than `UNCHANGED_TOLERANCE`."""
    regressed: int
    """Paired items whose score fell by more than `UNCHANGED_TOLERANCE`."""
    unchanged: int
    """Paired items whose score moved by at most `UNCHANGED_TOLERANCE`."""
    ambiguous: int = 0
    """(item, scorer) runs left out because a side holds several results for them."""


def _scorer_comparison(
    scorer_id: str, baseline: _Side, candidate: _Side, paired: Sequence[str], seed: int
) -> ScorerComparison:
    base, cand = baseline.scores(scorer_id), candidate.scores(scorer_id)
    both = [item_id for item_id in paired if item_id in base and item_id in cand]
    changes = np.array([cand[i] - base[i] for i in both], dtype=float)
    low, high = bootstrap_ci(changes, seed=seed)
    return ScorerComparison(
        scorer_id=scorer_id,
        baseline_mean=_mean(base.values()),
        candidate_mean=_mean(cand.values()),
        baseline_n=len(base),
        candidate_n=len(cand),
        paired_n=len(both),
        mean_change=float(changes.mean()) if changes.size else math.nan,
        ci_low=low,
        ci_high=high,
        improved=int((changes > UNCHANGED_TOLERANCE).sum()),
        regressed=int((changes < -UNCHANGED_TOLERANCE).sum()),
        unchanged=int((np.abs(changes) <= UNCHANGED_TOLERANCE).sum()),
        ambiguous=baseline.ambiguous.get(scorer_id, 0) + candidate.ambiguous.get(scorer_id, 0),
    )


def _mean(values: Iterable[float]) -> float:
    found = np.fromiter(values, dtype=float)
    return float(found.mean()) if found.size else math.nan


# ---- comparisons ----


@dataclass(frozen=True)
class Comparison:
    """A candidate against the baseline: the pairing and one `ScorerComparison` per scorer
    (the baseline's scorers first, then the candidate's others)."""

    baseline: ExperimentInfo
    """The baseline experiment."""
    candidate: ExperimentInfo
    """The candidate experiment."""
    pairing: ItemPairing
    """How the items were matched."""
    scorers: tuple[ScorerComparison, ...]
    """Per scorer statistics."""
    _baseline: _Side = field(repr=False, compare=False)
    _candidate: _Side = field(repr=False, compare=False)

    @property
    def scorer_ids(self) -> list[str]:
        """The compared scorers, in order."""
        return [s.scorer_id for s in self.scorers]


def compare(
    baseline: ExperimentDetail | StoredSide,
    candidate: ExperimentDetail | StoredSide,
    *,
    seed: int = 0,
) -> Comparison:
    """Compare one candidate with the baseline (see `compare_experiments`)."""
    return _compare(_side(baseline), _side(candidate), seed)


def compare_experiments(
    baseline: ExperimentDetail | StoredSide,
    candidates: Sequence[ExperimentDetail | StoredSide],
    *,
    seed: int = 0,
) -> list[Comparison]:
    """Each candidate against the baseline, in the order given (the baseline is indexed once).
    A side is an experiment loaded whole or read light (`StoredSide`): the same comparison.

    Raises ValueError when a candidate is the baseline itself or appears twice.
    """
    ids = [c.info.id for c in candidates]
    if baseline.info.id in ids:
        raise ValueError(f"Experiment {baseline.info.id!r} cannot be its own candidate")
    repeated = sorted({i for i in ids if ids.count(i) > 1})
    if repeated:
        raise ValueError(f"Candidate experiment {', '.join(map(repr, repeated))} given twice")
    with collector_paused():  # a side's 50,000 runs are tuples: no cycle to collect
        base = _side(baseline)
        return [_compare(base, _side(candidate), seed) for candidate in candidates]


def _compare(baseline: _Side, candidate: _Side, seed: int) -> Comparison:
    pairing = _pairing(baseline, candidate)
    scorer_ids = list(
        dict.fromkeys(
            [
                *baseline.info.scorer_ids,
                *candidate.info.scorer_ids,
                *baseline.outcomes,
                *candidate.outcomes,
            ]
        )
    )
    scorers = tuple(
        _scorer_comparison(scorer_id, baseline, candidate, pairing.paired_ids, seed)
        for scorer_id in scorer_ids
    )
    return Comparison(
        baseline=baseline.info,
        candidate=candidate.info,
        pairing=pairing,
        scorers=scorers,
        _baseline=baseline,
        _candidate=candidate,
    )


def scorer_table(comparison: Comparison) -> pd.DataFrame:
    """One row per scorer (`SCORER_COMPARISON_COLUMNS`), then `compares`: what the scorer
    compared, in words, both sides' when they differ ("baseline: output vs input · candidate:
    output vs ground truth"), empty when unknown."""
    rows = [[getattr(s, name) for name in SCORER_COMPARISON_COLUMNS] for s in comparison.scorers]
    frame = pd.DataFrame(rows, columns=list(SCORER_COMPARISON_COLUMNS))
    frame["compares"] = [comparison_words(comparison, s.scorer_id) for s in comparison.scorers]
    counts = ["improved", "regressed", "unchanged", "baseline_n", "candidate_n", "paired_n"]
    floats = ["baseline_mean", "candidate_mean", "mean_change", "ci_low", "ci_high"]
    return frame.astype(
        dict.fromkeys(counts, "int64") | dict.fromkeys(floats, "float64") | {"scorer_id": "str"}
    )


def comparison_words(comparison: Comparison, scorer_id: str) -> str:
    """What a scorer compared on each side, in words (see `scorer_table`)."""
    base = comparison.baseline.comparisons.get(scorer_id, "")
    cand = comparison.candidate.comparisons.get(scorer_id, "")
    if base == cand or not cand:
        return base
    if not base:
        return cand
    return f"baseline: {base} · candidate: {cand}"


def mismatched_comparisons(comparison: Comparison) -> list[str]:
    """Scorers that compared different things on the two sides: their change is not a change
    of the system under test."""
    return [
        s.scorer_id
        for s in comparison.scorers
        if comparison.baseline.comparisons.get(s.scorer_id)
        and comparison.candidate.comparisons.get(s.scorer_id)
        and comparison.baseline.comparisons[s.scorer_id]
        != comparison.candidate.comparisons[s.scorer_id]
    ]


def item_changes(comparison: Comparison, scorer_id: str, limit: int | None = None) -> pd.DataFrame:
    """The paired items for one scorer (`ITEM_CHANGE_COLUMNS`), the largest |change| first
    (items not scored on both sides last; ties keep the baseline's order); `limit`: only the
    first `limit` of them (their texts are read for those alone).

    `status` is improved / regressed / unchanged, or `baseline only` / `candidate only` / `not
    scored` when a side has no score (failed, not scorable or not run). Reasons, outputs and the
    input are display strings (text as is, other values as JSON).

    Raises KeyError naming the scorers compared when `scorer_id` is not one of them, and
    ValueError for a negative `limit`.
    """
    if scorer_id not in comparison.scorer_ids:
        known = ", ".join(comparison.scorer_ids) or "none"
        raise KeyError(f"Scorer {scorer_id!r} is not in this comparison (scorers: {known})")
    if limit is not None and (isinstance(limit, bool) or limit < 0):
        raise ValueError(f"item_changes needs a limit of 0 or more, got {limit!r}")
    base, cand = comparison._baseline, comparison._candidate
    paired = comparison.pairing.paired_ids
    before = np.array([_or_nan(base.score(scorer_id, i)) for i in paired], dtype=float)
    after = np.array([_or_nan(cand.score(scorer_id, i)) for i in paired], dtype=float)
    change = after - before
    order = np.lexsort((np.arange(len(paired)), -np.nan_to_num(np.abs(change), nan=-1.0)))
    if limit is not None:
        order = order[:limit]
    rows = [_change_row(paired[n], scorer_id, base, cand) for n in order]
    frame = pd.DataFrame(rows, columns=list(ITEM_CHANGE_COLUMNS))
    frame = frame.astype({"baseline_score": "float64", "candidate_score": "float64"})
    frame["change"] = frame["candidate_score"] - frame["baseline_score"]
    return frame


def _or_nan(score: float | None) -> float:
    return math.nan if score is None else score


def _change_row(item_id: str, scorer_id: str, base: _Side, cand: _Side) -> list[Any]:
    before, after = base.score(scorer_id, item_id), cand.score(scorer_id, item_id)
    return [
        item_id,
        _status(before, after),
        math.nan if before is None else before,
        math.nan if after is None else after,
        math.nan,  # filled in vectorised
        _reason(base.outcomes.get(scorer_id, {}).get(item_id)),
        _reason(cand.outcomes.get(scorer_id, {}).get(item_id)),
        _text(base.items[item_id].output),
        _text(cand.items[item_id].output),
        _text(base.items[item_id].input),
    ]


def _status(before: float | None, after: float | None) -> ChangeStatus:
    if before is None or after is None:
        if before is not None:
            return "baseline only"
        return "candidate only" if after is not None else "not scored"
    change = after - before
    if abs(change) <= UNCHANGED_TOLERANCE:
        return "unchanged"
    return "improved" if change > 0 else "regressed"


def _reason(outcome: Run | None) -> str:
    if outcome is None:
        return ""
    if outcome.status == "failed":
        return f"[failed at {outcome.failed_step or 'an unknown step'}] {outcome.error or ''}"
    return _text(outcome.reason)


# ---- one item, both sides ----


class DiffSegment(NamedTuple):
    """A run of words that both texts share (`equal`), that only the second has (`insert`) or
    that only the first has (`delete`); `text` keeps the whitespace between words."""

    op: Literal["equal", "insert", "delete"]
    text: str


@dataclass(frozen=True)
class ItemPair:
    """One paired item as both sides saw it, for a drill-down."""

    item_id: str
    """The item's id."""
    baseline: DatasetItem
    """The baseline's item."""
    candidate: DatasetItem
    """The candidate's item."""
    outcomes: dict[str, tuple[ScorerOutcome | None, ScorerOutcome | None]]
    """Per scorer: the baseline's outcome and the candidate's (None when absent)."""
    output_diff: list[DiffSegment]
    """Baseline output → candidate output, word by word."""
    baseline_vs_truth: list[DiffSegment]
    """Ground truth → baseline output (deleted: truth words the output lacks)."""
    candidate_vs_truth: list[DiffSegment]
    """Ground truth → candidate output."""


def item_pair(comparison: Comparison, item_id: str) -> ItemPair:
    """Both sides of a paired item, with the word diffs; raises KeyError for an id that is not
    paired (unknown, on one side only, or duplicated)."""
    base, cand = comparison._baseline, comparison._candidate
    if item_id not in base.items or item_id not in cand.items:
        raise KeyError(f"Item {item_id!r} is not paired in this comparison")
    before, after = base.items[item_id], cand.items[item_id]
    return ItemPair(
        item_id=item_id,
        baseline=before,
        candidate=after,
        outcomes={
            scorer_id: (base.outcome(scorer_id, item_id), cand.outcome(scorer_id, item_id))
            for scorer_id in comparison.scorer_ids
        },
        output_diff=word_diff(before.output, after.output),
        baseline_vs_truth=word_diff(before.ground_truth, before.output),
        candidate_vs_truth=word_diff(after.ground_truth, after.output),
    )


_WORDS = re.compile(r"(\S+)(\s*)")


def word_diff(before: Any, after: Any) -> list[DiffSegment]:
    """Word-level diff of two values (text as is, other values as JSON, None as empty): difflib
    matches the words alone, so a change of spacing is not a change. Each segment keeps the
    whitespace after its words: an `equal` segment the first text's (the second's where the
    first has none), so joining the `equal` and `delete` texts gives `before`, leading
    whitespace dropped, up to a space added after its last word."""
    old, new = _WORDS.findall(_text(before)), _WORDS.findall(_text(after))
    matcher = difflib.SequenceMatcher(
        a=[word for word, _ in old], b=[word for word, _ in new], autojunk=False
    )
    segments: list[DiffSegment] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("delete", "replace"):
            _append(segments, "delete", _joined(old[i1:i2]))
        if tag in ("insert", "replace"):
            _append(segments, "insert", _joined(new[j1:j2]))
        if tag == "equal":
            # The first text's spacing, or the second's where the first has none (a word that
            # ended the first text may be followed by inserted words in the second).
            spaced = [(w, s or t) for (w, s), (_, t) in zip(old[i1:i2], new[j1:j2], strict=True)]
            _append(segments, "equal", _joined(spaced))
    return segments


def _joined(words: Sequence[tuple[str, str]]) -> str:
    return "".join(word + space for word, space in words)


def _append(segments: list[DiffSegment], op: Any, text: str) -> None:
    if segments and segments[-1].op == op:  # merge runs so the HTML has fewer tags
        segments[-1] = DiffSegment(op, segments[-1].text + text)
    else:
        segments.append(DiffSegment(op, text))


_DIFF_STYLE = {
    "insert": "background:#d7f5dd;text-decoration:none",
    "delete": "background:#fbdada;text-decoration:line-through",
}


def diff_html(segments: Sequence[DiffSegment]) -> str:
    """The diff as HTML: `<ins>` for inserted words, `<del>` for deleted ones, every text
    escaped; whitespace and line breaks are kept (pre-wrap)."""
    parts = []
    for op, text in segments:
        safe = escape(text, quote=True)
        if op == "equal":
            parts.append(safe)
        else:
            tag = "ins" if op == "insert" else "del"
            parts.append(f'<{tag} style="{_DIFF_STYLE[op]}">{safe}</{tag}>')
    body = "".join(parts) or '<span style="color:#888">(empty)</span>'
    return (
        f'<div class="word-diff" style="white-space:pre-wrap;overflow-wrap:anywhere">{body}</div>'
    )


# ---- judge usage ----

_USAGE_ROWS: tuple[tuple[str, str], ...] = (
    ("executions", "judge executions"),
    ("failed", "failed executions"),
    ("model_calls", "model calls"),
    ("attempts", "attempts"),
    ("input_tokens", "input tokens"),
    ("output_tokens", "output tokens"),
    ("reasoning_tokens", "reasoning tokens"),
    ("cached_input_tokens", "cached input tokens"),
    ("total_tokens", "total tokens"),
    ("duration_ms", "judge time (ms, summed)"),
    ("est_cost_usd", "estimated cost (USD, an estimate)"),
)


def usage_side_by_side(comparisons: Sequence[Comparison]) -> pd.DataFrame:
    """Judge usage totals (sums, never averages; `usage_totals`) of the baseline and of each
    candidate, one column each ("baseline · name", "candidate 1 · name", ...), one row per
    measure; failed runs included. Empty when `comparisons` is."""
    if not comparisons:
        return pd.DataFrame()
    sides = [("baseline", comparisons[0]._baseline)] + [
        (f"candidate {n}" if len(comparisons) > 1 else "candidate", c._candidate)
        for n, c in enumerate(comparisons, start=1)
    ]
    columns = {}
    for label, side in sides:
        totals = usage_totals(judge_usage_frame(side.usage_outcomes))
        cost = experiment_cost(side.info)  # the one figure of every page
        totals["est_cost_usd"] = math.nan if cost is None else cost
        columns[f"{label} · {side.info.name}"] = [totals[key] for key, _ in _USAGE_ROWS]
    return pd.DataFrame(columns, index=[label for _, label in _USAGE_ROWS])


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)
