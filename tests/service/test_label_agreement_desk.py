"""The label agreement through the Service: the same as the agreement of the experiment read
whole, from the stored scores' columns, never from the results themselves."""

from __future__ import annotations

from typing import Any

import pytest
from service_kit import run

from core.records import ScorerSpec
from core.reporting.agreement import LabelError, label_agreement, review_agreement
from core.service import Service
from core.storage import Store

# Labels: yes/no, numbers, false, an empty cell (left out); `checks.includes` finds "right"
# in the labelled-right answers only, and the fragile scorer fails on item c.
LABELLED = (
    b"id,question,answer,is_correct\n"
    b"a,question 0,answer right,yes\n"
    b"b,question 1,answer wrong,no\n"
    b"c,question 2,answer right,1\n"
    b"d,question 3,answer none,0\n"
    b"e,question 4,answer right,\n"
    b"f,question 5,other,false\n"
)


def _experiment(service: Service, data: bytes = LABELLED) -> str:
    dataset = service.import_dataset("labelled.csv", data)
    return run(
        service,
        dataset.id,
        ScorerSpec(scorer_id="fragile"),  # fails on "question 2"
        ScorerSpec(scorer_id="checks.includes", options={"value": "right"}),
    )


def test_the_agreement_is_that_of_the_experiment_read_whole(service: Service) -> None:
    experiment_id = _experiment(service)
    whole = label_agreement(service.load_experiment(experiment_id), "is_correct")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Store, "experiment_results", _refused)
        light = service.label_agreement(experiment_id, "is_correct")
    assert light == whole
    assert (light.labelled_items, light.unlabelled_items) == (5, 1)
    includes = {entry.scorer_id: entry for entry in light.scorers}["checks.includes"]
    assert includes.n == 5 and includes.auc == pytest.approx(1.0)
    fragile = {entry.scorer_id: entry for entry in light.scorers}["fragile"]
    assert fragile.left_out_no_score == 1  # its failed run on item c


def test_the_review_agreement_is_that_of_the_experiment_read_whole(service: Service) -> None:
    experiment_id = _experiment(service)
    for item, verdict in (("a", "right"), ("b", "wrong"), ("d", "right")):
        service.save_review(experiment_id, item, "checks.includes", verdict, reviewer="ana")
    whole = review_agreement(service.load_experiment(experiment_id))
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(Store, "experiment_results", _refused)
        light = service.review_agreement(experiment_id)
    assert light == whole
    assert light.labelled_items == 3 and light.unlabelled_items == 3


def test_a_bad_label_names_the_item_its_row_and_the_value(service: Service) -> None:
    experiment_id = _experiment(service, LABELLED.replace(b",false\n", b",maybe\n"))
    with pytest.raises(LabelError) as raised:
        service.label_agreement(experiment_id, "is_correct")
    assert raised.value.item_id == "f" and raised.value.row == 6
    assert "maybe" in str(raised.value)
    with pytest.raises(LabelError, match="no item has this column"):
        service.label_agreement(experiment_id, "verdict")


def _refused(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError("the agreement read the stored results")
