"""How the LLM-judge scorers read a run's messages (docs/scorers.md, "Reading inputs and
outputs"): the first user message, the last assistant message with text, the system prompt,
the remembered conversation and the results of the tool calls.

Each rule reads plain strings as well as Mastra's message shapes (a message dict, a list of
them, or an agent input with `inputMessages`); anything else is refused with a
`ScorerInputError` naming the side and what was received.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from core.scorers._text import ScorerInputError, describe_value, message_text, tool_invocations

__all__ = [
    "assistant_message",
    "assistant_turns",
    "first_user_message",
    "messages_of",
    "remembered_messages",
    "system_prompt",
    "text_of",
    "tool_result_context",
    "user_message",
]


def _items(value: Any, side: str) -> list[Any]:
    """The messages of a side: strings and message dicts, in order."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, Mapping):
        if "inputMessages" in value:
            return _items(value["inputMessages"], side)
        return [value]
    if isinstance(value, Sequence) and not isinstance(value, (bytes, bytearray)):
        for index, item in enumerate(value):
            if not isinstance(item, (str, Mapping)):
                raise ScorerInputError(
                    f"{side}[{index}] must be a string or a message dict, "
                    f"got {describe_value(item)}"
                )
        return list(value)
    raise ScorerInputError(
        f"{side} must be a string, a message dict or a list of these; got {describe_value(value)}"
    )


def messages_of(value: Any, side: str = "output") -> list[Any]:
    """The messages of a side (strings and message dicts), refusing unreadable shapes."""
    return _items(value, side)


def text_of(item: str | Mapping[str, Any]) -> str:
    """The text of one message: a string, a `{"content"}` message (Mastra's rules) or a
    `{"text"}` object."""
    if isinstance(item, str):
        return item
    if "content" in item:
        return message_text(item)
    text = item.get("text")
    return text if isinstance(text, str) else ""


def _role(item: str | Mapping[str, Any]) -> str | None:
    return None if isinstance(item, str) else item.get("role")


def first_user_message(value: Any, side: str = "input") -> str | None:
    """The text of the first user message (a string or a role-less object counts as one), or
    None when there is none."""
    for item in _items(value, side):
        if _role(item) in (None, "user"):
            return text_of(item)
    return None


def user_message(value: Any, side: str = "input") -> str:
    """`first_user_message`, with "" when there is none."""
    return first_user_message(value, side) or ""


def assistant_turns(value: Any, side: str = "output") -> list[str]:
    """Texts of the assistant messages (strings and role-less objects count) that are not
    blank, in order."""
    return [
        text
        for item in _items(value, side)
        if _role(item) in (None, "assistant") and (text := text_of(item)).strip()
    ]


def assistant_message(value: Any, side: str = "output") -> str:
    """The last assistant message that carries text, or ""."""
    turns = assistant_turns(value, side)
    return turns[-1] if turns else ""


def _system_text(message: Any) -> str:
    """A system message's text: its string content, or its text parts joined by a space."""
    if isinstance(message, str):
        return message
    if not isinstance(message, Mapping):
        return ""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            part["text"]
            for part in content
            if isinstance(part, Mapping)
            and part.get("type") == "text"
            and isinstance(part.get("text"), str)
        )
    return text_of(message)


def system_prompt(value: Any) -> str:
    """The system text of an input: Mastra's `systemMessages` then its tagged system
    messages, or the `system` messages of a plain message list, joined by a blank line."""
    parts: list[str] = []
    if isinstance(value, Mapping) and "inputMessages" in value:
        parts.extend(_system_text(m) for m in value.get("systemMessages") or [])
        for messages in (value.get("taggedSystemMessages") or {}).values():
            parts.extend(_system_text(m) for m in messages or [])
    else:
        parts.extend(_system_text(m) for m in _items(value, "input") if _role(m) == "system")
    return "\n\n".join(part for part in parts if part)


def remembered_messages(value: Any) -> list[tuple[str, str]]:
    """`(role, text)` of the earlier conversation (Mastra's `rememberedMessages`)."""
    if not isinstance(value, Mapping):
        return []
    return [
        (str(_role(m) or "user"), text_of(m))
        for m in _items(value.get("rememberedMessages") or [], "input.rememberedMessages")
    ]


def tool_result_context(output: Any) -> list[str]:
    """JSON of the result of every completed tool call in the assistant messages."""
    found: list[str] = []
    for item in _items(output, "output"):
        if isinstance(item, str) or item.get("role", "assistant") != "assistant":
            continue
        for invocation in tool_invocations([item]):
            if invocation.get("state") == "result":
                found.append(json.dumps(invocation.get("result"), ensure_ascii=False))
    return found
