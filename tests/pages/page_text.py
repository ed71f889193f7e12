"""Reading what the pages wrote: Markdown bodies hold user text escaped by pages/ui/text.py."""

from __future__ import annotations

import re

_ESCAPE = re.compile(r"\\(.)")


def plain(markdown: str) -> str:
    """The text a reader sees of an escaped Markdown body: backslash escapes undone and the
    invisible word joiners (which keep bare links from being linked) dropped."""
    return _ESCAPE.sub(r"\1", markdown).replace("\u2060", "")
