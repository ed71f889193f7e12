"""N experiments side by side (issue 21): on Compare, one grid of every item paired across the
baseline and each candidate, with each experiment's score per scorer, and each candidate's
change from the baseline for colouring. Pure shaping: no Streamlit, no database
(docs/architecture.md)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from core.reporting.compare import Comparison

__all__ = ["CHANGE_SUFFIX", "side_by_side", "side_by_side_columns"]

CHANGE_SUFFIX = " Δ"
"""Suffix of a candidate's change column (`<scorer> · <name> Δ`)."""


def _names(comparisons: Sequence[Comparison]) -> list[str]:
    """A column label per side: the experiment's name, numbered when two sides share it."""
    infos = [comparisons[0].baseline, *(c.candidate for c in comparisons)]
    names = [info.name for info in infos]
    return [
        f"{name} ({n})" if names.count(name) > 1 else name for n, name in enumerate(names, start=1)
    ]


def side_by_side_columns(comparisons: Sequence[Comparison]) -> dict[str, list[str]]:
    """Per scorer, the grid's score columns in side order (baseline first): `<scorer> ·
    <experiment name>`."""
    names = _names(comparisons)
    return {
        scorer_id: [f"{scorer_id} · {name}" for name in names]
        for scorer_id in _scorers(comparisons)
    }


def _scorers(comparisons: Sequence[Comparison]) -> list[str]:
    if not comparisons:
        return []
    first = comparisons[0]
    return [
        scorer_id
        for scorer_id in first.baseline.scorer_ids
        if all(scorer_id in c.candidate.scorer_ids for c in comparisons)
    ]


def side_by_side(comparisons: Sequence[Comparison]) -> pd.DataFrame:
    """One row per item paired in every comparison (found once on every side), in the
    baseline's order: `item_id`, `input` (the baseline's), then per scorer run by every side
    its score on each side (`<scorer> · <name>`, NaN when failed, not scorable or not run) and
    each candidate's change from the baseline (`<scorer> · <name> Δ`). Empty when
    `comparisons` is."""
    if not comparisons:
        return pd.DataFrame(columns=["item_id", "input"])
    sides = [comparisons[0]._baseline, *(c._candidate for c in comparisons)]
    shared = set(comparisons[0].pairing.paired_ids)
    for comparison in comparisons[1:]:
        shared &= set(comparison.pairing.paired_ids)
    ids = [item_id for item_id in comparisons[0].pairing.paired_ids if item_id in shared]
    names = _names(comparisons)
    baseline = sides[0]
    data: dict[str, list[Any]] = {
        "item_id": ids,
        "input": [_text(baseline.items[item_id].input) for item_id in ids],
    }
    for scorer_id in _scorers(comparisons):
        per_side = [side.scores(scorer_id) for side in sides]
        base = [per_side[0].get(item_id, math.nan) for item_id in ids]
        data[f"{scorer_id} · {names[0]}"] = base
        for name, scores in zip(names[1:], per_side[1:], strict=True):
            values = [scores.get(item_id, math.nan) for item_id in ids]
            data[f"{scorer_id} · {name}"] = values
            data[f"{scorer_id} · {name}{CHANGE_SUFFIX}"] = [
                after - before for before, after in zip(base, values, strict=True)
            ]
    return pd.DataFrame(data)


def _text(value: object) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else str(value)
