"""The Streamlit settings of .streamlit/config.toml, seen from the browser: an uncaught error
shows a generic message and no traceback (the server's log has it), and file uploads work with
XSRF protection on. Small scripts of their own, served from the project's folder so that its
config.toml applies."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ._streamlit import TIMEOUT, open_page, rerun
from .conftest import serve_dashboard

SECRET = "sk-test-0123456789abcdef"

RAISES = f'''
import streamlit as st

st.title("A page that fails")
api_key = "{SECRET}"
raise RuntimeError(f"the judge refused the key {{api_key}}")
'''

UPLOADS = """
import streamlit as st

upload = st.file_uploader("A dataset")
if upload is not None:
    st.write(f"received {len(upload.getvalue())} bytes")
"""


def test_an_error_shows_no_details_in_the_browser_and_all_of_them_in_the_log(
    page: Any, tmp_path: Path
) -> None:
    script = tmp_path / "raises.py"
    script.write_text(RAISES)
    with serve_dashboard(tmp_path, script=script) as url:
        open_page(page, url)
        page.get_by_text("This app has encountered an error").wait_for(timeout=TIMEOUT)
        shown = page.locator("body").inner_text()
    assert "A page that fails" in shown
    for detail in (SECRET, "RuntimeError", "Traceback", "raises.py", "line 6"):
        assert detail not in shown
    log = (tmp_path / "streamlit.log").read_text()
    assert "Uncaught app execution" in log
    assert "Traceback (most recent call last)" in log
    assert f"RuntimeError: the judge refused the key {SECRET}" in log


def test_uploads_work_with_xsrf_protection_on(page: Any, tmp_path: Path) -> None:
    script = tmp_path / "uploads.py"
    script.write_text(UPLOADS)
    data = tmp_path / "items.csv"
    data.write_text("input,output\n" + "question,answer\n" * 1000)
    with serve_dashboard(tmp_path, script=script) as url:
        open_page(page, url)
        chooser = page.locator('[data-testid="stFileUploader"] input[type="file"]')
        rerun(page, lambda: chooser.set_input_files(data))
        page.get_by_text(f"received {data.stat().st_size} bytes").wait_for(timeout=TIMEOUT)
        cookies = {cookie["name"] for cookie in page.context.cookies()}
    assert "_streamlit_xsrf" in cookies
