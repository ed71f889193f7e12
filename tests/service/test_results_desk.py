"""The results desk on its own: the store's pages merged with the failures this process holds."""

from __future__ import annotations

from typing import Any

from core.records import ItemRow, ResultPage, ResultQuery, ScorerOutcome, ScorerUsage
from core.run_results import JudgeUsage
from core.service.context import DeskContext
from core.service.results_desk import ResultsDesk


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
