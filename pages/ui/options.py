"""Form inputs for a catalog scorer's options, shared by the playground and new experiments."""

from __future__ import annotations

import json
import re
from typing import Any

import streamlit as st

from core.records import ScorerCatalogEntry, ScorerOptionInfo


def option_inputs(
    entry: ScorerCatalogEntry, key: str, preset: dict[str, Any] | None = None
) -> tuple[dict[str, Any], list[str]]:
    """Widgets for `entry`'s options, starting from `preset` values where given (else the
    defaults); returns (options that differ from the defaults, problems)."""
    options: dict[str, Any] = {}
    problems: list[str] = []
    for option in entry.options:
        if option.code_only:  # a Python function cannot come from a form
            continue
        start = (preset or {}).get(option.name, option.default)
        value, problem = _option_input(
            option.model_copy(update={"default": start}), f"{key}.{entry.id}.{option.name}"
        )
        if problem:
            problems.append(f"{entry.name} · {option.name}: {problem}")
        elif value is not None and value != option.default:  # the catalog's own default
            options[option.name] = value
        if option.required and value in (None, "", []) and not problem:
            problems.append(f"{entry.name} · {option.name} is required")
    return options, problems


def _option_input(option: ScorerOptionInfo, key: str) -> tuple[Any, str | None]:
    label = option.name + (" *" if option.required else "")
    help_text = option.description
    if option.choices:
        index = option.choices.index(option.default) if option.default in option.choices else 0
        return st.selectbox(label, option.choices, index=index, key=key, help=help_text), None
    if option.type == "bool":
        return st.checkbox(label, value=bool(option.default), key=key, help=help_text), None
    if option.type in ("float", "int"):
        return _number(option, label, key, help_text)
    if option.type == "list[str]":
        text = st.text_area(label, key=key, help=help_text + " One per line.")
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        return (lines or None), None
    if option.type.startswith(("dict", "list")):
        return _json(option, label, key, help_text)
    text = st.text_input(label, value=option.default or "", key=key, help=help_text)
    if option.type == "regex" and text:
        try:
            re.compile(text)
        except re.error as error:
            return None, f"not a valid regular expression ({error})"
    return (text or None), None


def _number(option: ScorerOptionInfo, label: str, key: str, help_text: str) -> tuple[Any, None]:
    if option.type == "int":
        default = int(option.default) if option.default is not None else 0
        return st.number_input(label, value=default, step=1, key=key, help=help_text), None
    default = float(option.default) if option.default is not None else 0.0
    return st.number_input(label, value=default, step=0.05, key=key, help=help_text), None


def _json(option: ScorerOptionInfo, label: str, key: str, help_text: str) -> tuple[Any, str | None]:
    text = st.text_area(label, key=key, help=help_text + " As JSON.")
    if not text.strip():
        return None, None
    try:
        return json.loads(text), None
    except json.JSONDecodeError as error:
        return None, f"not valid JSON (line {error.lineno}, column {error.colno}: {error.msg})"
