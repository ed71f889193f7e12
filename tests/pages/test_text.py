"""pages/ui/text.py: a user's text inside Markdown is escaped character for character and keeps
no bare link; shown as a block it is the value itself; in a chart it is entity-escaped. (The
browser test tests/browser/test_user_text.py shows what Streamlit makes of it.)"""

from __future__ import annotations

import re

import pytest
from page_text import plain  # tests/pages is on sys.path (no package: `pages` is the app)
from streamlit.testing.v1 import AppTest

from pages.ui.text import chart_text, md_short, md_text

PAYLOADS = [
    "**Hi** [click me](http://example.com) :red[warning]",
    "![img](http://example.com/a.png) :material/bolt: $x^2$ $$y$$",
    "<b>bold</b> <a href=javascript:alert(1)>x</a> <img src=x onerror=alert(1)>",
    "line\n=== \n- item\n# heading\n> quote\n1. one\n| a | b |\n&lt;i&gt; ~~gone~~ `code`",
    "bare http://example.com/x, www.example.com and ada@example.com, mailto:a@b.co",
    "a\\*b\\",
]
MARKUP = set("\\`*_{}[]()#+-.!|~<>$:=&")


@pytest.mark.parametrize("payload", PAYLOADS)
def test_md_text_reads_back_as_the_same_text(payload: str) -> None:
    assert plain(md_text(payload)) == payload


@pytest.mark.parametrize("payload", PAYLOADS)
def test_md_text_escapes_every_markup_character(payload: str) -> None:
    escaped = md_text(payload)
    unescaped = re.sub(r"\\.", "", escaped, flags=re.DOTALL)  # drop each escape pair
    assert not MARKUP & set(unescaped), MARKUP & set(unescaped)


def test_md_text_leaves_no_bare_link_for_gfm_to_find() -> None:
    escaped = md_text(PAYLOADS[4]).replace("\\", "")
    assert not re.search(r"(?i)https?://|www\.|\w@\w", escaped)
    assert "http\u2060://" in escaped and "www\u2060." in escaped and "ada\u2060@" in escaped


def test_md_short_is_one_line_and_limited() -> None:
    assert md_short("a\n\n  b\tc") == "a b c"
    assert plain(md_short("x" * 500, 80)) == "x" * 79 + "…"
    assert md_short({"k": 1}) == md_text('{ "k": 1 }')  # JSON, on one line


def test_chart_text_is_entity_escaped() -> None:
    assert chart_text('<a href="javascript:x">y</a> & <b>') == (
        "&lt;a href=&quot;javascript:x&quot;&gt;y&lt;/a&gt; &amp; &lt;b&gt;"
    )


def show_app(value: object) -> None:
    from pages.ui.text import show_text

    show_text("Output", value)
    show_text(None, None, empty="(nothing)")


def test_show_text_puts_the_value_itself_in_a_code_block() -> None:
    app = AppTest.from_function(show_app, args=(PAYLOADS[0],), default_timeout=30)
    app.run()
    assert not app.exception, app.exception
    assert [m.value for m in app.markdown] == ["**Output**"]
    assert [c.value for c in app.code] == [PAYLOADS[0], "(nothing)"]
    assert all(c.language == "plaintext" for c in app.code)  # no highlighter reads it either


def test_show_text_shows_structured_values_as_json() -> None:
    app = AppTest.from_function(show_app, args=({"text": "[x](http://e.com)"},))
    app.run()
    assert app.code[0].value == '{\n  "text": "[x](http://e.com)"\n}'


@pytest.mark.parametrize(
    "payload", [":material/bolt:", "x :material/warning: y", ":smile: :+1:", "a:material/home:"]
)
def test_md_text_leaves_no_icon_or_emoji_shortcode(payload: str) -> None:
    """Issue 19: Streamlit reads `:material/<name>:` after the escapes are undone; a word joiner
    after the colon keeps it text, and the reader still sees the characters."""
    shown = md_text(payload).replace("\\", "")
    assert not re.search(r":(material/|[A-Za-z0-9_+-]+:)", shown)
    assert plain(md_text(payload)) == payload


@pytest.mark.parametrize("control", ["\u202e", "\u202d", "\u2066", "\u2067", "\u2068", "\u200f"])
def test_bidi_controls_are_shown_as_escapes(control: str) -> None:
    spoof = f"invoice{control}fdp.exe"
    escaped = f"invoice\\u{ord(control):04x}fdp.exe"
    assert plain(md_text(spoof)) == escaped
    assert control not in md_short(spoof) and control not in md_text(spoof)
    from pages.ui.text import as_text

    assert as_text(spoof) == escaped  # what show_text's code block shows
    assert as_text({"k": spoof}) == '{\n  "k": "' + escaped + '"\n}'


def texts_app(values: list[object]) -> None:
    from pages.ui.text import texts_block

    texts_block([(f"T{n}", value) for n, value in enumerate(values)], columns=2, heading="Head")


def test_texts_block_is_one_html_block_whose_texts_read_back_as_they_are() -> None:
    import html

    values: list[object] = [*PAYLOADS, "two\n\nparagraphs\r\nand\rbreaks", None, {"k": "<b>"}]
    app = AppTest.from_function(texts_app, args=(values,), default_timeout=30)
    app.run()
    assert not app.exception, app.exception
    (block,) = [m.value for m in app.markdown]
    first, body, last = block.split("\n")  # `<div>` alone, the block on one line, `</div>`
    assert first == '<div class="scorelab-texts">' and last == "</div>"
    assert "<p style=\"margin:0 0 0.5rem 0\"><strong>Head</strong></p>" in body
    boxes = re.findall(r'<div class="scorelab-text" style="[^"]*">(.*?)</div>', body)
    expected = [*PAYLOADS, "two\n\nparagraphs\nand\nbreaks", "—", '{\n  "k": "<b>"\n}']
    assert [html.unescape(box) for box in boxes] == expected
    # No tag, no line break from a text: every `<` in a box is an entity.
    assert all("<" not in box and ">" not in box and "\n" not in box for box in boxes)
