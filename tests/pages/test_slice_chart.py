"""The Slices view's chart (pages/ui/slice_chart.py): one inline SVG of a scorer's worst values,
a bar per value at its mean on the scorer's range, its clipped interval as a whisker, its n in
the label and its figures in the tooltips; values' texts shown as characters, on one line."""

from __future__ import annotations

import re

import pytest

from core.service.views import SliceBar
from pages.ui.slice_chart import WIDTH, slice_chart_svg
from pages.ui.text import show_svg

LABEL_W, RIGHT = 260, 20
PLOT_W = WIDTH - LABEL_W - RIGHT


def bar(value: str, mean: float, low: float | None = None, high: float | None = None) -> SliceBar:
    return SliceBar(value=value, scored=4, mean=mean, low=low, high=high)


def widths(svg: str) -> list[float]:
    return [float(w) for w in re.findall(r'<rect [^>]*width="([\d.]+)"', svg)]


def test_a_bar_per_value_at_its_mean_with_its_interval_and_n() -> None:
    svg = slice_chart_svg(
        [bar("Law", 0.25, 0.0, 0.5), bar("Health", 0.5, 0.4, 0.6), bar("Fiction", 1.0)],
        (0.0, 1.0),
        "right",
    )
    assert svg is not None and svg.startswith("<svg") and svg.endswith("</svg>")
    assert widths(svg) == pytest.approx([PLOT_W / 4, PLOT_W / 2, PLOT_W], abs=0.1)
    assert svg.count('class="interval"') == 2  # Fiction has no interval: no whisker
    assert ">Law (n=4)</text>" in svg
    assert "Law (n=4): mean 0.250, 95% interval 0.000–0.500" in svg
    assert "Fiction (n=4): mean 1.000, no interval" in svg
    # The whisker of Law spans 0 to 0.5 of the axis.
    law = re.search(r'class="interval" d="M([\d.]+) [\d.]+H([\d.]+)', svg)
    assert law is not None
    assert float(law.group(1)) == pytest.approx(LABEL_W)
    assert float(law.group(2)) == pytest.approx(LABEL_W + PLOT_W / 2, abs=0.1)


def test_the_axis_follows_the_scorers_range() -> None:
    svg = slice_chart_svg([bar("x", 4.0, 2.0, 6.0)], (0.0, 10.0), "a scale of 0-10")
    assert svg is not None
    assert widths(svg) == pytest.approx([PLOT_W * 0.4], abs=0.1)
    assert [t for t in re.findall(r">(\d+(?:\.\d+)?)</text>", svg)] == ["0", "5", "10"]


def test_no_bar_no_chart() -> None:
    assert slice_chart_svg([], (0.0, 1.0), "a") is None


def test_texts_are_characters_on_one_line() -> None:
    hostile = '<img src=x onerror=alert(1)> <b>b</b> "q" & \u202eevil\n\n**bold** [l](http://e.com)'
    svg = slice_chart_svg([bar(hostile, 0.5)], (0.0, 1.0), "<script>s</script>")
    assert svg is not None
    assert "<img" not in svg and "<b>" not in svg and "<script" not in svg
    assert "&lt;img src=x onerror=alert(1)&gt;" in svg and "&lt;script&gt;" in svg
    assert "\u202e" not in svg and "\\u202e" in svg  # the bidi control shown as its escape
    assert "\n" not in svg  # Markdown would end the HTML block at a blank line
    show_svg(svg, "slice-chart-box")  # accepted: one line (outside a session, a no-op draw)


def test_show_svg_refuses_a_line_break() -> None:
    with pytest.raises(ValueError, match="line break"):
        show_svg("<svg>\n\n**x**</svg>", "box")


def test_a_long_label_is_cut_with_the_whole_in_its_tooltip() -> None:
    long = "a fairly long category name that goes on and on"
    svg = slice_chart_svg([bar(long, 0.5)], (0.0, 1.0), "a")
    assert svg is not None
    assert f"<title>{long} (n=4)</title>" in svg
    assert f"</title>{long[:31]}… (n=4)</text>" in svg  # the n always shown
