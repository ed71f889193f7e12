"""Short titles for failure groups that keep the part of an error telling the groups apart.

Judge errors come wrapped: `litellm.APIError: APIError: OpenAIException - injected failure
for item 7`. Cut at a fixed width, every title read "litellm.APIError: APIError: OpenAIExcep…"
and no two groups looked different. A title drops the exception names leading the message and
the words every group's error shares, then is cut; the whole error stays in the groups' table
and inside the group."""

from __future__ import annotations

import re
from collections.abc import Sequence

WIDTH = 90
"""Characters of an error kept in a title."""

_WRAPPER = re.compile(r"^(?:[\w.]*(?:Error|Exception)\w*\s*[:\-–]\s*)+")
"""Exception names leading a message (`litellm.APIError: `, `OpenAIException - `)."""


def _core(error: str) -> str:
    """The message without the exception names wrapped around it (the whole text when
    nothing else is left)."""
    stripped = _WRAPPER.sub("", error.strip())
    return stripped or error.strip()


def _shared_prefix(texts: Sequence[str]) -> str:
    """The whole words (each with its following space) every text starts with, unless that
    is all of some text."""
    if len(texts) < 2:
        return ""
    split = [text.split(" ") for text in texts]
    shared: list[str] = []
    for words in zip(*split, strict=False):
        if any(word != words[0] for word in words):
            break
        shared.append(words[0])
    if any(len(shared) >= len(words) for words in split):
        shared = shared[: min(len(words) for words in split) - 1]
    return "".join(word + " " for word in shared)


def distinctive(errors: Sequence[str], width: int = WIDTH) -> dict[str, str]:
    """Each error's short title: without leading exception names and the words all the errors
    start with, at most `width` characters (an ellipsis marks a cut and a dropped start)."""
    cores = {error: _core(error) for error in errors}
    prefix = _shared_prefix(sorted(set(cores.values())))
    titles: dict[str, str] = {}
    for error, core in cores.items():
        text = core[len(prefix) :] if prefix and core.startswith(prefix) else core
        text = ("…" + text) if text != core else text
        titles[error] = text if len(text) <= width else text[: width - 1] + "…"
    return titles
