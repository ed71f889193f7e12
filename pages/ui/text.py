"""User text is text: how the pages show a string that came from a dataset, a judge, a scorer's
options or an imported file (inputs, outputs, ground truths, reasons, raw outputs, errors,
prompts, names of datasets, experiments and columns, item ids, metadata, scorer ids).

Streamlit reads Markdown in most of what it draws (st.markdown, captions, st.error and its
kin, labels of metrics, tabs, expanders and page links, progress texts, toasts, subheaders) and
turns `[x](http://…)` into a live link, `![i](…)` into an image, `:red[…]` into coloured text,
`:material/bolt:` into an icon, `$x^2$` into KaTeX, `**x**` into bold, and a bare
`http://…`, `www.…` or `a@b.c` into a link. Three ways out, in order of preference:

- `show_text` (st.code) and st.text, st.json: Streamlit reads no Markdown in them, the value
  goes as is (its bidi controls shown as escapes);
- `plain_text` for the other places that read no Markdown: a selectbox's or multiselect's
  option labels (`format_func`), a dataframe's column labels; `cell_text` for one table cell
  and `plain_frame` for a whole table (every text cell and column name): each bidi control
  shown as its escape, so it cannot reorder the row, and an icon or emoji shortcode
  (`:material/home:`) kept from being read as one by an invisible word joiner after its colon;
- `md_text` where the value must sit inside a Markdown sentence, and in the option labels of
  st.radio, st.pills and st.segmented_control, which read Markdown: every markup character is
  backslash-escaped, and an invisible word joiner (U+2060) keeps GFM from finding a bare link;
- `chart_text` for plotly labels (titles, axes, legends, hovers), which read a few HTML tags
  (`<a href>`, `<b>`, `<br>`): entity-escaped, plotly shows the characters; `svg_text` for the
  text of the pages' inline SVG charts: entity-escaped, each bidi control shown as its escape.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from typing import Any

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from core.records import DatasetItem
from core.service import without_bidi_controls

__all__ = [
    "as_text",
    "cell_text",
    "chart_text",
    "md_short",
    "md_text",
    "plain_dataframe",
    "plain_frame",
    "plain_text",
    "shortened",
    "show_svg",
    "show_text",
    "svg_text",
    "texts_block",
    "without_bidi_controls",
]

_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#+\-.!|~<>$:=&])")
"""Markdown's and Streamlit's markup characters (`=` makes a heading of the line above, `&`
starts an entity, `:` an icon, emoji or colour directive, `$` maths)."""

_WORD_JOINER = "\u2060"
_BARE_LINK = re.compile(r"(?i)(https?|ftp|mailto|xmpp|www)(?=[:.])|(?=@)")
"""The places GFM's autolink-literal extension starts a link: a scheme or `www` followed by
`:` or `.`, and the `@` of an e-mail address. It reads the text after the escapes are undone,
so escaping alone does not stop it; a joiner right there does, and is not seen."""

_WHITESPACE = re.compile(r"\s+")
_LINE_BREAKS = re.compile("[\r\n\v\f\x1c-\x1e\x85\u2028\u2029]")
"""What ends a line somewhere (Markdown, str.splitlines)."""

_SHORTCODE = re.compile(r":(?=material/|[A-Za-z0-9_+-]+:)")
"""The colon that opens an icon or emoji shortcode (`:material/bolt:`, `:smile:`): Streamlit
reads them in the text after Markdown's escapes are undone, so a backslash does not stop it; a
word joiner right after the colon does, and is not seen. (A colour directive, `:red[`, is
stopped by the escaped bracket.)"""


def as_text(value: Any) -> str:
    """Strings as they are; anything else (a message list, a JSON object) as indented JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return without_bidi_controls(value)
    return without_bidi_controls(json.dumps(value, indent=2, ensure_ascii=False, default=str))


def plain_text(value: object) -> str:
    """`value` for a place that reads no Markdown (an option label, a table's column label):
    as written, but each bidi control (U+202E...) shown as its escape, so it cannot reorder
    the text, and an icon or emoji shortcode's colon followed by an invisible word joiner, so
    `:material/home:` stays those characters wherever Streamlit would read it."""
    return _SHORTCODE.sub(":" + _WORD_JOINER, without_bidi_controls(str(value)))


def cell_text(value: object) -> object:
    """A table cell: a string through `plain_text`; any other value as it is."""
    return plain_text(value) if isinstance(value, str) else value


def plain_frame(frame: pd.DataFrame, *, names: bool = True) -> pd.DataFrame:
    """A copy of a table for st.dataframe with every string shown through `plain_text`: the
    cells of its text columns, a text index and (`names`) its column names. Call it where the
    frame is built, before any styling; a page whose styles or column_config name the columns
    keeps them (`names=False`) and gives the column labels through `plain_text` itself."""
    shown = frame.copy()
    for column in shown.columns:
        if shown[column].dtype == object or pd.api.types.is_string_dtype(shown[column]):
            shown[column] = shown[column].map(cell_text)
    if names:
        shown.columns = pd.Index(
            [plain_text(name) if isinstance(name, str) else name for name in shown.columns]
        )
    if shown.index.dtype == object or pd.api.types.is_string_dtype(shown.index):
        shown.index = shown.index.map(cell_text)
    return shown


def md_text(value: object) -> str:
    """`value` made safe inside a Markdown sentence: shown character for character, with no
    link, image, maths, colour, icon, emoji, emphasis, heading or list coming out of it, and
    each bidirectional control (U+202E...) shown as its escape, so it cannot reorder the text."""
    joined = _BARE_LINK.sub(
        lambda found: (found.group(1) or "") + _WORD_JOINER, without_bidi_controls(str(value))
    )
    joined = _SHORTCODE.sub(":" + _WORD_JOINER, joined)
    return _MARKDOWN.sub(r"\\\1", joined)


def md_short(value: object, limit: int = 80) -> str:
    """`md_text` of `value` on one line and at most `limit` characters (then `…`): for labels of
    tabs, expanders and metrics, where a long or multi-line value would break the layout."""
    return md_text(shortened(_WHITESPACE.sub(" ", as_text(value)).strip(), limit))


def shortened(text: str, limit: int) -> str:
    """`text` cut to at most `limit` characters, the last one then `…`."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def plain_dataframe(data: pd.DataFrame, **kwargs: Any) -> Any:
    """st.dataframe of `plain_frame(data)`, with st.dataframe's own arguments: the one call a
    page makes to show a table of user text (a styled table is made `plain_frame` first)."""
    return st.dataframe(plain_frame(data), **kwargs)


def chart_text(value: object) -> str:
    """`value` for a plotly label: entity-escaped, so plotly shows `<a href=…>` as characters."""
    return html.escape(str(value), quote=True)


def svg_text(value: object) -> str:
    """`value` as the text of an inline SVG (a label, a tooltip's `<title>`): entity-escaped,
    each bidi control shown as its escape (a value holding U+202E cannot reorder the chart),
    each line break a space (`show_svg` passes the SVG through Markdown as one line)."""
    one_line = _LINE_BREAKS.sub(" ", without_bidi_controls(str(value)))
    return html.escape(one_line, quote=True)


def show_svg(svg: str, box_class: str) -> None:
    """Draw an inline SVG whose every text went through `svg_text`, in a `<div>` of
    `box_class`. st.html keeps HTML only (its sanitiser's profile drops SVG); Markdown passes
    an HTML block as it is: `<div>` alone on the first line opens one, read as raw HTML up to
    the next blank line (the SVG holds no line break), so no Markdown is read in its texts."""
    if "\n" in svg:
        raise ValueError("an inline SVG shown through Markdown must hold no line break")
    st.markdown(f'<div class="{box_class}">\n{svg}\n</div>', unsafe_allow_html=True)


def show_text(
    label: str | None,
    value: object,
    *,
    empty: str = "—",
    language: str | None = None,
    where: DeltaGenerator | None = None,
) -> None:
    """`label` (the page's own words, Markdown allowed) above `value` (anyone's), the value in a
    code block that reads no Markdown and wraps long lines; `language` only for text the page
    knows the shape of (say "json" for a step's result)."""
    target: Any = st if where is None else where
    if label:
        target.markdown(f"**{label}**")
    text = as_text(value)
    target.code(text if text else empty, language=language, wrap_lines=True)


_LINE_BREAK = re.compile(r"\r\n|\r|\n")
TEXT_BOX_CLASS = "scorelab-text"
"""The class of each text box `texts_block` draws (tests find the texts by it)."""
_BOX_STYLE = (
    "margin:0.25rem 0 0.75rem 0;padding:0.5rem 0.75rem;border-radius:0.5rem;"
    "background:rgba(151,166,195,0.15);white-space:pre-wrap;overflow-wrap:break-word;word-break:normal;"
    "font-family:'Source Code Pro',monospace;font-size:0.875rem;line-height:1.5"
)


def _box_text(value: object, empty: str) -> str:
    """`value` as `show_text` shows it, entity-escaped, each line break an entity: an HTML
    block of Markdown ends at a blank line, so the block's source holds none."""
    text = as_text(value) or empty
    return _LINE_BREAK.sub("&#10;", html.escape(text, quote=True))


def texts_block(
    texts: Sequence[tuple[str, object]],
    *,
    columns: int = 1,
    empty: str = "—",
    heading: str | None = None,
) -> None:
    """Several labelled texts (the page's own label, anyone's text) in one Markdown element:
    each text in a box that reads no Markdown and wraps long lines, like `show_text`'s, laid
    out `columns` to a row, under `heading` if given. One element where `show_text` makes two
    per text: a drill-down redrawn on every row click drew a dozen (bench/browser_pages.py).

    An HTML block of Markdown: `<div>` alone on the first line opens it, its source has no
    line break after (`_box_text`), so it is passed as it is to the browser, every text
    entity-escaped: no Markdown, link, icon or tag can come out of a text. A `<div>` box, not
    a `<pre>`: Streamlit's Markdown draws a `<pre>` its own way, without the box's style."""
    cells = "".join(
        f'<div style="min-width:0"><p style="margin:0"><strong>{html.escape(label)}</strong>'
        f'</p><div class="{TEXT_BOX_CLASS}" style="{_BOX_STYLE}">{_box_text(value, empty)}'
        "</div></div>"
        for label, value in texts
    )
    grid = f"display:grid;grid-template-columns:repeat({columns},minmax(0,1fr));gap:1rem"
    # `heading`: the page's own words, a bold line of their own above the texts.
    top = (
        ""
        if heading is None
        else f'<p style="margin:0 0 0.5rem 0"><strong>{html.escape(heading)}</strong></p>'
    )
    st.markdown(
        f'<div class="scorelab-texts">\n{top}<div style="{grid}">{cells}</div>\n</div>',
        unsafe_allow_html=True,
    )


def show_item_texts(item: DatasetItem, metadata_key: str | None = None) -> None:
    """A dataset item's input, output and ground truth side by side (one `texts_block`), then
    its metadata in an expander: the top of an item's drill-down, wherever it is opened.
    With `metadata_key` the expander is drawn only when open (a click on it reruns the
    fragment or page it is in; it stays open or shut for the next item)."""
    texts_block(
        [("Input", item.input), ("Output", item.output), ("Ground truth", item.ground_truth)],
        columns=3,
    )
    if not item.metadata:
        return
    if metadata_key is None:
        with st.expander("Metadata"):
            st.json(item.metadata, expanded=True)
        return
    expander = st.expander("Metadata", key=metadata_key, on_change="rerun")
    if expander.open:
        with expander:
            st.json(item.metadata, expanded=True)
