"""scorelab: the dashboard's router. `streamlit run app.py` (or `make dashboard`)."""

import os
from pathlib import Path

# litellm would try to download its price table at import; the bundled one is enough.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import streamlit as st

from pages.ui import auth, nav
from pages.ui.services import after_first_page, service

# The favicon is a file of ours, served by this server: a ":material/…:" icon would be fetched
# from a public font server on every page view (the dashboard requests only its own origin).
FAVICON = Path(__file__).resolve().parent / "pages" / "ui" / "favicon.png"
st.set_page_config(page_title="scorelab", page_icon=str(FAVICON), layout="wide")
sections = nav.sections()
# Before anything else is drawn: off loopback only with the login, and behind it when set up.
auth.gate(page.url_path for pages in sections.values() for page in pages)
# The menu goes out before the service starts (seconds on a fresh server), so the first paint
# shows it, not Streamlit's file-based page list (see core/cli/serve.py STREAMLIT_MAIN).
page = st.navigation(sections)
service()  # imports the sample datasets on first start
with st.sidebar:
    st.caption("scorelab · LLM eval experiments on Mastra's scorer model")
page.run()
after_first_page()  # the warm-up and the checks that could wait (pages/ui/services.py)
