"""The results desk on its own: the store's pages merged with the failures this process holds."""

from __future__ import annotations

from typing import Any

import pytest
from service_kit import CATALOG, DATA, SECRET, run

from core.records import (
    FailureCounts,
    ItemRow,
    ResultPage,
    ResultQuery,
    ScorerOutcome,
    ScorerSpec,
    ScorerUsage,
)
from core.run_results import JudgeUsage
from core.service import NotFoundError, Service
from core.service.context import DeskContext
from core.service.results_desk import ResultsDesk
from core.testing import FakeJudge


def _failure(item_id: str, scorer_id: str, tokens: int) -> ScorerOutcome:
    return ScorerOutcome(
        item_id=item_id,
        scorer_id=scorer_id,
        status="failed",
        error="boom",
        usage=JudgeUsage(total_tokens=tokens),
    )


class _Store:
    def __init__(self) -> None:
        self.asked: list[Any] = []

    def result_page(self, experiment_id: str, query: ResultQuery, item_ids: Any) -> ResultPage:
        self.asked.append(item_ids)
        rows = [ItemRow(position=0, item_id="a", judge_tokens=5), ItemRow(position=1, item_id="b")]
        return ResultPage(rows=rows, total=2, page=1, page_size=50)

    def judge_usage(self, experiment_id: str) -> list[ScorerUsage]:
        return [ScorerUsage(scorer_id="s", model=None)]


class _Experiments:
    """The one question the desk asks of the experiment desk here."""

    def __init__(self, failures: list[ScorerOutcome]) -> None:
        self._failures = failures

    def failures(self, experiment_id: str) -> list[ScorerOutcome]:
        return list(self._failures)


class _Host(ResultsDesk):
    def __init__(self, failures: list[ScorerOutcome]) -> None:
        self.store: Any = _Store()
        none: Any = None
        experiments: Any = _Experiments(failures)
        super().__init__(DeskContext(self.store, none, none, none), experiments)


def test_a_page_shows_the_scorers_that_failed_on_its_rows_and_their_tokens() -> None:
    desk = _Host([_failure("a", "tone", 7), _failure("a", "bias", 1), _failure("z", "tone", 9)])
    page = desk.result_page("e", ResultQuery())
    first, second = page.rows
    assert first.failed == ["tone", "bias"] and first.judge_tokens == 5 + 7 + 1
    assert second.failed == [] and second.judge_tokens == 0
    assert desk.store.asked == [None]  # not filtered by failures


def test_failed_only_asks_the_store_for_the_items_with_a_failure_of_the_chosen_scorers() -> None:
    desk = _Host([_failure("a", "tone", 0), _failure("b", "bias", 0)])
    desk.result_page("e", ResultQuery(failed_only=True, scorer_ids=["tone"]))
    desk.result_page("e", ResultQuery(failed_only=True))
    assert desk.store.asked == [{"a"}, {"a", "b"}]


def test_usage_without_tokens_or_model_is_left_unpriced() -> None:
    (usage,) = _Host([]).judge_usage("e")
    assert usage.est_cost_usd is None


# ---- through the Service ----


def test_a_large_experiment_is_read_a_page_and_an_aggregate_at_a_time(
    service: Service, database_url: str
) -> None:
    dataset = service.import_dataset("qa.csv", DATA)
    experiment_id = run(
        service,
        dataset.id,
        ScorerSpec(scorer_id="fragile"),
        ScorerSpec(scorer_id="checks.includes", options={"value": "answer"}),
    )
    page = service.result_page(experiment_id, ResultQuery(page_size=2))
    assert (page.total, page.pages, [r.item_id for r in page.rows]) == (3, 2, ["a", "b"])
    assert page.rows[0].scores == {"fragile": 0.5, "checks.includes": 1.0}
    last = service.result_page(experiment_id, ResultQuery(page_size=2, page=2))
    assert [(r.item_id, r.failed) for r in last.rows] == [("c", ["fragile"])]  # from memory
    failed = service.result_page(experiment_id, ResultQuery(failed_only=True))
    assert [r.item_id for r in failed.rows] == ["c"]
    narrowed = ResultQuery(failed_only=True, scorer_ids=["checks.includes"])
    assert service.result_page(experiment_id, narrowed).total == 0
    assert service.failure_counts(experiment_id) == FailureCounts(
        total=1, in_memory=1, by_scorer={"fragile": 1}, details_in_memory=True
    )
    summaries = {s.scorer_id: s for s in service.score_summaries(experiment_id)}
    assert (summaries["fragile"].count, summaries["fragile"].mean) == (2, 0.5)
    histograms = {h.scorer_id: h.counts for h in service.score_histograms(experiment_id)}
    assert histograms == {"fragile": [0] * 5 + [2] + [0] * 4, "checks.includes": [0] * 9 + [3]}
    assert {u.scorer_id: u.runs for u in service.judge_usage(experiment_id)} == {
        "fragile": 0,  # code scorers: no run called the judge
        "checks.includes": 0,
    }
    one = service.item_detail(experiment_id, "c")
    assert [i.id for i in one.items] == ["c"]
    assert [(r.scorer_id, r.item_id) for r in one.results] == [("checks.includes", "c")]
    assert [(f.scorer_id, f.item_id) for f in one.failures] == [("fragile", "c")]
    with pytest.raises(NotFoundError, match="No item 'zz'"):
        service.item_detail(experiment_id, "zz")
    # Another process knows the stored count of failures, not their details.
    other = Service(database_url, catalog=CATALOG)
    assert other.failure_counts(experiment_id) == FailureCounts(
        total=1, in_memory=0, details_in_memory=False
    )
    assert other.result_page(experiment_id, ResultQuery(failed_only=True)).total == 0
    other.store.close()


def test_judge_usage_is_priced_by_the_service(
    service: Service, judge_server: FakeJudge, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SCORELAB_JUDGE_API_KEY", SECRET)
    dataset = service.import_dataset("qa.csv", DATA)
    experiment_id = run(
        service,
        dataset.id,
        ScorerSpec(scorer_id="judged"),
        judge_model="openai/gpt-4o-mini",  # a model litellm's price table knows
        api_base=judge_server.url,
    )
    (usage,) = service.judge_usage(experiment_id)
    results = service.store.experiment_results(experiment_id)
    assert usage.judge_calls == sum(r.judge_calls for r in results) > 0
    assert usage.usage.input_tokens == sum(r.usage.input_tokens or 0 for r in results)
    assert usage.est_cost_usd is not None and usage.est_cost_usd > 0
