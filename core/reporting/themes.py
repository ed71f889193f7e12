"""Themes: similar judge reasons (or failure errors) grouped, each named by its most telling
words, to answer "why do we fail?" at a glance, without any judge call (docs/core.md, Themes).

The texts are weighed with TF-IDF (single words and word pairs, English stop words left out,
numbers and ids blanked so that "item 17" and "item 18" say the same) and grouped by KMeans with
a fixed seed, the number of groups chosen by the silhouette score over a small range. The same
texts and seed always give the same themes. scikit-learn is imported on the first call only.
"""

from __future__ import annotations

import math
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from core.records import ScorerOutcome, Theme

__all__ = [
    "DEFAULT_QUANTILE",
    "MAX_THEMES",
    "LowScores",
    "cluster_texts",
    "low_scores",
    "normalise",
    "reason_text",
]

MAX_THEMES = 6
"""At most this many themes: a handful a person reads at a glance."""
DEFAULT_QUANTILE = 0.25
"""Without a threshold, the lowest quarter of the scores counts as low."""
EXAMPLES = 5
"""Example items kept per theme."""
LABEL_WORDS = 3
"""Words in a theme's label (more are listed in `Theme.words`)."""
WORDS = 6
EXAMPLE_CHARS = 300
SILHOUETTE_SAMPLE = 2_000
"""Above this many distinct texts the silhouette is computed on a sample (seeded)."""
NO_WORDS = "(no telling words)"
_OWN_THEMES = 3
"""Up to this many distinct texts, each is its own theme (a silhouette needs more)."""

# Ids and numbers are blanked: they differ from item to item and would split a theme. Numbers
# of three digits stay (an HTTP status such as 429 tells a failure apart).
_UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I)
_MIXED_ID = re.compile(r"\b(?=\w*\d)(?=\w*[a-z_])[\w-]{2,}\b", re.I)
_LONG_NUMBER = re.compile(r"\b\d+(?:[.,]\d+)+|\b\d{4,}\b|\b\d{1,2}\b")
_SPACES = re.compile(r"\s+")


def normalise(text: str) -> str:
    """`text` lower-cased with ids (UUIDs, words mixing letters and digits), decimals and
    numbers other than three-digit ones blanked, and runs of white space made one space."""
    text = _UUID.sub(" ", text.lower())
    text = _LONG_NUMBER.sub(" ", text)  # before the ids: "12.5s" is a number, not an id
    text = _MIXED_ID.sub(" ", text)
    return _SPACES.sub(" ", text).strip()


def reason_text(reason: Any) -> str:
    """A reason as text: a string as it is, anything else (a list, a dict) as its parts'
    text joined, None as ""."""
    if reason is None:
        return ""
    if isinstance(reason, str):
        return reason.strip()
    if isinstance(reason, dict):
        return " ".join(reason_text(v) for v in reason.values()).strip()
    if isinstance(reason, list | tuple):
        return " ".join(reason_text(v) for v in reason).strip()
    return str(reason).strip()


@dataclass(frozen=True)
class LowScores:
    """The outcomes that count as low, and how that was decided."""

    outcomes: list[ScorerOutcome]
    threshold: float | None
    quantile: float | None
    cutoff: float | None
    scored: int
    """Outcomes with a numeric score (the others are never low)."""

    def basis(self) -> str:
        """Which items were taken, in words."""
        taken = f"{len(self.outcomes):,} of {self.scored:,} scored items"
        if self.threshold is not None:
            return f"reasons of the {taken} scoring below {self.threshold:g}"
        share = f"{(self.quantile or 0) * 100:g}%"
        if self.cutoff is None:
            return f"reasons of the lowest {share} of scores (no item scored)"
        return f"reasons of the {taken} in the lowest {share} of scores (at most {self.cutoff:.3g})"


def low_scores(
    outcomes: Sequence[ScorerOutcome],
    threshold: float | None = None,
    quantile: float = DEFAULT_QUANTILE,
) -> LowScores:
    """The outcomes scoring below `threshold`, or, without one, those at or below the
    `quantile`-th quantile of the scores (ties at the cut-off all taken). Outcomes without a
    numeric score are never low. Raises ValueError for a quantile outside (0, 1] or a
    threshold that is not a finite number."""
    if threshold is not None and (
        isinstance(threshold, bool)
        or not isinstance(threshold, int | float)
        or not math.isfinite(threshold)
    ):
        raise ValueError(f"The low-score threshold must be a finite number, got {threshold!r}")
    if isinstance(quantile, bool) or not 0 < quantile <= 1:
        raise ValueError(f"The low-score quantile must be above 0 and at most 1, got {quantile!r}")
    scored = [o for o in outcomes if _numeric(o.score)]
    if threshold is not None:
        low = [o for o in scored if o.score is not None and o.score < threshold]
        return LowScores(low, float(threshold), None, None, len(scored))
    if not scored:
        return LowScores([], None, quantile, None, 0)
    values = np.array([o.score for o in scored], dtype=float)
    cutoff = float(np.quantile(values, quantile, method="inverted_cdf"))
    low = [o for o in scored if o.score is not None and o.score <= cutoff]
    return LowScores(low, None, quantile, cutoff, len(scored))


def _numeric(score: Any) -> bool:
    return isinstance(score, int | float) and not isinstance(score, bool) and math.isfinite(score)


def cluster_texts(
    texts: Sequence[tuple[str, str]], *, seed: int = 0, max_themes: int = MAX_THEMES
) -> list[Theme]:
    """Group `(item_id, text)` pairs into at most `max_themes` themes, largest first.

    Empty texts are left out (the caller counts them). Identical texts (once normalised) always
    share a theme. Up to three distinct texts are not clustered: each is its own theme.
    Raises ValueError for `max_themes` below 1."""
    if max_themes < 1:
        raise ValueError(f"max_themes must be at least 1, got {max_themes!r}")
    given = [(item_id, text.strip()) for item_id, text in texts if text and text.strip()]
    if not given:
        return []
    groups: dict[str, list[int]] = {}  # normalised text -> positions in `given`, in order
    for position, (_, text) in enumerate(given):
        groups.setdefault(normalise(text), []).append(position)
    distinct = list(groups)
    matrix, vocabulary = _weights(distinct)
    if matrix is None or max_themes == 1:
        labels = np.zeros(len(distinct), dtype=int)
    elif len(distinct) <= _OWN_THEMES:  # too few to cluster: each is its own theme
        labels = np.arange(len(distinct))
    else:
        sizes = np.array([len(groups[d]) for d in distinct], dtype=float)
        labels = _kmeans(matrix, sizes, seed, max_themes)
    return _themes(given, groups, distinct, labels, matrix, vocabulary)


def _weights(distinct: list[str]) -> tuple[Any, list[str]]:
    """The TF-IDF matrix of the distinct texts (rows L2-normalised) and its terms; (None, [])
    when no text has a telling word (all stop words or blanks)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectorizer = TfidfVectorizer(
        ngram_range=(1, 2),
        stop_words="english",
        sublinear_tf=True,
        min_df=1,
        max_features=20_000,
        dtype=np.float64,
    )
    try:
        matrix = vectorizer.fit_transform(distinct)
    except ValueError:  # "empty vocabulary": nothing but stop words and blanks
        return None, []
    return matrix, list(vectorizer.get_feature_names_out())


def _kmeans(matrix: Any, weights: np.ndarray, seed: int, max_themes: int) -> np.ndarray:
    """KMeans labels (each distinct text weighed by how often it came) for k in 2..max_themes
    (below the number of distinct texts), the k with the best silhouette; ties go to the
    smaller k."""
    from sklearn.cluster import KMeans
    from sklearn.exceptions import ConvergenceWarning
    from threadpoolctl import threadpool_limits

    rows = matrix.shape[0]
    # The silhouette is taken over the distinct texts (many copies of one text would make
    # every split of their paraphrases look perfect), on a seeded sample when they are many.
    sample = np.arange(rows)
    if rows > SILHOUETTE_SAMPLE:
        sample = np.sort(np.random.default_rng(seed).choice(rows, SILHOUETTE_SAMPLE, False))
    best: tuple[float, np.ndarray] | None = None
    # One thread: on a busy 2-core machine OpenMP's threads wait on each other, three times
    # slower than one (bench/themes.py).
    with threadpool_limits(limits=1):
        for k in range(2, min(max_themes, rows - 1) + 1):
            model = KMeans(n_clusters=k, n_init=3, random_state=seed, max_iter=200)
            with warnings.catch_warnings():
                # Texts whose only differences are stop words weigh the same: fewer groups
                # than k is a fine answer (the silhouette judges it), not a problem to report.
                warnings.simplefilter("ignore", ConvergenceWarning)
                labels = model.fit_predict(matrix, sample_weight=weights)
            score = _silhouette(matrix[sample], labels[sample])
            if score is not None and (best is None or score > best[0] + 1e-9):
                best = (score, labels)
    if best is None:
        return np.zeros(rows, dtype=int)
    return best[1]


def _silhouette(matrix: Any, labels: np.ndarray) -> float | None:
    """The silhouette score, None when it is undefined (one group, or one text per group)."""
    from sklearn.metrics import silhouette_score

    groups = len(set(labels.tolist()))
    if groups < 2 or groups > len(labels) - 1:
        return None
    return float(silhouette_score(matrix, labels, metric="euclidean"))


def _themes(
    given: list[tuple[str, str]],
    groups: dict[str, list[int]],
    distinct: list[str],
    labels: np.ndarray,
    matrix: Any,
    vocabulary: list[str],
) -> list[Theme]:
    total = np.asarray(matrix.sum(axis=0)).ravel() if matrix is not None else None
    members: dict[int, list[int]] = {}
    for row, label in enumerate(labels.tolist()):
        members.setdefault(int(label), []).append(row)
    themes = []
    for rows in members.values():
        positions = sorted(p for row in rows for p in groups[distinct[row]])
        words: list[str] = []
        example_row = rows[0]
        if matrix is not None:
            inside = np.asarray(matrix[rows].sum(axis=0)).ravel()
            centre = inside / len(rows)
            outside = len(distinct) - len(rows)
            rest = (total - inside) / outside if outside else np.zeros_like(centre)
            words = _telling_words(centre - rest, centre, vocabulary)
            closeness = np.asarray(matrix[rows] @ centre).ravel()
            example_row = rows[int(np.argmax(closeness))]
        example = given[groups[distinct[example_row]][0]][1]
        themes.append(
            Theme(
                label=" · ".join(words[:LABEL_WORDS]) or NO_WORDS,
                words=words,
                size=len(positions),
                item_ids=list(dict.fromkeys(given[p][0] for p in positions))[:EXAMPLES],
                example=example
                if len(example) <= EXAMPLE_CHARS
                else example[: EXAMPLE_CHARS - 1] + "…",
            )
        )
    themes.sort(key=lambda t: (-t.size, t.label))
    return themes


def _telling_words(
    distinctness: np.ndarray, centre: np.ndarray, vocabulary: list[str]
) -> list[str]:
    """The terms weighing most in a theme against the whole, a word pair taking the place of
    its words (and a word left out when a chosen pair holds it)."""
    order = np.lexsort((np.array(vocabulary), -distinctness))
    chosen: list[str] = []
    for index in order.tolist():
        if distinctness[index] <= 0 or centre[index] <= 0 or len(chosen) >= WORDS:
            break
        term = vocabulary[index]
        if any(_overlaps(term, other) for other in chosen):
            continue
        chosen.append(term)
    return chosen


def _overlaps(term: str, other: str) -> bool:
    words, others = set(term.split()), set(other.split())
    return bool(words & others)
