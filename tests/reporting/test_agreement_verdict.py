"""The label agreement's verdict: a scorer whose AUC interval is above 0.5 separates the labels,
one whose interval contains 0.5 is no better than chance, one whose interval is below ranks
wrong answers higher; the sentence, the ranking, the badges, the HTML report and the CLI's
lines say the same."""

from __future__ import annotations

from core.exchange.html import experiment_html
from core.reporting import (
    agreement_frame,
    agreement_verdict,
    label_agreement,
    ranked_scorers,
    scorer_verdict,
    verdict_badge,
)
from tests.reporting.test_agreement import detail_of

LABELS = [1, 1, 1, 1, 0, 0, 0, 0]
SCORES: dict[str, list[float | None]] = {
    "coin": [1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0, 0.0],  # AUC 0.5, interval around it
    "perfect": [0.9, 0.8, 0.95, 0.7, 0.1, 0.2, 0.3, 0.05],  # AUC 1, every resample 1
    "inverted": [0.1, 0.2, 0.0, 0.3, 0.9, 0.8, 0.7, 1.0],  # AUC 0
    "flat": [0.5] * 8,  # not defined
}


def test_each_scorer_gets_the_verdict_of_its_interval() -> None:
    found = label_agreement(detail_of(LABELS, SCORES), "label", resamples=300)
    verdicts = {entry.scorer_id: scorer_verdict(entry) for entry in found.scorers}
    assert verdicts == {
        "coin": "chance",
        "perfect": "separates",
        "inverted": "inverted",
        "flat": "not defined",
    }
    coin = next(entry for entry in found.scorers if entry.scorer_id == "coin")
    assert coin.auc_low is not None and coin.auc_high is not None
    assert coin.auc_low < 0.5 < coin.auc_high
    assert [verdict_badge(entry) for entry in ranked_scorers(found)] == [
        "✅ separates",
        "⚪ chance",
        "🔻 inverted",
        "— not defined",
    ]


def test_the_sentence_names_each_group_best_first() -> None:
    found = label_agreement(detail_of(LABELS, SCORES), "label", resamples=300)
    sentence = agreement_verdict(found)
    assert sentence.startswith(
        "1 of 4 scorers separates the labels (the 95% AUC interval above 0.5): perfect (AUC 1.00)."
    )
    assert "No better than chance (the interval contains 0.5): coin (AUC 0.50)." in sentence
    assert "Ranks wrong answers higher (the interval below 0.5): inverted (AUC 0.00)." in sentence
    assert sentence.endswith("Not defined: flat.")


def test_no_separating_scorer_is_said_first() -> None:
    scores = {name: SCORES[name] for name in ("coin", "inverted")}
    found = label_agreement(detail_of(LABELS, scores), "label", resamples=300)
    assert agreement_verdict(found).startswith("No scorer separates the labels")


def test_the_table_is_ranked_with_a_badge_column() -> None:
    found = label_agreement(detail_of(LABELS, SCORES), "label", resamples=300)
    frame = agreement_frame(found)
    assert list(frame["scorer"]) == ["perfect", "coin", "inverted", "flat"]
    assert list(frame.columns[:2]) == ["scorer", "verdict"]
    assert frame.loc[2, "verdict"] == "🔻 inverted"


def test_the_html_report_says_the_verdict() -> None:
    detail = detail_of(LABELS, SCORES)
    found = label_agreement(detail, "label", resamples=300)
    report = experiment_html(detail, agreement=found)
    section = report[report.index('<section id="labels">') :]
    section = section[: section.index("</section>")]
    assert "1 of 4 scorers separates the labels" in section
    assert '<td class="verdict-separates">separates</td>' in section
    assert '<td class="verdict-inverted">inverted</td>' in section
    # rows best first: perfect before coin before inverted before flat
    places = [section.index(f"<tr><td>{name}</td>") for name in ("perfect", "coin", "inverted")]
    assert places == sorted(places) and section.index("<tr><td>flat</td>") > places[-1]
