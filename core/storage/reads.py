"""Reading a large experiment without loading it: per-scorer aggregates computed by the database
(GROUP BY, on SQLite and PostgreSQL alike) and the item table a page at a time, filtered and
sorted in SQL (docs/storage.md, Reading a large experiment).

Each function takes a connection and returns the small records of `core.records`;
`Store` opens the connection. The indexes they lean on are made by revision 0003.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    Connection,
    Text,
    and_,
    any_,
    case,
    cast,
    exists,
    func,
    literal,
    select,
    type_coerce,
)
from sqlalchemy.dialects import postgresql

from core.records import (
    ItemRow,
    ResultPage,
    ResultQuery,
    ScoreHistogram,
    ScorerUsage,
    ScoreSummary,
    StoredScores,
)
from core.run_results import JudgeUsage
from core.storage._rows import _driver_rows, _loads
from core.storage.slices import metadata_filter
from core.storage.tables import (
    DatasetItemRow,
    ExperimentRow,
    ScoreRow,
)
from core.storage.text_search import (
    index_candidates,
    index_walk,
    like_condition,
    matches,
    search_base,
    trigram_query,
)

__all__ = [
    "COUNT_AT_LEAST",
    "HISTOGRAM_BINS",
    "MAX_PAGE_SIZE",
    "ScorerTotals",
    "check_query",
    "histogram_edges",
    "may_use_index",
    "result_page",
    "score_histograms",
    "scorer_totals",
    "stored_scores",
]

HISTOGRAM_BINS = 10
COUNT_AT_LEAST = 1_000
"""A text search counts its matches up to this many (or past the page asked for): a page's
total is then a lower bound (`ResultPage.total_at_least`). Counting a common needle to 10,000
took PostgreSQL three times as long as to 1,000 at a million items (docs/storage.md), and a
reader paging 50 at a time learns nothing from the difference."""
MAX_PAGE_SIZE = 1_000
_ID_CHUNK = 5_000
_FEW_IN_RANGE = 32
"""A text search under a score range keeping under 1/32 of the dataset's items reads only
theirs (`_search_in_few`): measured at a million items, reading the items in range was the
faster plan at 1% of them, testing every item's text in dataset order at 6% and above."""
_RANGE_TEST_COST = 3
"""An item in a score range tested for a needle costs about as much as this many matches of
SQLite's trigram index walked (`_range_before_walk`; measured at a million items: 10-14 µs an
item, 3-4 µs a match)."""
_SAMPLED_RUNS, _SAMPLED_RUN = 20, 100
"""A large dataset's share in a score range is guessed from this many runs of this many
items (`_sampled_in_range`)."""
"""Item ids bound per query when a page is restricted to given items (a database takes at most
some tens of thousands of parameters in one statement)."""
_USAGE = (
    "input_tokens",
    "output_tokens",
    "total_tokens",
    "reasoning_tokens",
    "cached_input_tokens",
    "cache_creation_input_tokens",
)

_results = ScoreRow.__table__
_items = DatasetItemRow.__table__
_experiments = ExperimentRow.__table__


# ---- aggregates ----


@dataclass(frozen=True)
class ScorerTotals:
    """What `ix_scorer_results_aggregates` gives of one experiment's scorer: what its
    summary, judge usage and counts are made of."""

    experiment_id: str
    scorer_id: str
    count: int
    scored: int
    mean: float | None
    min: float | None
    max: float | None
    judged_runs: int
    """Runs that called the judge (made an attempt, or were answered from the judge cache);
    the fields below sum theirs."""
    judge_calls: int
    judge_attempts: int
    cached_calls: int
    """Judge executions answered from the judge cache (no attempt made)."""
    duration_ms: int
    usage: JudgeUsage

    def summary(self) -> ScoreSummary:
        """The scorer's `ScoreSummary`."""
        return ScoreSummary(
            scorer_id=self.scorer_id,
            count=self.count,
            scored=self.scored,
            mean=self.mean,
            min=self.min,
            max=self.max,
        )

    def scorer_usage(self, model: str | None) -> ScorerUsage:
        """The scorer's `ScorerUsage` (without its cost), `model` being the experiment's."""
        return ScorerUsage(
            scorer_id=self.scorer_id,
            model=model,
            runs=self.judged_runs,
            judge_calls=self.judge_calls,
            judge_attempts=self.judge_attempts,
            cached_calls=self.cached_calls,
            duration_ms=self.duration_ms,
            usage=self.usage,
        )


def scorer_totals(connection: Connection, experiment_id: str | None) -> list[ScorerTotals]:
    """Per (experiment, scorer) of one experiment (every experiment when None): two GROUP BYs
    over the covering index, one counting the runs and their scores, one summing the judge
    usage of the runs that called the judge (none for a code scorer: nothing to sum)."""
    score = _results.c.score
    counted = select(
        _results.c.experiment_id,
        _results.c.scorer_id,
        func.count().label("count"),
        func.count(score).label("scored"),
        func.avg(score).label("mean"),
        func.min(score).label("min"),
        func.max(score).label("max"),
    )
    summed = select(
        _results.c.experiment_id,
        _results.c.scorer_id,
        func.count().label("judged_runs"),
        func.sum(_results.c.judge_calls).label("judge_calls"),
        func.sum(_results.c.judge_attempts).label("judge_attempts"),
        func.sum(_results.c.cached_calls).label("cached_calls"),
        func.sum(_results.c.duration_ms).label("duration_ms"),
        *(func.sum(_results.c[name]).label(name) for name in _USAGE),
    ).where((_results.c.judge_attempts > 0) | (_results.c.cached_calls > 0))
    if experiment_id is not None:
        counted = counted.where(_results.c.experiment_id == experiment_id)
        summed = summed.where(_results.c.experiment_id == experiment_id)
    keys = (_results.c.experiment_id, _results.c.scorer_id)
    usage = {
        (row.experiment_id, row.scorer_id): row._mapping
        for row in connection.execute(summed.group_by(*keys))
    }
    return [
        _totals(row._mapping, usage.get((row.experiment_id, row.scorer_id)))
        for row in connection.execute(counted.group_by(*keys).order_by(*keys))
    ]


def _totals(row: Any, usage: Any) -> ScorerTotals:
    usage = usage or {}
    return ScorerTotals(
        experiment_id=row["experiment_id"],
        scorer_id=row["scorer_id"],
        count=int(row["count"]),
        scored=int(row["scored"]),
        mean=_float(row["mean"]),
        min=_float(row["min"]),
        max=_float(row["max"]),
        judged_runs=int(usage.get("judged_runs") or 0),
        judge_calls=int(usage.get("judge_calls") or 0),
        judge_attempts=int(usage.get("judge_attempts") or 0),
        cached_calls=int(usage.get("cached_calls") or 0),
        duration_ms=int(usage.get("duration_ms") or 0),
        usage=JudgeUsage(**{name: _int(usage.get(name)) for name in _USAGE}),
    )


def score_histograms(
    connection: Connection,
    experiment_id: str,
    summaries: Sequence[ScoreSummary],
    bins: int = HISTOGRAM_BINS,
) -> list[ScoreHistogram]:
    """Per scorer with a numeric score, `bins` equal bins over 0..1 (widened to the lowest and
    highest score), counted by the database: each bin is a range of the covering index
    (experiment, scorer, score), counted where it lies (one statement of `bins` scalar
    subqueries per scorer), so a million scores are never aggregated row by row.

    The bins are NumPy's: `[edge, next edge)`, the last closed, the edges computed as
    `linspace` does (`histogram_edges`), so a score on an edge falls in the same bin."""
    found = []
    for summary in summaries:
        if summary.scored == 0 or summary.min is None or summary.max is None:
            continue
        low, high = min(0.0, summary.min), max(1.0, summary.max)
        edges = histogram_edges(low, high, bins)
        score = _results.c.score
        counts = [
            select(func.count())
            .where(
                _results.c.experiment_id == experiment_id,
                _results.c.scorer_id == summary.scorer_id,
                score >= edges[k],
                score <= edges[k + 1] if k == bins - 1 else score < edges[k + 1],
            )
            .scalar_subquery()
            .label(f"bin_{k}")
            for k in range(bins)
        ]
        row = connection.execute(select(*counts)).one()
        found.append(
            ScoreHistogram(
                scorer_id=summary.scorer_id,
                low=low,
                high=high,
                counts=[int(n) for n in row],
            )
        )
    return found


def histogram_edges(low: float, high: float, bins: int) -> list[float]:
    """`bins + 1` equal edges from `low` to `high`, computed as NumPy's `linspace` does (so a
    score on an edge falls in NumPy's bin)."""
    step = (high - low) / bins
    return [k * step + low for k in range(bins)] + [high]


# ---- Compare: every stored score of an experiment, light ----


def stored_scores(connection: Connection, experiment_id: str) -> StoredScores:
    """The experiment's stored runs as columns (item, scorer, score, reason) in the order
    written: one plain SELECT of the results' table alone, the reasons decoded here (orjson on
    SQLite's JSON text). What Compare pairs, without a record per run: validating 50,000
    `ScorerOutcome`s took longer than the page's whole budget."""
    # The reasons as their JSON text, decoded by orjson, and the driver's own tuples: through
    # SQLAlchemy's rows and JSON type (json.loads), 50,000 runs took 0.34 s a side.
    sqlite = connection.dialect.name == "sqlite"
    reason = type_coerce(_results.c.reason, Text) if sqlite else cast(_results.c.reason, Text)
    query = (
        select(_results.c.item_id, _results.c.scorer_id, _results.c.score, reason)
        .where(_results.c.experiment_id == experiment_id)
        .order_by(_results.c.id)
    )
    rows = _driver_rows(connection, query)
    if not rows:
        return StoredScores()
    item_ids, scorer_ids, scores, texts = map(list, zip(*rows, strict=True))
    reasons = [None if text is None else _loads(text) for text in texts]
    return StoredScores(item_ids=item_ids, scorer_ids=scorer_ids, scores=scores, reasons=reasons)


# ---- the item table, a page at a time ----


def check_query(query: ResultQuery) -> None:
    """Raise ValueError naming the field of a query that cannot be answered."""
    if isinstance(query.page, bool) or query.page < 1:
        raise ValueError(f"ResultQuery.page must be 1 or more, got {query.page!r}")
    if not 1 <= query.page_size <= MAX_PAGE_SIZE:
        raise ValueError(
            f"ResultQuery.page_size must be from 1 to {MAX_PAGE_SIZE:,}, got {query.page_size!r}"
        )
    if query.score_range is not None and query.score_range[0] > query.score_range[1]:
        low, high = query.score_range
        raise ValueError(f"ResultQuery.score_range goes from {low} down to {high}")
    if query.sort != "position" and not query.sort_scorer:
        raise ValueError(f"ResultQuery.sort {query.sort!r} needs a sort_scorer")


@dataclass(frozen=True)
class _Scope:
    """Whose items a page reads: the experiment, its dataset and scorers, the database."""

    experiment_id: str
    dataset_id: str
    item_count: int
    scorer_ids: tuple[str, ...]
    dialect: str
    search_base: int | None = None
    """SQLite: the first rowid of the dataset's items in the trigram index of the items'
    texts (revision 0015); None without the index (PostgreSQL's is another)."""


def result_page(
    connection: Connection,
    experiment_id: str,
    dataset_id: str,
    item_count: int,
    scorer_ids: Sequence[str],
    query: ResultQuery,
    item_ids: Collection[str] | None = None,
) -> ResultPage:
    """A page of the experiment's items matching `query` (its `failed_only` aside: the
    caller resolves it into `item_ids`, the only items then considered), with their stored
    scores and judge tokens. A page past the last gives the last one."""
    check_query(query)
    scope = _Scope(
        experiment_id,
        dataset_id,
        item_count,
        tuple(scorer_ids),
        connection.dialect.name,
        search_base(connection, dataset_id) if may_use_index(query, item_ids) else None,
    )
    if item_ids is not None and len(item_ids) > _ID_CHUNK:
        total, positions, page = _page_by_chunks(connection, scope, query, item_ids)
        at_least = False
    else:
        source = _row_source(scope, query, item_ids)
        if _search_in_few(connection, scope, query, item_ids):
            source = _from_results(scope, query).where(
                like_condition(query.search.strip(), scope.dialect, scope.dataset_id)
            )
        total = int(connection.execute(_count(scope, query, source, item_ids)).scalar_one())
        capped = bool(query.search.strip() or item_ids is not None)
        at_least = capped and total == _count_limit(query)
        total = total - 1 if at_least else total
        page = _clamped(query, total)
        if _few_in_range(scope, query, item_ids, total, page):
            source = _from_results(scope, query)
        elif (
            not at_least and _counted_in_dataset_order(scope, query, source, item_ids) is not source
        ):
            source = _walked_by_score(scope, query, item_ids)  # few matches: sorted whole
        ordered = _ordered(source, query).limit(query.page_size)
        ordered = ordered.offset((page - 1) * query.page_size)
        positions = [row.position for row in connection.execute(ordered)]
    rows = _item_rows(connection, experiment_id, dataset_id, positions)
    return ResultPage(
        rows=rows, total=total, total_at_least=at_least, page=page, page_size=query.page_size
    )


def may_use_index(query: ResultQuery, item_ids: Collection[str] | None) -> bool:
    """Whether a search may read SQLite's trigram index: not for more given items than one
    statement binds (read a chunk at a time, each chunk would walk the whole index's
    matches; their own texts are read instead) and not for a needle without a trigram."""
    if trigram_query(query.search.strip()) is None:
        return False
    return item_ids is None or len(item_ids) <= _ID_CHUNK


def _few_in_range(
    scope: _Scope, query: ResultQuery, item_ids: Collection[str] | None, total: int, page: int
) -> bool:
    """Whether a page in dataset order under a score range is cheaper read from the matching
    results (sorted) than by testing items in order until the page is full: when the range
    keeps few items, that test would run on most of the dataset."""
    if query.sort != "position" or query.score_range is None:
        return False
    if query.search.strip() or item_ids is not None or query.metadata:
        return False
    tested = page * query.page_size * scope.item_count / max(total, 1)  # items tested, roughly
    return tested > 4 * total


def _search_in_few(
    connection: Connection, scope: _Scope, query: ResultQuery, item_ids: Collection[str] | None
) -> bool:
    """Whether a text search under a score range should read only the items in range (found
    from the results' index) rather than every item's text, in dataset order: when the range
    keeps under 1/`_FEW_IN_RANGE` of the dataset (counted for a small one, else guessed from
    a sample); with SQLite's trigram index, when the items in range are fewer to test than
    the index's matches (`_range_before_walk`)."""
    if query.sort != "position" or query.score_range is None or item_ids is not None:
        return False
    if not query.search.strip() or query.metadata:
        return False
    if scope.item_count <= _SAMPLED_RUNS * _SAMPLED_RUN:
        limit = scope.item_count // _FEW_IN_RANGE + 1
        matching = _in_range(scope, query).limit(limit).subquery()
        kept = connection.execute(select(func.count()).select_from(matching)).scalar_one()
        sampled = scope.item_count
    else:
        sampled, kept = connection.execute(_sampled_in_range(scope, query)).one()
    kept, sampled = int(kept or 0), max(int(sampled), 1)
    found = _indexed(scope, query.search)
    if found is None:
        return kept * _FEW_IN_RANGE <= sampled
    return _range_before_walk(connection, scope, query, found, kept / sampled)


def _range_before_walk(
    connection: Connection, scope: _Scope, query: ResultQuery, found: str, share: float
) -> bool:
    """With SQLite's trigram index: whether testing the items in range (`share` of the
    dataset, `_RANGE_TEST_COST` each) is cheaper than walking the index's matches, which
    stops once the count's limit is in range (about limit / `share` matches) or reads every
    match of a needle with fewer. A needle held by few items is walked; a range that keeps
    (almost) none is read, where the walk would test every match of a common needle for
    nothing (0.67 s for "paris river", one item in ten, under an empty range at a million
    items; docs/storage.md, Reading a large experiment). The needle's matches are counted
    only as far as the answer needs."""
    tested = share * scope.item_count * _RANGE_TEST_COST
    walked = _count_limit(query) / share if share else float("inf")
    if tested >= walked:
        return False
    assert scope.search_base is not None  # `_indexed` found `found` in the index
    held = index_candidates(scope.search_base, found).limit(int(tested) + 1).subquery()
    return int(connection.execute(select(func.count()).select_from(held)).scalar_one()) > tested


def _sampled_in_range(scope: _Scope, query: ResultQuery) -> Any:
    """SELECT how many items a sample of the dataset has, and how many of them the score range
    keeps: `_SAMPLED_RUNS` runs of `_SAMPLED_RUN` consecutive items spread evenly over it (one
    lookup of the items' key and of the results' key per item). It only chooses
    `_search_in_few`'s plan, never the answer: counting a quarter of a million results exactly
    took longer than the search it chose for."""
    stride = scope.item_count // _SAMPLED_RUNS
    positions = [
        k * stride + offset for k in range(_SAMPLED_RUNS) for offset in range(_SAMPLED_RUN)
    ]
    sample = (
        select(_scored_within(scope, query, _items.c.item_id).label("kept"))
        .where(_items.c.dataset_id == scope.dataset_id, _items.c.position.in_(positions))
        .subquery()
    )
    return select(func.count(), func.sum(case((sample.c.kept, 1), else_=0)))


def _from_results(scope: _Scope, query: ResultQuery) -> Any:
    """SELECT the positions of the items in range, driven from the results' index range."""
    matching = _in_range(scope, query).subquery()
    return (
        select(_items.c.position)
        .join(matching, matching.c.item_id == _items.c.item_id)
        .where(_items.c.dataset_id == scope.dataset_id)
        .distinct()
    )


def _clamped(query: ResultQuery, total: int) -> int:
    last = max(1, -(-total // query.page_size))
    return min(query.page, last)


def _row_source(scope: _Scope, query: ResultQuery, item_ids: Collection[str] | None) -> Any:
    """SELECT position (and the sort score) of the items passing the filters, in the order a
    page reads them: dataset order (the items' key), or a scorer's scores (the covering
    index), testing each item as it comes, so a page stops after its last row."""
    sort = _results.alias("sort_by")
    found = None
    range_on_sort = _range_scorers(scope, query) == [query.sort_scorer]
    if query.sort != "position":
        joined = [
            sort.c.experiment_id == scope.experiment_id,
            sort.c.scorer_id == query.sort_scorer,
            sort.c.item_id == _items.c.item_id,
            sort.c.score.is_not(None),
        ]
        if query.score_range is not None and range_on_sort:  # the same rows of the index
            joined += [sort.c.score >= query.score_range[0], sort.c.score <= query.score_range[1]]
        source = select(
            _items.c.position, sort.c.score.label("sort_score"), sort.c.id.label("sort_id")
        ).join(sort, and_(*joined))
    elif (found := _indexed(scope, query.search)) is not None:
        source = _index_walk(scope, found)
    else:
        source = select(_items.c.position)
    source = source.where(_items.c.dataset_id == scope.dataset_id)
    if item_ids is not None:
        source = source.where(_items.c.item_id.in_(list(item_ids)))
    needle = query.search.strip()
    if query.metadata:
        source = source.where(*metadata_filter(query.metadata, scope.dialect))
    if needle and found is not None:  # the index walked: its candidates tested by LIKE
        source = source.where(like_condition(needle, scope.dialect, scope.dataset_id))
    elif needle:  # before the scores' test: SQLite tests the conditions in this order
        source = source.where(_searched(scope, needle))
    if query.score_range is not None and not (query.sort != "position" and range_on_sort):
        source = source.where(_scored_within(scope, query, _items.c.item_id))
    return source


def _count(scope: _Scope, query: ResultQuery, source: Any, item_ids: Collection[str] | None) -> Any:
    """How many items the query matches. Without a text search or given items, the results
    alone answer it (ranges of their covering index, not a join with a million items)."""
    if query.search.strip() or item_ids is not None:
        # Each item must be read to be searched: counting stops past the page asked for and
        # `COUNT_AT_LEAST` matches, so a common word does not read a million texts.
        source = _counted_in_dataset_order(scope, query, source, item_ids)
        return select(func.count()).select_from(source.limit(_count_limit(query)).subquery())
    if query.metadata:  # each item's metadata is read: counted over the filtered items
        return select(func.count()).select_from(source.subquery())
    if query.sort != "position":
        counted = select(func.count()).where(
            _results.c.experiment_id == scope.experiment_id,
            _results.c.scorer_id == query.sort_scorer,
            _results.c.score.is_not(None),
        )
        if query.score_range is None:
            return counted
        if _range_scorers(scope, query) == [query.sort_scorer]:
            low, high = query.score_range
            return counted.where(_results.c.score >= low, _results.c.score <= high)
        return counted.where(_scored_within(scope, query, _results.c.item_id))
    if query.score_range is not None:
        matching = _in_range(scope, query).subquery()
        if len(_range_scorers(scope, query)) == 1:  # one row per item and scorer
            return select(func.count()).select_from(matching)
        return select(func.count(matching.c.item_id.distinct()))
    # Every item: the dataset's own count (kept with it), not a count of a million rows.
    return select(literal(scope.item_count))


def _counted_in_dataset_order(
    scope: _Scope, query: ResultQuery, source: Any, item_ids: Collection[str] | None
) -> Any:
    """What a search sorted by score counts: with SQLite's trigram index, the same items found
    by walking the index's matches (`_walked_by_score`), where the sorted source would look up
    each score's item at random; else `source` itself. Order does not matter to a count."""
    if query.sort == "position" or _indexed(scope, query.search) is None:
        return source
    return _walked_by_score(scope, query, item_ids, with_scores=False)


def _walked_by_score(
    scope: _Scope, query: ResultQuery, item_ids: Collection[str] | None, with_scores: bool = True
) -> Any:
    """SELECT the items (position, sort score, result id) of a search sorted by score, walking
    the trigram index's matches in dataset order: those with a score of the sort scorer (in
    range when the range is its), as `_row_source` finds them from the scores' side. Its
    matches are sorted whole: for a needle held by few items, where walking the scores in
    order would test most of them before the page is full. The scores are read by correlated
    subqueries, one lookup of the results' key per match: as a join, SQLite would walk the
    scores and run the index's query once per score."""
    range_on_sort = _range_scorers(scope, query) == [query.sort_scorer]
    walked = query.model_copy(
        update={"sort": "position", "score_range": None if range_on_sort else query.score_range}
    )
    sort = _results.alias("sort_by")
    scored = [
        sort.c.experiment_id == scope.experiment_id,
        sort.c.scorer_id == query.sort_scorer,
        sort.c.item_id == _items.c.item_id,
        sort.c.score.is_not(None),
    ]
    if query.score_range is not None and range_on_sort:
        scored += [sort.c.score >= query.score_range[0], sort.c.score <= query.score_range[1]]
    source = _row_source(scope, walked, item_ids).where(exists().where(*scored))
    if not with_scores:  # counted: the scores are not read
        return source
    score = select(sort.c.score).where(*scored).scalar_subquery().label("sort_score")
    written = select(sort.c.id).where(*scored).scalar_subquery().label("sort_id")
    return source.add_columns(score, written)


def _count_limit(query: ResultQuery) -> int:
    return max(COUNT_AT_LEAST, query.page * query.page_size) + 1


def _range_scorers(scope: _Scope, query: ResultQuery) -> list[str]:
    return list(query.scorer_ids or scope.scorer_ids)


def _in_range(scope: _Scope, query: ResultQuery) -> Any:
    """SELECT the items one of the chosen scorers (every one when none is) gave a score within
    the range: a range of the covering index per scorer."""
    low, high = query.score_range or (0.0, 1.0)
    scored = _results.alias("scored")
    conditions = [
        scored.c.experiment_id == scope.experiment_id,
        scored.c.score >= low,
        scored.c.score <= high,
    ]
    chosen = _range_scorers(scope, query)
    if chosen:
        conditions.append(scored.c.scorer_id.in_(chosen))
    return select(scored.c.item_id).where(*conditions)


def _scored_within(scope: _Scope, query: ResultQuery, item_id: Any) -> Any:
    """EXISTS a score of a chosen scorer within the range for the item `item_id` names (one
    lookup of the results' unique key per item tested)."""
    low, high = query.score_range or (0.0, 1.0)
    scored = _results.alias("within")
    conditions = [
        scored.c.experiment_id == scope.experiment_id,
        scored.c.item_id == item_id,
        scored.c.score >= low,
        scored.c.score <= high,
    ]
    chosen = _range_scorers(scope, query)
    if chosen and scope.dialect == "postgresql":
        # `= ANY(ARRAY[...])`, not `IN`: PostgreSQL cannot then prove one result per item and
        # keeps the EXISTS a semi join, hashing the results in range and streaming the items,
        # so a count under LIMIT stops with its last match. Proven unique, the join hashed
        # every text match first: 0.88 s for a search under a score range at 1 M items,
        # 0.49 s so (docs/storage.md, Reading a large experiment).
        conditions.append(scored.c.scorer_id == any_(postgresql.array(chosen)))
    elif chosen:
        conditions.append(scored.c.scorer_id.in_(chosen))
    return exists().where(*conditions)


def _searched(scope: _Scope, needle: str) -> Any:
    """The search condition of `needle` on the scope's database."""
    return matches(needle.strip(), scope.dialect, scope.search_base, scope.dataset_id)


def _index_walk(scope: _Scope, found: str) -> Any:
    assert scope.search_base is not None  # `_indexed` found `found` in the index
    return index_walk(scope.search_base, found)


def _indexed(scope: _Scope, needle: str) -> str | None:
    """The trigram index's query of `needle` when the index answers it (SQLite with revision
    0015, a needle of 3 characters or more), else None."""
    return None if scope.search_base is None else trigram_query(needle.strip())


def _ordered(source: Any, query: ResultQuery) -> Any:
    if query.sort == "position" and "search_rowid" in source.selected_columns:
        return source.order_by(source.selected_columns.search_rowid)
    if query.sort == "position":
        return source.order_by(_items.c.position)
    # Ties in the order the results were written (`id`): the covering index's own order, so a
    # page walks it and stops, where ties in dataset order would sort every tied item first.
    score, written = source.selected_columns.sort_score, source.selected_columns.sort_id
    if query.sort == "score_desc":
        return source.order_by(score.desc(), written.desc())
    return source.order_by(score.asc(), written.asc())


def _page_by_chunks(
    connection: Connection, scope: _Scope, query: ResultQuery, item_ids: Collection[str]
) -> tuple[int, list[int], int]:
    """`result_page` over more item ids than one statement binds: the matching positions
    (and sort scores) a chunk of ids at a time, then sorted and paged here."""
    ids = list(item_ids)
    found: list[tuple[Any, ...]] = []
    for start in range(0, len(ids), _ID_CHUNK):
        source = _row_source(scope, query, ids[start : start + _ID_CHUNK])
        found.extend(tuple(row) for row in connection.execute(source))
    if query.sort == "position":
        found.sort()
    else:
        sign = -1.0 if query.sort == "score_desc" else 1.0
        found.sort(key=lambda row: (sign * row[1], sign * row[2]))
    page = _clamped(query, len(found))
    first = (page - 1) * query.page_size
    return len(found), [row[0] for row in found[first : first + query.page_size]], page


def _item_rows(
    connection: Connection, experiment_id: str, dataset_id: str, positions: list[int]
) -> list[ItemRow]:
    """The items at `positions` (in that order) with their stored scores and judge tokens."""
    if not positions:
        return []
    items = connection.execute(
        select(
            _items.c.position,
            _items.c.item_id,
            _items.c.input,
            _items.c.output,
            _items.c.ground_truth,
            _items.c.item_metadata,
        ).where(_items.c.dataset_id == dataset_id, _items.c.position.in_(positions))
    ).all()
    ids = [row.item_id for row in items]
    scores: dict[str, dict[str, float | None]] = {}
    tokens: dict[str, int] = {}
    results = select(
        _results.c.item_id, _results.c.scorer_id, _results.c.score, _results.c.total_tokens
    ).where(_results.c.experiment_id == experiment_id, _results.c.item_id.in_(ids))
    for row in connection.execute(results):
        scores.setdefault(row.item_id, {})[row.scorer_id] = row.score
        tokens[row.item_id] = tokens.get(row.item_id, 0) + (row.total_tokens or 0)
    by_position = {row.position: row for row in items}
    return [
        ItemRow(
            position=position,
            item_id=by_position[position].item_id,
            input=by_position[position].input,
            output=by_position[position].output,
            ground_truth=by_position[position].ground_truth,
            scores=scores.get(by_position[position].item_id, {}),
            judge_tokens=tokens.get(by_position[position].item_id, 0),
            metadata=by_position[position].item_metadata or {},
        )
        for position in positions
        if position in by_position
    ]


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def _int(value: Any) -> int | None:
    # SUM of integers is a Decimal on PostgreSQL (NUMERIC), NULL when every value is NULL.
    return None if value is None else int(value)
