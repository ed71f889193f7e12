"""The judge's key on a form: an optional key typed for this run, and one line saying which key
the judge will get and where it goes (docs/deploy.md, Judge keys)."""

from __future__ import annotations

import streamlit as st
from pydantic import SecretStr

from core.service import ExperimentConfigError
from pages.ui.services import service
from pages.ui.text import md_text

TYPED_KEY_HELP = (
    "Optional. Sent only to this judge, held in the dashboard's memory for this run: never "
    "stored, exported or logged. Empty: the server's keys, each only where it belongs (a "
    "provider's key such as OPENAI_API_KEY goes only to that provider's own endpoint)."
)


def judge_key_input(key: str, model: str | None, api_base: str | None) -> SecretStr | None:
    """A password field for a key typed for this run (under `key`), and a caption naming the
    key the judge will get for `model` at `api_base`; returns the typed key, or None."""
    typed = st.text_input(
        "API key for this run (optional)",
        type="password",
        key=f"{key}.api_key",
        help=TYPED_KEY_HELP,
    ).strip()
    if model:
        try:
            choice = service().judge_key(model, api_base, typed=bool(typed))
        except ExperimentConfigError as error:
            st.warning(md_text(error))
        else:
            st.caption(md_text(choice.describe()))
    return SecretStr(typed) if typed else None
