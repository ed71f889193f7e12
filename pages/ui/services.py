"""The process-wide service, created once and shared by every session."""

from __future__ import annotations

import streamlit as st

from core.service import Service, get_service


@st.cache_resource(show_spinner="Starting scorelab…")
def service() -> Service:
    """The service, with the sample datasets imported on first start."""
    shared = get_service()
    shared.ensure_sample_datasets()
    return shared
