"""Shared Streamlit pieces: the cached service, session-state keys, navigation, widgets."""

import streamlit as st
from streamlit.runtime.pages_manager import PagesManager

# A folder named `pages/` beside app.py makes Streamlit's first script run of a fresh server use
# the legacy multipage mode, which runs the page file at a deep link (say /failures?...) on its
# own, without app.py's router. Whichever runs first imports this package: switch the legacy mode
# off and rerun, so that app.py and its st.navigation serve the link.
if PagesManager.uses_pages_directory:
    PagesManager.uses_pages_directory = False
    st.rerun()
