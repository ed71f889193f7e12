"""Themes in judge reasons (core/reporting/themes.py): planted topics come back as themes named
by their words, the same seed gives the same themes, tiny and odd inputs are handled."""

from __future__ import annotations

import random

import pytest

from core.records import ScorerOutcome
from core.reporting.themes import (
    MAX_THEMES,
    NO_WORDS,
    cluster_texts,
    low_scores,
    normalise,
    reason_text,
)

TOPICS = {
    "date": [
        "The answer gives the wrong date for the event, it happened in {n}.",
        "Incorrect date: the year {n} is wrong for this event.",
        "The date mentioned is wrong; the event happened in {n}.",
    ],
    "source": [
        "The output invents a source that does not exist (reference {ref}).",
        "Hallucinated citation: the cited source is made up.",
        "It cites a made-up source that is not in the context.",
    ],
    "tone": [
        "The tone is rude and dismissive toward the user.",
        "Rude tone, dismissive of the user's question.",
        "The reply is dismissive and rude to the user.",
    ],
}


def planted(count: int = 90, seed: int = 7) -> tuple[list[tuple[str, str]], dict[str, str]]:
    """Reasons drawn from three obvious topics, shuffled; and each item's topic."""
    chooser = random.Random(seed)
    texts, topic_of = [], {}
    for n in range(count):
        topic = list(TOPICS)[n % 3]
        template = chooser.choice(TOPICS[topic])
        text = template.format(n=chooser.randint(1000, 2030), ref=f"x{chooser.randint(10, 99)}z")
        texts.append((f"item-{n}", text))
        topic_of[f"item-{n}"] = topic
    chooser.shuffle(texts)
    return texts, topic_of


def test_three_planted_topics_come_back_as_three_themes_named_by_their_words() -> None:
    texts, topic_of = planted()
    themes = cluster_texts(texts, seed=0)
    assert len(themes) == 3
    assert sorted(t.size for t in themes) == [30, 30, 30]
    telling = {"date": {"date", "wrong", "year"}, "source": {"source", "cites", "citation"},
               "tone": {"rude", "dismissive", "tone"}}  # fmt: skip
    found = set()
    for theme in themes:
        topics = {topic_of[item_id] for item_id in theme.item_ids}
        assert len(topics) == 1, theme  # every example of a theme is of one topic
        topic = topics.pop()
        found.add(topic)
        assert set(theme.label.split(" · ")) & telling[topic], theme.label
        assert theme.words[: len(theme.label.split(" · "))] == theme.label.split(" · ")
        assert theme.example and topic_of[theme.item_ids[0]] == topic
    assert found == set(TOPICS)


def test_the_same_seed_gives_the_same_themes_and_item_order_does_not_matter_to_sizes() -> None:
    texts, _ = planted(120, seed=3)
    first = cluster_texts(texts, seed=5)
    assert cluster_texts(texts, seed=5) == first
    again = cluster_texts(list(reversed(texts)), seed=5)
    assert sorted((t.label, t.size) for t in again) == sorted((t.label, t.size) for t in first)


def test_at_most_max_themes_and_largest_first() -> None:
    chooser = random.Random(1)
    words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india"]
    texts = [
        (f"i{n}", f"{words[n % 9]} {words[n % 9]}ish problem {chooser.choice(['x', 'y'])}")
        for n in range(9 * 5 + 3)
    ]
    themes = cluster_texts(texts, seed=0)
    assert 2 <= len(themes) <= MAX_THEMES
    assert [t.size for t in themes] == sorted((t.size for t in themes), reverse=True)
    assert sum(t.size for t in themes) == len(texts)
    assert len(cluster_texts(texts, seed=0, max_themes=2)) <= 2
    assert len(cluster_texts(texts, seed=0, max_themes=1)) == 1


@pytest.mark.parametrize(
    ("texts", "sizes"),
    [
        ([], []),
        ([("a", "")], []),
        ([("a", "   "), ("b", "\n")], []),
        ([("a", "The answer is wrong.")], [1]),
        ([("a", "Wrong date given."), ("b", "Rude tone used.")], [1, 1]),
        ([("a", "Wrong date given.")] * 1 + [("b", "Wrong date given.")] * 1, [2]),
        ([(f"i{n}", "Same reason 42 every time.") for n in range(50)], [50]),
    ],
    ids=["none", "one-empty", "blank", "one", "two", "two-identical", "all-identical"],
)
def test_tiny_inputs(texts: list[tuple[str, str]], sizes: list[int]) -> None:
    themes = cluster_texts(texts, seed=0)
    assert sorted(t.size for t in themes) == sorted(sizes)
    for theme in themes:
        assert theme.label and theme.item_ids


def test_texts_differing_only_by_ids_and_numbers_are_one_text() -> None:
    texts = [
        (f"i{n}", f"Item q{n} failed: judge returned 0.{n}5 for request {n:06d}") for n in range(6)
    ]
    themes = cluster_texts(texts, seed=0)
    assert [t.size for t in themes] == [6]
    assert normalise("Run 3f2a9c1e-1111-2222-3333-444455556666 of q17 at 12.5s, HTTP 429") == (
        "run of at s, http 429"
    )


def test_stop_words_only_make_one_theme_without_telling_words() -> None:
    themes = cluster_texts(
        [("a", "It is what it is."), ("b", "This was the one."), ("c", "And so")]
    )
    assert len(themes) == 1 and themes[0].label == NO_WORDS and themes[0].size == 3


def test_identical_texts_share_a_theme_and_example_items_are_capped() -> None:
    texts, _ = planted(60)
    texts += [
        (f"dup-{n}", "Hallucinated citation: the cited source is made up.") for n in range(20)
    ]
    themes = cluster_texts(texts, seed=0)
    holding = [t for t in themes if any(i.startswith("dup-") for i in t.item_ids)]
    assert len(holding) <= 1
    assert all(len(t.item_ids) <= 5 for t in themes)


def test_bad_max_themes_is_refused() -> None:
    with pytest.raises(ValueError, match="max_themes"):
        cluster_texts([("a", "x")], max_themes=0)


def outcome(item: str, score: float | None, reason: object = "r") -> ScorerOutcome:
    return ScorerOutcome(item_id=item, scorer_id="s", status="success", score=score, reason=reason)


def test_low_scores_by_threshold_or_bottom_quantile() -> None:
    outcomes = [outcome(f"i{n}", n / 10) for n in range(10)] + [outcome("none", None)]
    below = low_scores(outcomes, threshold=0.3)
    assert [o.item_id for o in below.outcomes] == ["i0", "i1", "i2"]
    assert below.scored == 10 and "below 0.3" in below.basis()
    bottom = low_scores(outcomes, quantile=0.2)
    assert [o.item_id for o in bottom.outcomes] == ["i0", "i1"]
    assert bottom.cutoff == pytest.approx(0.1) and "lowest 20%" in bottom.basis()
    ties = low_scores([outcome(f"t{n}", 1.0) for n in range(4)], quantile=0.25)
    assert len(ties.outcomes) == 4  # every score ties at the cut-off
    assert low_scores([outcome("n", None)]).outcomes == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"threshold": float("nan")}, "threshold"),
        ({"threshold": True}, "threshold"),
        ({"quantile": 0}, "quantile"),
        ({"quantile": 1.5}, "quantile"),
    ],
)
def test_low_scores_refuses_bad_settings(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        low_scores([outcome("a", 0.5)], **kwargs)


def test_reason_text_of_structured_reasons() -> None:
    assert reason_text(None) == ""
    assert reason_text("  plain ") == "plain"
    assert reason_text(["a", {"why": "b"}, 3]) == "a b 3"
