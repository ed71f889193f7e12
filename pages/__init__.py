"""The dashboard's pages (run by `st.navigation` from app.py). A package only so that the
import contracts can check that pages talk to the core through `core.service`."""
