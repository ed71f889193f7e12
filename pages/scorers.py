"""Scorers: the catalog (description, steps and their kind, judge or not, options) and a
playground to run one scorer on one input/output and see the full result.

A module of functions: app.py's router runs the file as `__main__`, which calls `main()`;
imported (`pages.scorers`), it draws nothing. What the user types, and what the scorer says
back (reason, errors), goes through pages/ui/text.py."""

from __future__ import annotations

import pandas as pd
import streamlit as st
from pydantic import SecretStr

from core.errors import ScorerRunError
from core.records import ScorerCatalogEntry, ScorerSpec
from core.service import ExperimentConfigError
from pages.ui import fmt
from pages.ui.judge_key import judge_key_input
from pages.ui.options import option_inputs
from pages.ui.services import service
from pages.ui.text import as_text, md_text, plain_dataframe, plain_text, show_text

PLAYGROUND_KEY = "scorers.playground"


def render_entry(entry: ScorerCatalogEntry) -> None:
    """One catalog entry in an expander (the catalog's own words, Markdown allowed)."""
    judge = "calls an LLM judge" if entry.calls_judge else "code only, no judge"
    with st.expander(f"**{entry.name}** · `{entry.id}` · {judge}"):
        st.write(entry.description)
        st.caption(f"Compares: {entry.compares}")
        if entry.steps:
            st.markdown(
                "**Steps:** "
                + " → ".join(
                    f"`{s.name}` ({'judge' if s.kind == 'prompt' else 'code'})" for s in entry.steps
                )
            )
        if entry.options:
            st.markdown("**Options**")
            plain_dataframe(
                pd.DataFrame(
                    {
                        "option": [o.name for o in entry.options],
                        "type": [o.type for o in entry.options],
                        "default": [as_text(o.default) for o in entry.options],
                        "choices": [", ".join(o.choices or []) for o in entry.options],
                        "required": [o.required for o in entry.options],
                        "what it does": [o.description for o in entry.options],
                    }
                ),
                hide_index=True,
            )


def render_catalog(catalog: list[ScorerCatalogEntry]) -> None:
    """The catalog in two tabs: code scorers and LLM-judge scorers."""
    st.subheader("Catalog")
    code, judged = st.tabs(["Code scorers", "LLM-judge scorers"])
    with code:
        for entry in (e for e in catalog if not e.calls_judge):
            render_entry(entry)
    with judged:
        for entry in (e for e in catalog if e.calls_judge):
            render_entry(entry)


def render_playground(catalog: list[ScorerCatalogEntry]) -> None:
    """A scorer, its options, an input, an output and a ground truth; Run."""
    st.subheader("Playground")
    by_id = {entry.id: entry for entry in catalog}
    chosen = st.selectbox(
        "Scorer",
        list(by_id),
        format_func=lambda i: plain_text(by_id[i].name),
        key=f"{PLAYGROUND_KEY}.scorer",
    )
    entry = by_id[chosen]
    options, problems = option_inputs(entry, PLAYGROUND_KEY)
    judge_model = api_base = typed_key = None
    if entry.calls_judge:
        left, right = st.columns(2)
        judge_model = left.text_input(
            "Judge model",
            placeholder="openai/gpt-4o-mini",
            key=f"{PLAYGROUND_KEY}.model",
            help="Any litellm model string; the API key comes from the environment or is typed "
            "below.",
        )
        api_base = right.text_input(
            "API base (optional)",
            key=f"{PLAYGROUND_KEY}.api_base",
            help="An OpenAI-compatible server, e.g. http://localhost:8000/v1. It gets only a "
            "key meant for it: SCORELAB_JUDGE_API_KEY or the one typed below.",
        )
        typed_key = judge_key_input(
            PLAYGROUND_KEY, judge_model.strip() or None, api_base.strip() or None
        )
    question = st.text_area("Input", "What is machine learning?", key=f"{PLAYGROUND_KEY}.input")
    answer = st.text_area(
        "Output",
        "Machine learning lets computers learn patterns from data.",
        key=f"{PLAYGROUND_KEY}.output",
    )
    truth = st.text_area("Ground truth (optional)", key=f"{PLAYGROUND_KEY}.truth")
    for problem in problems:
        st.warning(md_text(problem))
    if st.button("Run", type="primary", disabled=bool(problems)):
        run_playground(entry, options, question, answer, truth, judge_model, api_base, typed_key)


def run_playground(
    entry: ScorerCatalogEntry,
    options: dict,
    question: str,
    answer: str,
    truth: str,
    judge_model: str | None,
    api_base: str | None,
    typed_key: SecretStr | None = None,
) -> None:
    """Run the scorer once and show its score, reason and whole result (or its failure)."""
    try:
        with st.spinner("Scoring…"):
            result = service().try_scorer(
                ScorerSpec(scorer_id=entry.id, options=options),
                input=question,
                output=answer,
                ground_truth=truth or None,
                judge_model=judge_model or None,
                api_base=api_base or None,
                api_key=typed_key,
            )
    except ExperimentConfigError as error:
        st.error(md_text(error))
        return
    except ScorerRunError as error:
        st.error(f"{md_text(error)} (step {md_text(error.failed_step)})")
        if error.result is not None:
            st.json(error.result.to_dict(), expanded=False)
        return
    score_column, reason_column = st.columns([1, 3])
    score_column.metric("Score", fmt.score(result.score))
    show_text("Reason", result.reason, where=reason_column)
    st.json(result.to_dict(), expanded=False)


def main() -> None:
    """The page."""
    st.title("Scorers")
    catalog = service().scorer_catalog()
    render_catalog(catalog)
    st.divider()
    render_playground(catalog)


if __name__ == "__main__":  # run by the router (app.py), not on import
    main()
