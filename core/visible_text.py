"""Bidirectional-text controls in user text shown as what they are.

A right-to-left override (U+202E) or isolate in a dataset value, an experiment name or a judge's
reason reorders the characters after it on screen, so "txt.exe" can be shown as "exe.txt" and a
score or a name can be spoofed. Where user text is shown (the pages, the HTML report) each such
control is replaced by its visible escape, `\\u202e`, as the CLI does for every control
character (docs/architecture.md: user text is text).
"""

from __future__ import annotations

import re

__all__ = ["BIDI_CONTROLS", "without_bidi_controls"]

BIDI_CONTROLS = frozenset(
    "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
)
"""The Unicode bidirectional formatting characters: the Arabic letter mark, the left-to-right
and right-to-left marks, the embeddings, overrides and their pop, the isolates and their pop."""

_BIDI = re.compile("[" + "".join(sorted(BIDI_CONTROLS)) + "]")


def without_bidi_controls(text: str) -> str:
    """`text` with each bidirectional control replaced by its escape (`\\u202e`)."""
    if not _BIDI.search(text):
        return text
    return _BIDI.sub(lambda found: f"\\u{ord(found.group()):04x}", text)
