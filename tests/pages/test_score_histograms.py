"""The Distributions view's histograms (pages/ui/score_histograms.py): one SVG of every scorer
that counted a score, a bar per bin with its range and count in a tooltip, names escaped."""

from __future__ import annotations

import re

from core.records import ScoreHistogram
from pages.ui.score_histograms import histograms_svg


def histogram(scorer_id: str, counts: list[int]) -> ScoreHistogram:
    return ScoreHistogram(scorer_id=scorer_id, low=0.0, high=1.0, counts=counts)


def test_a_bar_per_bin_with_its_range_and_count_and_one_panel_per_scored_scorer() -> None:
    svg = histograms_svg(
        [histogram("a", [3, 0, 1, 6]), histogram("empty", [0, 0, 0, 0]), histogram("b", [1] * 10)],
        {"a": 0.625},
    )
    assert svg is not None and svg.startswith("<svg") and svg.endswith("</svg>")
    assert len(re.findall(r"<rect ", svg)) == 4 + 10  # the scorer without a score left out
    assert "<title>score 0.75–1.00: 6 items</title>" in svg
    assert "<title>score 0.25–0.50: 0 items</title>" in svg  # an empty bin keeps its tooltip
    assert "a (10 scored, mean 0.625)" in svg and "b (10 scored)" in svg
    assert "empty" not in svg
    assert 'viewBox="0 0 920 230"' in svg  # two panels side by side, one row
    # The tallest bar fills the panel's height; the others in proportion.
    heights = [float(h) for h in re.findall(r'<rect [^>]*height="([\d.]+)"', svg)[:4]]
    assert heights[3] == max(heights) and heights[0] == round(heights[3] / 2, 1)
    assert heights[1] == 0


def test_names_are_text_not_markup() -> None:
    svg = histograms_svg([histogram('<b>x</b> "q" & <a href=http://e.com>', [1, 2])])
    assert svg is not None
    assert "<b>" not in svg and "<a " not in svg
    assert "&lt;b&gt;x&lt;/b&gt; &quot;q&quot; &amp; &lt;a href=http://e.com&gt;" in svg


def test_a_bidi_control_in_a_name_is_shown_not_obeyed() -> None:
    svg = histograms_svg([histogram("abc\u202edef", [1, 2])])
    assert svg is not None
    assert "\u202e" not in svg and "abc" in svg and "def" in svg


def test_no_score_no_chart() -> None:
    assert histograms_svg([]) is None
    assert histograms_svg([histogram("a", [0, 0])]) is None


def test_a_name_with_line_breaks_stays_on_one_line() -> None:
    # Shown through Markdown as one HTML block: a blank line would end it, and the rest of
    # the SVG would be read as Markdown.
    svg = histograms_svg([histogram("a\n\n**bold** [l](http://e.com)\r\nz", [1])])
    assert svg is not None and "\n" not in svg and "\r" not in svg
    assert "a  **bold** [l](http://e.com)  z" in svg
