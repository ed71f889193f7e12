"""Reviews through the service, on SQLite and (when available) PostgreSQL: saved and updated,
checked against the experiment (scorer, item, the scorer's range, the verdict, the note), shown
in the drill-down's detail, the grid's marks, the queue, the exports (CSV, JSON and its
re-import) and the HTML report, and used as labels by the agreement."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from scorelab_db import BACKENDS, database

from core.records import REVIEW_NOTE_MAX, ExperimentConfig, ScorerSpec
from core.reporting.agreement import REVIEWS_SOURCE
from core.service import NotFoundError, ReviewError, Service, views

DATA = (
    b"id,question,answer,expected,category\n"
    b"a,what is up,the sky is up,the sky,x\n"
    b"b,hello there,hello there,hello,y\n"
    b"c,big cat,small dog,big cat,x\n"
    b"d,red car,red car fast,red car,y\n"
)
SCORERS = ("completeness-scorer", "textual-difference-scorer")


@pytest.fixture(params=BACKENDS)
def service(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Service]:
    with database(request.param, tmp_path) as url:
        empty = tmp_path / "samples"
        empty.mkdir()
        shared = Service(url, samples_dir=empty)
        try:
            yield shared
        finally:
            shared.store.close()


def experiment(service: Service) -> str:
    dataset = service.import_dataset("d.csv", DATA)
    specs = [ScorerSpec(scorer_id=s) for s in SCORERS]
    experiment_id = service.start_experiment(ExperimentConfig(dataset_id=dataset.id, scorers=specs))
    assert service.wait(experiment_id, timeout=60).finished
    return experiment_id


def test_a_review_is_saved_updated_and_read_per_item(service: Service) -> None:
    exp = experiment(service)
    first = service.save_review(
        exp, "a", SCORERS[0], "wrong", score=0.2, note=" off ", reviewer="ana"
    )
    assert (first.verdict, first.score, first.note, first.reviewer) == ("wrong", 0.2, "off", "ana")
    service.save_review(exp, "b", SCORERS[1], "right")
    again = service.save_review(exp, "a", SCORERS[0], "right", reviewer="ana")
    assert again.created_at == first.created_at and again.score is None
    assert [(r.item_id, r.reviewer, r.verdict) for r in service.reviews(exp)] == [
        ("a", "ana", "right"),
        ("b", "anonymous", "right"),
    ]
    assert [r.item_id for r in service.reviews(exp, "b")] == ["b"]
    assert [r.item_id for r in service.item_detail(exp, "a").reviews] == ["a"]
    assert service.delete_review(exp, "b", SCORERS[1], "anonymous")
    assert [r.item_id for r in service.reviews(exp)] == ["a"]


@pytest.mark.parametrize(
    ("item", "scorer", "verdict", "fields", "message"),
    [
        ("a", "nope", "right", {}, "has no scorer 'nope'"),
        ("zz", SCORERS[0], "right", {}, "has no such item"),
        ("a", SCORERS[0], "", {}, "must be 'right' or 'wrong', got ''"),
        ("a", SCORERS[0], "maybe", {}, "got 'maybe'"),
        ("a", SCORERS[0], "right", {"score": 1.5}, "1.5 is outside the scorer's range 0 to 1"),
        ("a", SCORERS[0], "right", {"score": -0.1}, "outside the scorer's range"),
        ("a", SCORERS[0], "right", {"score": float("nan")}, "must be a number"),
        ("a", SCORERS[0], "right", {"score": "0.5"}, "must be a number"),
        ("a", SCORERS[0], "right", {"note": "x" * (REVIEW_NOTE_MAX + 1)}, "at most 2,000"),
    ],
)
def test_a_bad_review_is_refused_naming_the_problem(
    service: Service, item: str, scorer: str, verdict: str, fields: dict, message: str
) -> None:
    exp = experiment(service)
    with pytest.raises(ReviewError, match="Review of item") as raised:
        service.save_review(exp, item, scorer, verdict, **fields)  # type: ignore[arg-type]
    assert message in str(raised.value)
    assert service.reviews(exp) == []


def test_an_unknown_experiment_is_not_found(service: Service) -> None:
    with pytest.raises(NotFoundError):
        service.save_review("missing", "a", SCORERS[0], "right")


def test_review_marks_give_the_latest_verdict_per_item_and_scorer(service: Service) -> None:
    exp = experiment(service)
    service.save_review(exp, "a", SCORERS[0], "right", reviewer="ana")
    service.save_review(exp, "a", SCORERS[0], "wrong", reviewer="bo")
    service.save_review(exp, "c", SCORERS[1], "right")
    assert service.review_marks(exp) == {"a": {SCORERS[0]: "wrong"}, "c": {SCORERS[1]: "right"}}


def test_the_queue_puts_reviewed_items_last_and_says_why(service: Service) -> None:
    exp = experiment(service)
    before = service.review_queue(exp)
    assert sorted(e.item_id for e in before) == ["a", "b", "c", "d"]
    assert all(e.reason for e in before)
    top = before[0].item_id
    service.save_review(exp, top, SCORERS[0], "right")
    after = service.review_queue(exp)
    assert after[-1].item_id == top and after[-1].reviewed
    assert after[-1].reason.startswith("reviewed already")
    assert [e.item_id for e in after[:-1]] == [e.item_id for e in before if e.item_id != top]


def test_exports_carry_the_reviews_and_the_import_keeps_them(service: Service) -> None:
    exp = experiment(service)
    service.save_review(exp, "a", SCORERS[0], "wrong", score=0.1, note="=cmd()", reviewer="ana")
    service.save_review(exp, "a", SCORERS[0], "right", reviewer="bo")
    detail = service.load_experiment(exp)
    rows = list(csv.DictReader(io.StringIO(views.results_csv(detail))))
    reviewed = next(r for r in rows if (r["itemId"], r["scorerId"]) == ("a", SCORERS[0]))
    assert (reviewed["reviewsRight"], reviewed["reviewsWrong"]) == ("1", "1")
    assert reviewed["reviewVerdict"] == "right"
    assert reviewed["reviewerScores"] == "ana: 0.1"
    assert reviewed["reviewNotes"] == "ana: =cmd()"
    other = next(r for r in rows if (r["itemId"], r["scorerId"]) == ("b", SCORERS[0]))
    assert (other["reviewVerdict"], other["reviewsRight"]) == ("", "0")
    text = views.experiment_json_text(detail)
    document = json.loads(text)
    assert [(r["itemId"], r["reviewer"]) for r in document["reviews"]] == [
        ("a", "ana"),
        ("a", "bo"),
    ]
    copy = service.import_experiment_json(text.encode())
    assert copy != exp
    kept = service.reviews(copy)
    assert [(r.item_id, r.scorer_id, r.verdict, r.score, r.note, r.reviewer) for r in kept] == [
        ("a", SCORERS[0], "wrong", 0.1, "=cmd()", "ana"),
        ("a", SCORERS[0], "right", None, "", "bo"),
    ]


def test_deleting_the_experiment_deletes_its_reviews(service: Service) -> None:
    exp = experiment(service)
    service.save_review(exp, "a", SCORERS[0], "right")
    service.delete_experiment(exp)
    assert service.reviews(exp) == []


def test_the_html_report_has_a_reviews_section_with_counts_and_notes(service: Service) -> None:
    exp = experiment(service)
    assert 'id="reviews"' not in views.experiment_html(service.load_experiment(exp))
    service.save_review(exp, "a", SCORERS[0], "wrong", note="<b>misses</b> the point")
    service.save_review(exp, "b", SCORERS[0], "right")
    service.save_review(exp, "c", SCORERS[1], "wrong", reviewer="bo")
    html = views.experiment_html(service.load_experiment(exp))
    section = html[html.index('<section id="reviews">') :]
    section = section[: section.index("</section>")]
    assert f"<td>{SCORERS[0]}</td><td class=num>1</td><td class=num>1</td>" in section
    assert f"<td>{SCORERS[1]}</td><td class=num>0</td><td class=num>1</td>" in section
    assert "&lt;b&gt;misses&lt;/b&gt; the point" in section and "<b>misses" not in section


def test_the_agreement_with_reviews_follows_the_verdicts(service: Service) -> None:
    exp = experiment(service)
    empty = service.review_agreement(exp)
    assert empty.label_column == REVIEWS_SOURCE and empty.labelled_items == 0
    assert not any(entry.defined for entry in empty.scorers)
    scores = {r.item_id: r.score for r in service.load_experiment(exp).results
              if r.scorer_id == SCORERS[1]}  # fmt: skip
    # Every verdict "right": the labels are the scores thresholded, a perfect ranking.
    for item_id in scores:
        service.save_review(exp, item_id, SCORERS[1], "right")
    right = service.review_agreement(exp)
    entry = right.scorers[1]
    assert entry.scorer_id == SCORERS[1] and entry.n == 4 and entry.defined
    assert entry.auc == pytest.approx(1.0)
    assert right.scorers[0].n == 0
    # Every verdict "wrong": the labels flip, and so does the AUC.
    for item_id in scores:
        service.save_review(exp, item_id, SCORERS[1], "wrong")
    assert service.review_agreement(exp).scorers[1].auc == pytest.approx(0.0)


def test_the_cli_exports_every_pages_reviews(
    service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    from core.cli.outputs import csv_export, json_export

    exp = experiment(service)
    service.save_review(exp, "a", SCORERS[0], "right")
    service.save_review(exp, "d", SCORERS[1], "wrong", note="late page")
    pages = service.experiment_pages
    monkeypatch.setattr(service, "experiment_pages", lambda e: pages(e, page_size=1))
    out = io.StringIO()
    json_export(service, exp, total_items=4).write(out, lambda _n: None)
    document = json.loads(out.getvalue())
    assert [item["id"] for item in document["items"]] == ["a", "b", "c", "d"]
    assert [(r["itemId"], r["verdict"]) for r in document["reviews"]] == [
        ("a", "right"),
        ("d", "wrong"),
    ]
    out = io.StringIO()
    csv_export(service, exp, total_items=4).write(out, lambda _n: None)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [r["reviewNotes"] for r in rows if r["reviewNotes"]] == ["anonymous: late page"]
