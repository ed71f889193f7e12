"""scorelab dashboard (placeholder until the dashboard issue lands).

It already runs a scorer from the core, so `make dashboard` shows the core working.
"""

import os

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

import streamlit as st

from core import create_scorer

st.set_page_config(page_title="scorelab", page_icon="📏", layout="wide")
st.title("scorelab")
st.write(
    "An interactive dashboard for LLM eval experiments, built on a Python port of Mastra's "
    "scorer core. The dashboard pages are coming: upload input/output/groundTruth tables, pick "
    "scorers, run experiments, inspect per-step results, failures and judge token usage, "
    "compare experiments and share reports."
)

st.subheader("Try the scorer core")
question = st.text_input("Input", "What is machine learning?")
answer = st.text_area("Output", "Machine learning is a subset of AI that learns from data.")
length_scorer = (
    create_scorer(id="answer-length", description="Share of the answer's words beyond ten")
    .preprocess(lambda ctx: {"words": len(str(ctx.run.output).split())})
    .generate_score(lambda ctx: min(ctx.results.preprocess_step_result["words"] / 10, 1.0))
    .generate_reason(
        lambda ctx: f"The answer has {ctx.results.preprocess_step_result['words']} words."
    )
)
result = length_scorer.run_sync(input=question, output=answer)
st.metric("answer-length score", f"{result.score:.2f}")
st.caption(result.reason)
st.json(result.to_dict())
