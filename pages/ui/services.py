"""The process-wide service, created once and shared by every session."""

from __future__ import annotations

import gc
import importlib
import threading
from collections.abc import Callable

import streamlit as st

from core.service import Service, get_service

WARM_MODULES = (
    "plotly.graph_objects",
    "plotly.subplots",
    "scipy.stats",
    "sklearn.metrics",
)
"""Modules the result pages import on first use (2 s on this 2-core machine: SciPy and
scikit-learn for the label agreement, plotly for the charts): imported in the background as
the server starts, so the first visit to a result page does not wait for them."""

_WARMED: list[bool] = []


def _warm_up() -> None:
    for name in WARM_MODULES:
        try:
            importlib.import_module(name)
        except ImportError:  # the page that needs it says so itself
            break
    # What the start-up made (modules, the service, Streamlit's runtime) lives as long as the
    # process: out of the garbage collector's sight, each rerun's collections walk only what
    # that rerun made (0.2 s of CPU per click became 0.02 s, bench/browser_pages.py).
    gc.freeze()


@st.cache_resource(show_spinner="Starting scorelab…")
def service() -> Service:
    """The service, with the sample datasets imported on first start (on a restart, checked
    in the background once the first page is drawn: `after_first_page`)."""
    shared = get_service()
    if shared.list_datasets():
        # A restart: the samples are in unless someone deleted one. Checking reads and parses
        # every sample file (1 s of the home page's first paint): done after it instead.
        _LATER.append(shared.ensure_sample_datasets)
    else:
        shared.ensure_sample_datasets()
    return shared


_LATER: list[Callable[[], object]] = []
"""Start-up work that waits until the first page is drawn."""


def after_first_page() -> None:
    """Start, in the background, what the start-up left for later (the sample check of a
    restart) and, once per process, the warm-up: the first page was drawn without them."""
    later = list(_LATER)
    _LATER.clear()
    if not _WARMED:  # once per process (a test makes many services)
        _WARMED.append(True)
        later.append(_warm_up)
    for work in later:
        threading.Thread(target=work, name="scorelab-start-up", daemon=True).start()
