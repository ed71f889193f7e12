"""Small display helpers shared by the pages."""

from __future__ import annotations

import json
import re
from typing import Any

_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+\-.!|~<>$:])")


def md_text(text: object) -> str:
    """Text from a file, a scorer or a judge, made safe to pass to Streamlit's markdown
    elements (st.markdown, st.warning, captions): every markup character is escaped, so no
    link, image, maths, colour or icon can come out of it."""
    return _MARKDOWN.sub(r"\\\1", str(text))


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


def as_text(value: Any) -> str:
    """Strings as they are; anything else as indented JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, default=str)
