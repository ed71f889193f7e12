"""Text extraction shared by the code-based prebuilt scorers (docs/scorers.md,
"Reading inputs and outputs").

A run's `input` or `output` may be a plain string, one Mastra message (a dict with `content`),
a list mixing both, or Mastra's agent input record (`{"inputMessages": [...], ...}`). The code
scorers read every message of a side, whatever its role, and join the texts with `", "`.
Anything else is refused with a `ScorerInputError` that says what was received, because a
silently empty text would score as if the model had answered nothing.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = [
    "JS_WHITESPACE",
    "JS_WHITESPACE_RUN",
    "ScorerInputError",
    "assistant_texts",
    "collapse_js_whitespace",
    "describe_value",
    "is_blank",
    "join_texts",
    "js_trim",
    "message_text",
    "remove_js_whitespace",
    "side_texts",
    "tool_invocations",
    "utf16_units",
]

JOIN_SEPARATOR = ", "

# JavaScript's `\s` and `trim()` set (the scorers we mirror are JS): Python's `\s` differs on a
# few code points (it lacks U+FEFF and includes U+001C..U+001F), which would change scores.
JS_WHITESPACE = (
    "\t\n\v\f\r \u00a0\u1680"
    + "".join(chr(code) for code in range(0x2000, 0x200B))
    + "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
JS_WHITESPACE_RUN = re.compile(f"[{JS_WHITESPACE}]+")


def js_trim(text: str) -> str:
    """`String.prototype.trim` of JavaScript."""
    return text.strip(JS_WHITESPACE)


# Where Python's `str.split()` and JavaScript's `\s` disagree: U+001C..U+001F and U+0085 are
# whitespace only to Python, U+FEFF only to JavaScript.
_SPLIT_DIFFERS = re.compile("[\x1c-\x1f\x85\ufeff]")


def collapse_js_whitespace(text: str, separator: str = " ") -> str:
    r"""JavaScript's `text.replace(/\s+/g, separator).trim()`, computed with `str.split` (in C,
    several times faster than the regex) whenever the two whitespace sets agree on the text.

    A printable text (`str.isprintable`: no character of the Unicode "Other" or "Separator"
    categories but the ASCII space) has no whitespace but spaces, on which they agree."""
    if text.isprintable() or _SPLIT_DIFFERS.search(text) is None:
        return separator.join(text.split())
    return js_trim(JS_WHITESPACE_RUN.sub(separator, text))


def remove_js_whitespace(text: str) -> str:
    r"""JavaScript's `text.replace(/\s+/g, "")`: a plain `replace` when spaces are the only
    whitespace (a printable text once they are gone)."""
    without_spaces = text.replace(" ", "")
    if without_spaces.isprintable():
        return without_spaces
    return collapse_js_whitespace(text, "")


class ScorerInputError(TypeError):
    """A run's input or output has a shape no prebuilt scorer can read."""


def describe_value(value: Any) -> str:
    """A short description of a bad value for error messages."""
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def _last_text_part(parts: Any) -> str | None:
    """The text of the last `{"type": "text"}` part of a list, or None."""
    if not isinstance(parts, list):
        return None
    for part in reversed(parts):
        if isinstance(part, Mapping) and part.get("type") == "text":
            text = part.get("text")
            return text if isinstance(text, str) else ""
    return None


def message_text(message: Mapping[str, Any]) -> str:
    """The text of one Mastra message; the first rule that applies wins."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return _last_text_part(content) or ""
    if isinstance(content, Mapping):
        for key in ("content", "text"):
            value = content.get(key)
            if isinstance(value, str) and value:
                return value
        return _last_text_part(content.get("parts")) or ""
    return ""


def _is_message(value: Any) -> bool:
    return isinstance(value, Mapping) and "content" in value


def _messages(value: Any, side: str) -> list[Any]:
    """The list of items (strings or message dicts) a side is made of."""
    if value is None:
        return []
    if isinstance(value, str) or _is_message(value):
        return [value]
    if isinstance(value, Mapping) and "inputMessages" in value:
        return _messages(value["inputMessages"], side)
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
        for index, item in enumerate(value):
            if not (isinstance(item, str) or _is_message(item)):
                raise ScorerInputError(
                    f"{side}[{index}] must be a string or a message dict with a 'content' key, "
                    f"got {describe_value(item)}"
                )
        return list(value)
    raise ScorerInputError(
        f"{side} must be a string, a message dict with a 'content' key, or a list of these; "
        f"got {describe_value(value)}"
    )


def side_texts(value: Any, side: str = "output") -> list[str]:
    """The text of every message of a side (None gives no messages)."""
    return [
        item if isinstance(item, str) else message_text(item) for item in _messages(value, side)
    ]


def join_texts(value: Any, side: str = "output") -> str:
    """All message texts of a side joined with `", "`, as Mastra's code scorers do."""
    if isinstance(value, str):  # the common case, kept free of any list building
        return value
    return JOIN_SEPARATOR.join(side_texts(value, side))


def assistant_texts(value: Any, side: str = "output") -> list[str]:
    """Texts of the assistant messages only; a plain string counts as an assistant message."""
    texts: list[str] = []
    for item in _messages(value, side):
        if isinstance(item, str):
            texts.append(item)
        elif item.get("role", "assistant") == "assistant":
            texts.append(message_text(item))
    return texts


def is_blank(value: Any, side: str = "output") -> bool:
    """True when every message of a side is empty after `strip()` (or there is none)."""
    if isinstance(value, str):  # the common case, kept free of any list building
        return not value.strip()
    return not any(text.strip() for text in side_texts(value, side))


def tool_invocations(value: Any, side: str = "output") -> list[Mapping[str, Any]]:
    """Every tool invocation of the output messages, de-duplicated by `toolCallId`.

    Per message, the legacy `content.toolInvocations` come first, then the `tool-invocation`
    parts; an invocation without a `toolCallId` is always kept.
    """
    found: list[Mapping[str, Any]] = []
    for item in _messages(value, side):
        if isinstance(item, str) or not isinstance(item.get("content"), Mapping):
            continue
        content = item["content"]
        candidates = list(content.get("toolInvocations") or [])
        for part in content.get("parts") or []:
            if isinstance(part, Mapping) and part.get("type") == "tool-invocation":
                candidates.append(part.get("toolInvocation") or {})
        seen: set[Any] = set()
        for invocation in candidates:
            call_id = invocation.get("toolCallId")
            if call_id is not None:
                if call_id in seen:
                    continue
                seen.add(call_id)
            found.append(invocation)
    return found


_NON_BMP = re.compile("[\U00010000-\U0010ffff]")


def utf16_units(text: str) -> str | list[int]:
    """The text as JavaScript sees it: unchanged when it has no astral character, else the
    list of its UTF-16 code units (JS string lengths and indexes count those)."""
    if not _NON_BMP.search(text):
        return text
    data = text.encode("utf-16-le", "surrogatepass")
    return [int.from_bytes(data[i : i + 2], "little") for i in range(0, len(data), 2)]
