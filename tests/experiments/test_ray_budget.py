"""The spend cap's holder on Ray (core/experiments/ray_budget.py), as a plain object: slices of
the cap granted to workers, settled and given back; the cluster-wide run is tested on a real
cluster in tests/ray."""

from __future__ import annotations

import pytest

from core.experiments.ray_budget import BudgetActor
from core.judge.budget import JudgeBudget


def test_the_holder_grants_slices_within_the_cap_and_takes_back_what_is_settled() -> None:
    holder = BudgetActor(10.0)
    first, why = holder.grant("a", 1.0, 4.0)
    assert first == pytest.approx(4.0) and why == ""  # what was wanted: the cap has room
    # With a slice held elsewhere, a second worker gets a share of what is left, not all.
    second, _ = holder.grant("b", 1.0, 8.0)
    assert second == pytest.approx(1.5)  # 6 left, shared by 2 holders: 6 / (2 * 2)
    assert holder.figures() == pytest.approx((0.0, 5.5, 0))
    holder.settle("a", 3.0, 2.5, returned=1.0)  # a's calls cost 2.5 of the 3 reserved; 1 back
    assert holder.figures() == pytest.approx((2.5, 1.5, 0))
    refused, why = holder.grant("c", 7.0, 7.0)  # 6 left cannot cover a need of 7
    assert refused == 0.0 and "spend cap" in why and "reached" in why
    assert holder.figures()[2] == 1
    smaller, why = holder.grant("c", 1.0, 7.0)  # a need the cap covers is granted again
    assert smaller == pytest.approx(1.5) and why == ""
    spent, held, _ = holder.figures()
    assert spent + held <= 10.0  # never more than the cap spent or held


def test_a_refusal_blocks_every_grant_and_a_mirror_shows_the_holders_figures() -> None:
    holder = BudgetActor(1.0)
    holder.refuse("'openai/no-such-model' has no price")
    granted, why = holder.grant("a", 0.1, 0.5)
    assert granted == 0.0 and why == "'openai/no-such-model' has no price"
    assert holder.grant("a", 0.0, 0.5) == (0.0, why)  # asking for nothing is not a refusal
    assert holder.figures() == pytest.approx((0.0, 0.0, 2))
    shown = JudgeBudget(1.0)
    assert not shown.reached
    shown.mirror(*holder.figures())
    assert shown.reached and shown.refused_calls == 2 and shown.spent_usd == 0.0
