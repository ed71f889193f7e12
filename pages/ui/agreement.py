"""The label agreement's verdict on the experiment page: one sentence saying which scorers
separate the labels (their AUC interval above 0.5), which are no better than chance (it
contains 0.5) and which rank wrong answers higher (below), shown above the table, whose rows
are ranked best first with a verdict badge (core/reporting/agreement.py)."""

from __future__ import annotations

import streamlit as st

from core.service.views import LabelAgreement, agreement_verdict, scorer_verdict
from pages.ui.text import md_text


def render_verdict(found: LabelAgreement) -> str:
    """The verdict sentence: a success box when a scorer separates the labels, a warning when
    none does (scorer ids escaped, never read as markdown); returns the sentence."""
    sentence = agreement_verdict(found)
    separating = any(scorer_verdict(entry) == "separates" for entry in found.scorers)
    if separating:
        st.success(md_text(sentence), icon=":material/verified:")
    else:
        st.warning(md_text(sentence), icon=":material/help:")
    return sentence
