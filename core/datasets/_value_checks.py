"""Checks on one value that guard the rest of the import: how deep a JSON value nests, how much
text a value holds, and whether it holds a NUL character. None of them recurses, so a hostile
value cannot exhaust Python's stack here."""

from __future__ import annotations

import json
from typing import Any

NUL = "\x00"


def nested_deeper_than(value: Any, limit: int) -> bool:
    """True when lists and objects nest more than `limit` levels inside `value` (`[]` is one
    level, `[[1]]` two)."""
    if not isinstance(value, dict | list):
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        current, depth = stack.pop()
        if depth > limit:
            return True
        children = current.values() if isinstance(current, dict) else current
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def text_bytes(value: Any) -> int:
    """The UTF-8 bytes of a text value, or of a list's or object's JSON text (other values are
    small)."""
    if isinstance(value, str):
        return len(value) if value.isascii() else len(value.encode("utf-8", "surrogatepass"))
    if isinstance(value, dict | list):
        return len(json.dumps(value, ensure_ascii=False, default=str).encode("utf-8", "replace"))
    return 0


def might_exceed(value: Any, limit: int) -> bool:
    """A quick test before `text_bytes`: False when `value` cannot hold more than `limit` bytes
    (a character is at most 4 bytes of UTF-8)."""
    if isinstance(value, str):
        return len(value) * 4 > limit
    return isinstance(value, dict | list)


def holds_nul(value: Any) -> bool:
    """True when a text in `value` (a list's item, an object's key or value, at any depth) holds
    a NUL character."""
    stack = [value]
    while stack:
        current = stack.pop()
        if isinstance(current, str):
            if NUL in current:
                return True
        elif isinstance(current, dict):
            if any(isinstance(key, str) and NUL in key for key in current):
                return True
            stack.extend(current.values())
        elif isinstance(current, list | tuple):
            stack.extend(current)
    return False
