"""The HTML report's "Reviews" section (core/exchange/html.py): per scorer, the reviews saying
its score was right or wrong and the items reviewed, a row "whole item" for the verdicts on
whole items (scorer "*"), then every note with who wrote it and when. Every text is escaped."""

from __future__ import annotations

from html import escape

from core.records import ExperimentDetail
from core.reporting.reviews import WHOLE_ITEM, ReviewCounts, review_summary

__all__ = ["reviews_section"]


def reviews_section(detail: ExperimentDetail) -> str:
    """The section, or "" when the experiment has no review."""
    if not detail.reviews:
        return ""
    summary = review_summary(detail.info, detail.reviews)
    whole = [r for r in detail.reviews if r.scorer_id == WHOLE_ITEM]
    if whole:
        summary.append(
            ReviewCounts(
                scorer_id="whole item",
                right=sum(r.verdict == "right" for r in whole),
                wrong=sum(r.verdict == "wrong" for r in whole),
                items=len({r.item_id for r in whole}),
                notes=[r for r in whole if r.note],
            )
        )
    rows = "".join(
        f"<tr><td>{escape(c.scorer_id)}</td><td class=num>{c.right}</td>"
        f"<td class=num>{c.wrong}</td><td class=num>{c.items}</td></tr>"
        for c in summary
    )
    notes = "".join(
        f"<li><b>{escape(c.scorer_id)}</b> on item {escape(r.item_id)} · {escape(r.verdict)}"
        f"{'' if r.score is None else f' (would give {r.score:g})'} · {escape(r.reviewer)}, "
        f"{r.updated_at:%Y-%m-%d %H:%M} UTC: {escape(r.note)}</li>"
        for c in summary
        for r in c.notes
    )
    return (
        '<section id="reviews"><h2>Reviews</h2>'
        f"<p class=note>{len(detail.reviews)} reviews by people (of scores and whole items).</p>"
        "<table><tr><th>Scorer</th><th class=num>Right</th><th class=num>Wrong</th>"
        f"<th class=num>Items reviewed</th></tr>{rows}</table>"
        + (f"<h3>Notes</h3><ul>{notes}</ul>" if notes else "")
        + "</section>"
    )
