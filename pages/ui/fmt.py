"""Small display helpers shared by the pages: numbers, durations, money. How a user's text is
shown lives in pages/ui/text.py."""

from __future__ import annotations

from pages.ui.text import as_text, md_text

__all__ = ["as_text", "count", "duration", "md_text", "money", "score", "tokens"]
# as_text and md_text are pages.ui.text's, named here too for older call sites.


def duration(seconds: float | None) -> str:
    """`1 h 02 min`, `3 min 05 s`, `12.3 s` or an em dash."""
    if seconds is None:
        return "—"
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


def count(value: int) -> str:
    """A count short enough for a summary card: `4,085` below 10,000, then `12.3k`, `4.09M`."""
    if abs(value) < 10_000:
        return f"{value:,}"
    if abs(value) < 1_000_000:
        return f"{value / 1_000:.1f}k"
    return f"{value / 1_000_000:.3g}M"


def tokens(count: float | int | None) -> str:
    """`12,345` or an em dash."""
    return "—" if count is None else f"{int(count):,}"


def money(amount: float | None) -> str:
    """An estimated cost in dollars, or an em dash when unknown."""
    if amount is None or amount != amount:  # None or NaN
        return "—"
    return f"${amount:,.4f}" if amount < 1 else f"${amount:,.2f}"


def score(value: float | None) -> str:
    """A score with three decimals, or an em dash."""
    if value is None or value != value:
        return "—"
    return f"{value:.3f}"
