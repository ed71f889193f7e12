"""How well each scorer's scores agree with a label column: a human verdict per item.

A scorer can rank outputs against the ground truth and still say nothing about whether an
output is right (a reference-based lexical scorer on answers that are correct in other words
ranks them worse than chance). When the dataset holds a label, this module measures, per
scorer: ROC AUC with a percentile-bootstrap interval, Spearman's correlation, and at the score
threshold that maximises Youden's J (sensitivity + specificity - 1), Cohen's kappa and the
confusion matrix.

Labels (`parse_label`): booleans; the integers 0 and 1; numbers in [0, 1]; the texts
true/false/yes/no in any case and number texts in [0, 1] (CSV files give every cell as text).
A number label is binarised at >= 0.5 for AUC, J, kappa and the confusion matrix and used as
it is for Spearman. An empty or missing label leaves its item out; any other value is a
`LabelError` naming the column, the item and the value.

A scorer's `n` counts the items that have both a label and a score from it: failed runs,
not-scorable runs and runs that did not happen are left out (and counted). The statistics are
"not defined", with the reason, when no item is left, when the labels are all of one class, or
when the scorer gives every item the same score.

The statistics come from scikit-learn (AUC, ROC curve, kappa, confusion matrix) and SciPy
(Spearman, the bootstrap; each resample's AUC is its Mann-Whitney U, counted with numpy); both
are imported inside the functions that need them, so importing `core` or showing a page
without labels stays fast.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from numbers import Integral, Real
from typing import TYPE_CHECKING, Any, Literal, TypedDict

from pydantic import Field

from core.record_base import Record
from core.records import DatasetItem, ExperimentDetail, ExperimentInfo, Review, StoredScores
from core.reporting.reviews import review_labels

if TYPE_CHECKING:  # numpy and pandas are imported on first use, to keep `import core` light
    import numpy as np
    import pandas as pd

__all__ = [
    "DEFAULT_RESAMPLES",
    "DEFAULT_SEED",
    "REVIEWS_SOURCE",
    "Confusion",
    "LabelAgreement",
    "LabelError",
    "ScorerAgreement",
    "agreement_frame",
    "agreement_line",
    "agreement_verdict",
    "agreement_with_labels",
    "agreement_with_reviews",
    "finite_scores",
    "label_agreement",
    "label_columns",
    "label_values",
    "parse_label",
    "ranked_scorers",
    "review_agreement",
    "scorer_verdict",
    "suggested_label_column",
    "verdict_badge",
]

DEFAULT_RESAMPLES = 1000
"""Bootstrap resamples for the AUC interval."""

DEFAULT_SEED = 0
"""Seed of the bootstrap's generator: the same data always gives the same interval."""

CONFIDENCE_LEVEL = 0.95

REVIEWS_SOURCE = ":reviews"
"""The `label_column` of an agreement whose labels are the human reviews (`review_agreement`),
not a metadata column (a column of that name would be unusual: the colon marks it)."""

_TRUE_TEXTS = frozenset({"true", "yes"})
_FALSE_TEXTS = frozenset({"false", "no"})
_ACCEPTED = "true/false, yes/no, 0/1 or a number from 0 to 1"
# Name fragments of columns that usually hold a human verdict, in order of preference.
_LABEL_HINTS = ("label", "iscorrect", "correct", "verdict", "human")


class LabelError(ValueError):
    """A label column that no item has, or a value in it that is not a label.

    `str(error)` names the column, and the item, its row and the value when there is one;
    `problem` is the part after the place, for callers that name the place their own way.
    """

    def __init__(
        self,
        problem: str,
        *,
        column: str,
        item_id: str | None = None,
        row: int | None = None,
        value: Any = None,
    ) -> None:
        place = f"Label column {column!r}"
        if item_id is not None:
            place += f", item {item_id!r} (row {row})"
        super().__init__(f"{place}: {problem}")
        self.problem = problem
        self.column = column
        self.item_id = item_id
        self.row = row
        self.value = value


class Confusion(Record):
    """Counts of the binarised labels against the scores at the chosen threshold."""

    tp: int
    """Positive label, score >= threshold."""
    fp: int
    """Negative label, score >= threshold."""
    tn: int
    """Negative label, score < threshold."""
    fn: int
    """Positive label, score < threshold."""


class ScorerAgreement(Record):
    """How one scorer's scores agree with the labels, or why that is not defined."""

    scorer_id: str
    """The scorer."""
    n: int
    """Items used: those with both a label and a score from this scorer."""
    positives: int
    """Of those, items whose label is positive (>= 0.5)."""
    negatives: int
    """Of those, items whose label is negative."""
    left_out_no_label: int
    """Items left out because their label is empty or missing."""
    left_out_no_score: int
    """Labelled items left out because this scorer gave no score: its run failed, was not
    scorable, or did not run."""
    defined: bool
    """False when the statistics cannot be computed; `reason` says why."""
    reason: str | None = None
    """Why the statistics are not defined (None when they are)."""
    auc: float | None = None
    """ROC AUC of the scores against the binarised labels (0.5 is chance, below is worse)."""
    auc_low: float | None = None
    """Lower end of the AUC's percentile-bootstrap interval (`confidence_level`)."""
    auc_high: float | None = None
    """Upper end of that interval."""
    spearman: float | None = None
    """Spearman's rank correlation of the scores with the labels as given (not binarised)."""
    threshold: float | None = None
    """The score threshold (score >= threshold means positive) maximising Youden's J; the
    highest such threshold when several tie."""
    youden_j: float | None = None
    """Youden's J at that threshold: true-positive rate minus false-positive rate."""
    kappa: float | None = None
    """Cohen's kappa of the thresholded scores against the binarised labels."""
    confusion: Confusion | None = None
    """The confusion matrix at that threshold."""

    def to_json(self) -> dict[str, Any]:
        """The export's entry (camelCase, without the scorer id and the unset fields): for a
        defined scorer `{n, auc, aucLow, aucHigh, spearman, threshold, youdenJ, kappa,
        confusion: {tp, fp, tn, fn}, positives, negatives, leftOutNoLabel, leftOutNoScore,
        defined: true}`, for another `{n, defined: false, reason, positives, negatives,
        leftOutNoLabel, leftOutNoScore}`."""
        return self.model_dump(mode="json", exclude={"scorer_id"}, exclude_none=True)


class LabelAgreement(Record):
    """Every scorer's agreement with one label column of an experiment's dataset."""

    label_column: str
    """The metadata column holding the labels."""
    labelled_items: int
    """Items with a label."""
    unlabelled_items: int
    """Items whose label is empty or missing (left out)."""
    resamples: int
    """Bootstrap resamples behind the AUC interval."""
    seed: int
    """The bootstrap's seed."""
    confidence_level: float
    """The AUC interval's coverage (0.95)."""
    scorers: list[ScorerAgreement] = Field(default_factory=list)
    """One entry per scorer, in the experiment's scorer order."""

    def to_json(self) -> dict[str, Any]:
        """`{scorerId: ScorerAgreement.to_json()}`: the export's `labelAgreement`."""
        return {entry.scorer_id: entry.to_json() for entry in self.scorers}

    def method_json(self) -> dict[str, Any]:
        """How it was measured: `{labelColumn, labelledItems, unlabelledItems, resamples, seed,
        confidenceLevel, method}` (the export's `summary.labelAgreement`)."""
        described = self.model_dump(mode="json", exclude={"scorers"})
        described["method"] = (
            "labels binarised at >= 0.5; ROC AUC with a stratified percentile bootstrap "
            "interval; Spearman on the labels as given; threshold maximising Youden's J, "
            "then Cohen's kappa and the confusion matrix at it"
        )
        return described


Verdict = Literal["separates", "chance", "inverted", "not defined"]
"""What a scorer's AUC interval says: above 0.5 (it separates the labels), containing 0.5 (no
better than chance), below 0.5 (it ranks wrong answers higher), or no statistics."""

_BADGES: dict[str, str] = {
    "separates": "✅ separates",
    "chance": "⚪ chance",
    "inverted": "🔻 inverted",
    "not defined": "— not defined",
}


# ---- labels ----


def parse_label(value: Any) -> float | None:
    """The label as a number in [0, 1], None when empty; ValueError for anything else."""
    if value is None:
        return None
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, Integral):
        if value in (0, 1):
            return float(value)
        raise ValueError(f"the integer {value!r} is not 0 or 1")
    if isinstance(value, Real):
        number = float(value)
        if math.isnan(number):
            return None
        if 0.0 <= number <= 1.0:
            return number
        raise ValueError(f"the number {value!r} is not between 0 and 1")
    if isinstance(value, str):
        return _text_label(value)
    raise ValueError(f"a {type(value).__name__} is not a label")


def _text_label(value: str) -> float | None:
    text = value.strip().lower()
    if not text:
        return None
    if text in _TRUE_TEXTS:
        return 1.0
    if text in _FALSE_TEXTS:
        return 0.0
    try:
        number = float(text)
    except ValueError:
        raise ValueError(f"the text {value!r} is not a label") from None
    if 0.0 <= number <= 1.0:  # NaN and the infinities fail this too
        return number
    raise ValueError(f"the text {value!r} is not a number between 0 and 1")


def label_values(items: Sequence[DatasetItem], column: str) -> dict[str, float]:
    """Item id -> label for the items whose `column` (in their metadata) is not empty.

    Raises LabelError when no item has the column, or naming the first item (and its 1-based
    row in `items`) whose value is not a label.
    """
    if not any(column in item.metadata for item in items):
        raise LabelError("no item has this column", column=column)
    labels: dict[str, float] = {}
    for row, item in enumerate(items, start=1):
        value = item.metadata.get(column)
        try:
            label = parse_label(value)
        except ValueError as problem:
            raise LabelError(
                f"{problem} (a label is {_ACCEPTED})",
                column=column,
                item_id=item.id,
                row=row,
                value=value,
            ) from None
        if label is not None:
            labels[item.id] = label
    return labels


def label_columns(items: Sequence[DatasetItem]) -> list[str]:
    """The metadata columns that hold labels: at least one value, and every non-empty value a
    label. In first-seen order."""
    names: dict[str, None] = {}
    for item in items:
        names.update(dict.fromkeys(item.metadata))
    return [name for name in names if _holds_labels(item.metadata.get(name) for item in items)]


def _holds_labels(values: Iterable[Any]) -> bool:
    found = False
    for value in values:
        try:
            label = parse_label(value)
        except ValueError:
            return False
        found = found or label is not None
    return found


def suggested_label_column(columns: Sequence[str]) -> str | None:
    """The column to preselect: the first named like label, is_correct, correct, verdict or
    human (in that order of preference, ignoring case, spaces, `_` and `-`), else None."""
    keys = {column: re.sub(r"[\s_\-]+", "", column).lower() for column in columns}
    for hint in _LABEL_HINTS:
        for column in columns:
            if hint in keys[column]:
                return column
    return None


# ---- agreement ----


def label_agreement(
    detail: ExperimentDetail,
    column: str,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> LabelAgreement:
    """Each scorer's agreement with the labels in `column` (see the module docstring).

    Only successful runs with a finite score count. Raises LabelError for a column no item has
    or a value that is not a label.
    """
    return agreement_with_labels(
        detail.items,
        _scores_by_scorer(detail),
        detail.info.scorer_ids,
        column,
        resamples=resamples,
        seed=seed,
    )


def agreement_with_labels(
    items: Sequence[DatasetItem],
    scores: Mapping[str, Mapping[str, float]],
    scorer_ids: Sequence[str],
    column: str,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> LabelAgreement:
    """`label_agreement` from its parts: the dataset's `items` (their labels), each scorer's
    finite scores by item (`finite_scores`: what the service reads without loading the results)
    and the experiment's `scorer_ids`, in the order shown."""
    labels = label_values(items, column)
    unlabelled = len(items) - len(labels)
    return LabelAgreement(
        label_column=column,
        labelled_items=len(labels),
        unlabelled_items=unlabelled,
        resamples=resamples,
        seed=seed,
        confidence_level=CONFIDENCE_LEVEL,
        scorers=[
            _scorer_agreement(
                scorer_id, labels, scores.get(scorer_id, {}), unlabelled, resamples, seed
            )
            for scorer_id in scorer_ids
        ],
    )


def review_agreement(
    detail: ExperimentDetail,
    *,
    thresholds: Mapping[str, float] | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> LabelAgreement:
    """Each scorer's agreement with the reviews of `detail` (`detail.reviews`) as labels: the
    label of an item for a scorer is what its reviewers said it deserves (core/reporting/
    reviews.py, docs/review.md), so each scorer has its own labelled items. `label_column` is
    `REVIEWS_SOURCE`; `labelled_items` counts the items with a label for any scorer."""
    return agreement_with_reviews(
        detail.info,
        detail.reviews,
        len(detail.items),
        _scores_by_scorer(detail),
        thresholds=thresholds,
        resamples=resamples,
        seed=seed,
    )


def agreement_with_reviews(
    info: ExperimentInfo,
    reviews: Iterable[Review],
    item_count: int,
    scores: Mapping[str, Mapping[str, float]],
    *,
    thresholds: Mapping[str, float] | None = None,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> LabelAgreement:
    """`review_agreement` from its parts: the experiment, its reviews, how many items its
    dataset has and each scorer's finite scores by item (`finite_scores`)."""
    by_scorer = review_labels(info, reviews, scores, thresholds)
    labelled = {item for labels in by_scorer.values() for item in labels}
    return LabelAgreement(
        label_column=REVIEWS_SOURCE,
        labelled_items=len(labelled),
        unlabelled_items=item_count - len(labelled),
        resamples=resamples,
        seed=seed,
        confidence_level=CONFIDENCE_LEVEL,
        scorers=[
            _scorer_agreement(
                scorer_id,
                labels := by_scorer.get(scorer_id, {}),
                scores.get(scorer_id, {}),
                item_count - len(labels),
                resamples,
                seed,
            )
            for scorer_id in info.scorer_ids
        ],
    )


def finite_scores(stored: StoredScores) -> dict[str, dict[str, float]]:
    """Scorer id -> item id -> score of the stored runs with a finite score (what the
    agreement counts: not-scorable runs have none), from the light columns of
    `Store.stored_scores`."""
    return _finite_by_scorer(zip(stored.item_ids, stored.scorer_ids, stored.scores, strict=True))


def _scores_by_scorer(detail: ExperimentDetail) -> dict[str, dict[str, float]]:
    return _finite_by_scorer(
        (outcome.item_id, outcome.scorer_id, outcome.score)
        for outcome in detail.results
        if outcome.status == "success"
    )


def _finite_by_scorer(
    runs: Iterable[tuple[str, str, float | None]],
) -> dict[str, dict[str, float]]:
    """Scorer id -> item id -> score of the (item, scorer, score) runs with a finite score."""
    scores: dict[str, dict[str, float]] = {}
    for item_id, scorer_id, score in runs:
        if score is not None and math.isfinite(score):
            scores.setdefault(scorer_id, {})[item_id] = float(score)
    return scores


class _Counts(TypedDict):
    """The counting fields of a `ScorerAgreement`, defined or not."""

    scorer_id: str
    n: int
    positives: int
    negatives: int
    left_out_no_label: int
    left_out_no_score: int


class _Statistics(TypedDict):
    """The statistics fields of a defined `ScorerAgreement`."""

    auc: float
    auc_low: float
    auc_high: float
    spearman: float
    threshold: float
    youden_j: float
    kappa: float
    confusion: Confusion


def _scorer_agreement(
    scorer_id: str,
    labels: Mapping[str, float],
    scores: Mapping[str, float],
    unlabelled: int,
    resamples: int,
    seed: int,
) -> ScorerAgreement:
    used = [item_id for item_id in labels if item_id in scores]
    truth = [labels[item_id] for item_id in used]
    predicted = [scores[item_id] for item_id in used]
    positives = sum(label >= 0.5 for label in truth)
    counts: _Counts = {
        "scorer_id": scorer_id,
        "n": len(used),
        "positives": positives,
        "negatives": len(used) - positives,
        "left_out_no_label": unlabelled,
        "left_out_no_score": len(labels) - len(used),
    }
    reason = _undefined_reason(truth, predicted, positives)
    if reason is not None:
        return ScorerAgreement(**counts, defined=False, reason=reason)
    return ScorerAgreement(**counts, defined=True, **_statistics(truth, predicted, resamples, seed))


def _undefined_reason(truth: list[float], predicted: list[float], positives: int) -> str | None:
    n = len(truth)
    if n == 0:
        return "no item has both a label and a score from this scorer"
    if positives in (0, n):
        kind = "positive (label >= 0.5)" if positives else "negative (label < 0.5)"
        return (
            f"all {n} labelled items are {kind}: AUC, Youden's J and kappa need both positive "
            "and negative items"
        )
    if min(predicted) == max(predicted):
        return (
            f"the scorer gave every item the same score ({predicted[0]:g}): a constant score "
            "cannot separate the labels"
        )
    return None


def _statistics(
    truth: list[float], predicted: list[float], resamples: int, seed: int
) -> _Statistics:
    import numpy as np
    from scipy.stats import spearmanr
    from sklearn.metrics import cohen_kappa_score, confusion_matrix, roc_auc_score, roc_curve

    binary = np.asarray(truth) >= 0.5
    scores = np.asarray(predicted, dtype=float)
    false_rate, true_rate, thresholds = roc_curve(binary, scores)
    # roc_curve starts at +inf (nothing predicted positive); a threshold the user can apply is
    # a score value, so that point is skipped (its J, 0, is also reached at the lowest score).
    finite = np.isfinite(thresholds)
    j_values = (true_rate - false_rate)[finite]
    best = int(np.argmax(j_values))  # the first maximum: the highest threshold among ties
    threshold = float(thresholds[finite][best])
    decided = scores >= threshold
    tn, fp, fn, tp = confusion_matrix(binary, decided, labels=[False, True]).ravel()
    low, high = _auc_interval(scores[binary], scores[~binary], resamples, seed)
    return {
        "auc": float(roc_auc_score(binary, scores)),
        "auc_low": low,
        "auc_high": high,
        "spearman": float(spearmanr(scores, np.asarray(truth)).statistic),
        "threshold": threshold,
        "youden_j": float(j_values[best]),
        "kappa": float(cohen_kappa_score(binary, decided)),
        "confusion": Confusion(tp=int(tp), fp=int(fp), tn=int(tn), fn=int(fn)),
    }


def _auc_interval(
    positive_scores: np.ndarray, negative_scores: np.ndarray, resamples: int, seed: int
) -> tuple[float, float]:
    """Percentile bootstrap of the AUC, resampling positives and negatives separately (a
    stratified bootstrap, so every resample has both classes; pROC's default for `ci.auc`).

    Each resample's AUC is its Mann-Whitney U over (positives x negatives), the same number
    as the ROC AUC, computed for a whole batch of resamples at once (`_pair_auc`).
    """
    import numpy as np
    from scipy.stats import bootstrap

    # The AUC depends on the scores' order only: each score is replaced by its place among
    # the distinct scores once, and the resamples are resamples of places (the same draws).
    values = np.unique(np.concatenate([positive_scores, negative_scores]))
    width = len(values)

    def auc(positives: Any, negatives: Any) -> Any:
        return _coded_auc(positives, negatives, width)

    # SciPy resamples only samples of two or more; a class of one item is the same in every
    # resample anyway, so it is held fixed and only the other class is resampled.
    classes = (np.searchsorted(values, positive_scores), np.searchsorted(values, negative_scores))
    resampled = [k for k, scores in enumerate(classes) if len(scores) > 1]
    if not resampled:
        value = float(auc(*classes))
        return value, value

    def statistic(*samples: Any, axis: int = -1) -> Any:
        batch_shape = np.moveaxis(samples[0], axis, -1).shape[:-1]
        full = [np.broadcast_to(scores, (*batch_shape, len(scores))) for scores in classes]
        for k, sample in zip(resampled, samples, strict=True):
            full[k] = np.moveaxis(sample, axis, -1)
        return auc(*full)

    n = len(positive_scores) + len(negative_scores)
    result = bootstrap(
        tuple(classes[k] for k in resampled),
        statistic,
        n_resamples=resamples,
        vectorized=True,
        method="percentile",
        confidence_level=CONFIDENCE_LEVEL,
        batch=max(1, 2_000_000 // n),  # about 16 MB of resampled scores at a time
        rng=np.random.default_rng(seed),
    )
    interval = result.confidence_interval
    return float(interval.low), float(interval.high)


def _pair_auc(positives: np.ndarray, negatives: np.ndarray) -> np.ndarray:
    """Mann-Whitney U / (n1 x n0) along the last axis: the share of (positive, negative) pairs
    the positive wins, a tie counting half."""
    import numpy as np

    values = np.unique(np.concatenate([positives.ravel(), negatives.ravel()]))
    codes = np.searchsorted(values, positives), np.searchsorted(values, negatives)
    return _coded_auc(*codes, len(values))


def _coded_auc(positives: np.ndarray, negatives: np.ndarray, width: int) -> np.ndarray:
    """`_pair_auc` of scores given as their places (0 .. width - 1) among the distinct scores:
    counted per place (each row's counts by one `bincount`, then a running sum of the
    negatives below), not by ranking every row: SciPy's `mannwhitneyu` sorted each resample,
    6 s for 5 scorers at 10,000 items."""
    import numpy as np

    batch = positives.shape[:-1]
    rows = int(np.prod(batch, dtype=np.int64))
    offsets = (np.arange(rows, dtype=np.int64) * width)[:, None]

    def counts(places: np.ndarray) -> np.ndarray:
        at = places.reshape(rows, -1) + offsets
        return np.bincount(at.ravel(), minlength=rows * width).reshape(rows, width)

    wins, losses = counts(positives), counts(negatives)
    below = np.cumsum(losses, axis=1) - losses
    pairs: np.ndarray = (wins * (below + 0.5 * losses)).sum(axis=1)
    share: np.ndarray = pairs / (positives.shape[-1] * negatives.shape[-1])
    return share.reshape(batch)


# ---- tables and text ----


def scorer_verdict(entry: ScorerAgreement) -> Verdict:
    """The verdict of one scorer from its AUC interval: `separates` when the whole interval is
    above 0.5, `inverted` when it is below, `chance` when it contains 0.5, `not defined` when
    there are no statistics."""
    if not entry.defined or entry.auc_low is None or entry.auc_high is None:
        return "not defined"
    if entry.auc_low > 0.5:
        return "separates"
    if entry.auc_high < 0.5:
        return "inverted"
    return "chance"


def verdict_badge(entry: ScorerAgreement) -> str:
    """The verdict as a short badge for a table cell: `✅ separates`, `⚪ chance`,
    `🔻 inverted` or `— not defined`."""
    return _BADGES[scorer_verdict(entry)]


def ranked_scorers(agreement: LabelAgreement) -> list[ScorerAgreement]:
    """The scorers best first: by AUC, highest first (ties: the higher interval's lower end,
    then the experiment's order); scorers without statistics last, in the experiment's order."""
    defined = [entry for entry in agreement.scorers if scorer_verdict(entry) != "not defined"]
    undefined = [entry for entry in agreement.scorers if scorer_verdict(entry) == "not defined"]
    defined.sort(key=lambda entry: (-(entry.auc or 0.0), -(entry.auc_low or 0.0)))
    return [*defined, *undefined]


def agreement_verdict(agreement: LabelAgreement) -> str:
    """The verdict in a sentence or three: which scorers separate the labels (their AUC
    interval is above 0.5), which are no better than chance (it contains 0.5), which rank
    wrong answers higher (it is below), and which have no statistics; each group best first.

    For example: `2 of 3 scorers separate the labels: exact (AUC 0.98), f1 (AUC 0.71). No better
    than chance: tone (AUC 0.52).`"""
    level = f"{agreement.confidence_level:.0%}"
    groups: dict[Verdict, list[ScorerAgreement]] = {
        "separates": [],
        "chance": [],
        "inverted": [],
        "not defined": [],
    }
    for entry in ranked_scorers(agreement):
        groups[scorer_verdict(entry)].append(entry)
    total = len(agreement.scorers)
    if total == 0:
        return "No scorer to judge."

    def names(entries: list[ScorerAgreement]) -> str:
        return ", ".join(f"{entry.scorer_id} (AUC {entry.auc:.2f})" for entry in entries)

    parts: list[str] = []
    separating = groups["separates"]
    if separating:
        verb = "separates" if len(separating) == 1 else "separate"
        parts.append(
            f"{len(separating)} of {total} scorers {verb} the labels "
            f"(the {level} AUC interval above 0.5): {names(separating)}."
        )
    else:
        parts.append(f"No scorer separates the labels (no {level} AUC interval above 0.5).")
    if groups["chance"]:
        parts.append(
            f"No better than chance (the interval contains 0.5): {names(groups['chance'])}."
        )
    if groups["inverted"]:
        parts.append(
            f"Ranks wrong answers higher (the interval below 0.5): {names(groups['inverted'])}."
        )
    if groups["not defined"]:
        undefined = ", ".join(entry.scorer_id for entry in groups["not defined"])
        parts.append(f"Not defined: {undefined}.")
    return " ".join(parts)


def agreement_frame(
    agreement: LabelAgreement, comparisons: Mapping[str, str] | None = None
) -> pd.DataFrame:
    """One row per scorer, best first (`ranked_scorers`; a pandas DataFrame): `scorer,
    verdict, compares, n, AUC, AUC interval, Spearman, threshold, J, kappa, tp, fp, tn, fn,
    left out, note`; `verdict` is the badge of `verdict_badge`; `compares` says what the
    scorer compared, from `comparisons` (empty when unknown); a not-defined scorer has empty
    statistics and `not defined: <reason>` as its note."""
    import pandas as pd

    level = f"{agreement.confidence_level:.0%}"
    rows = []
    for entry in ranked_scorers(agreement):
        confusion = entry.confusion
        defined = entry.defined and confusion is not None
        rows.append(
            {
                "scorer": entry.scorer_id,
                "verdict": verdict_badge(entry),
                "compares": (comparisons or {}).get(entry.scorer_id, ""),
                "n": entry.n,
                "AUC": entry.auc,
                f"AUC {level} interval": (
                    f"[{entry.auc_low:.3f}, {entry.auc_high:.3f}]" if defined else None
                ),
                "Spearman": entry.spearman,
                "threshold": entry.threshold,
                "J": entry.youden_j,
                "kappa": entry.kappa,
                **{
                    name: getattr(confusion, name) if confusion is not None else None
                    for name in ("tp", "fp", "tn", "fn")
                },
                "left out": (
                    f"{entry.left_out_no_label} without a label, "
                    f"{entry.left_out_no_score} without a score"
                ),
                "note": None if defined else f"not defined: {entry.reason}",
            }
        )
    frame = pd.DataFrame(rows)
    for name in ("tp", "fp", "tn", "fn"):
        if name in frame:
            frame[name] = frame[name].astype("Int64")  # whole counts, empty when not defined
    return frame


def agreement_line(entry: ScorerAgreement) -> str:
    """One line for a terminal or a report: `label agreement (n=37): AUC 0.87 [0.80, 0.93] ·
    Spearman 0.61 · at threshold 0.42 (J 0.55): kappa 0.50, tp/fp/tn/fn 10/3/20/4`, or
    `... not defined: <reason>`; the left-out counts follow when there are any."""
    head = f"label agreement (n={entry.n})"
    left_out = _left_out(entry)
    if not entry.defined:
        return f"{head}: not defined: {entry.reason}{left_out}"
    confusion = entry.confusion or Confusion(tp=0, fp=0, tn=0, fn=0)
    return (
        f"{head}: AUC {entry.auc:.2f} [{entry.auc_low:.2f}, {entry.auc_high:.2f}]"
        f" · Spearman {entry.spearman:.2f}"
        f" · at threshold {entry.threshold:.4g} (J {entry.youden_j:.2f}):"
        f" kappa {entry.kappa:.2f}, tp/fp/tn/fn"
        f" {confusion.tp}/{confusion.fp}/{confusion.tn}/{confusion.fn}{left_out}"
    )


def _left_out(entry: ScorerAgreement) -> str:
    parts = []
    if entry.left_out_no_label:
        parts.append(f"{entry.left_out_no_label} without a label")
    if entry.left_out_no_score:
        parts.append(f"{entry.left_out_no_score} without a score (failed or not scorable)")
    return f" · left out: {', '.join(parts)}" if parts else ""
