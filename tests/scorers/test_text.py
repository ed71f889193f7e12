"""Text extraction shared by the code scorers (spec §1.3)."""

from __future__ import annotations

import re

import pytest

from core.scorers._text import (
    JS_WHITESPACE_RUN,
    ScorerInputError,
    assistant_texts,
    collapse_js_whitespace,
    is_blank,
    join_texts,
    js_trim,
    message_text,
    remove_js_whitespace,
    tool_invocations,
    utf16_units,
)


@pytest.mark.parametrize(
    ("message", "text"),
    [
        ({"role": "user", "content": "plain"}, "plain"),
        (
            {
                "content": [
                    {"type": "text", "text": "a"},
                    {"type": "image"},
                    {"type": "text", "text": "b"},
                ]
            },
            "b",
        ),
        ({"content": {"content": "inner", "text": "other"}}, "inner"),
        ({"content": {"content": "", "text": "text field"}}, "text field"),
        (
            {"content": {"parts": [{"type": "text", "text": "x"}, {"type": "text", "text": "y"}]}},
            "y",
        ),
        ({"content": {"parts": []}}, ""),
        ({"content": None}, ""),
    ],
)
def test_message_text_rules(message: dict, text: str) -> None:
    assert message_text(message) == text


def test_join_plain_strings_messages_and_agent_input() -> None:
    assert join_texts("hello") == "hello"
    assert join_texts(None) == ""
    assert join_texts(["a", {"role": "assistant", "content": "b"}]) == "a, b"
    agent_input = {
        "inputMessages": [{"role": "user", "content": "q1"}, {"role": "user", "content": "q2"}]
    }
    assert join_texts(agent_input, "input") == "q1, q2"
    assert join_texts({"role": "user", "content": "one"}) == "one"


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (
            42,
            "output must be a string, a message dict with a 'content' key, or a list of these;"
            " got int 42",
        ),
        ({"text": "no content key"}, "output must be a string"),
        (["ok", 3], "output[1] must be a string or a message dict"),
        (b"bytes", "got bytes"),
    ],
)
def test_bad_shapes_are_named(value: object, message: str) -> None:
    with pytest.raises(ScorerInputError, match=re.escape(message)):
        join_texts(value)


def test_side_name_in_errors() -> None:
    with pytest.raises(ScorerInputError, match=r"^input must be"):
        join_texts(1.5, "input")


def test_blank_and_assistant_texts() -> None:
    assert is_blank(["", "  "])
    assert not is_blank([" ", "x"])
    assert assistant_texts(
        [{"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}, "s"]
    ) == ["a", "s"]


def test_tool_invocations_merge_legacy_and_parts() -> None:
    legacy = {"toolCallId": "1", "toolName": "a"}
    part = {"toolCallId": "2", "toolName": "b"}
    content = {
        "toolInvocations": [legacy],
        "parts": [
            {"type": "tool-invocation", "toolInvocation": legacy},
            {"type": "tool-invocation", "toolInvocation": part},
        ],
    }
    assert tool_invocations([{"role": "assistant", "content": content}]) == [legacy, part]
    assert tool_invocations("plain") == []


def test_utf16_units() -> None:
    assert utf16_units("abc") == "abc"
    assert utf16_units("a😀") == [0x61, 0xD83D, 0xDE00]


@pytest.mark.parametrize(
    "text",
    [
        "  a \t b\n\nc  ",
        "a\ufeffb",  # JavaScript whitespace only
        "a\x1cb\x85c",  # Python whitespace only
        "\u3000wide\u2028lines\u00a0",
        "zero\u200dwidth joiner and soft\u00adhyphen",  # not printable, yet no whitespace
        "plain words only",
        "",
    ],
)
@pytest.mark.parametrize("separator", [" ", ""])
def test_collapse_js_whitespace_is_javascripts_replace_and_trim(text: str, separator: str) -> None:
    expected = js_trim(JS_WHITESPACE_RUN.sub(separator, text))
    assert collapse_js_whitespace(text, separator) == expected
    if not separator:
        assert remove_js_whitespace(text) == JS_WHITESPACE_RUN.sub("", text)


@pytest.mark.parametrize(
    ("value", "blank"),
    [("", True), (" \n", True), ("x", False), ([" ", {"content": ""}], True), (None, True)],
)
def test_is_blank(value: object, blank: bool) -> None:
    assert is_blank(value) is blank
