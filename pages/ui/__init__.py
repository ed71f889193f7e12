"""Shared Streamlit pieces: the cached service, session-state keys, navigation, widgets."""
