"""New experiment: dataset, scorers with options, judge model, the judge cache, a spend cap,
the judge rate limit, concurrency, the judge calls it will make and their estimated cost;
start. The run happens in the service's background worker; this page (and every other) only
shows its progress, on this page right under the Start button.

No duplicate runs: the Start button's click is marked in its callback (before the page is
drawn again), so the button is drawn disabled ("Starting…") until the run has started and shows
under it; the start checks, under a lock shared by every session of this server, that no
running experiment has the same configuration (same dataset, scorers and options, judge model,
API base and judge settings: `same_run`); when one has, nothing starts without a confirmation.
A second click while a run starts thus never doubles the judge spend.

A module of functions: app.py's router runs the file as `__main__`, which calls `main()`;
imported (`pages.new_experiment`), it draws nothing. Dataset names are option labels (plain
text); problems and errors go through pages/ui/text.py `md_text`."""

from __future__ import annotations

import threading

import streamlit as st
from pydantic import SecretStr

from core.records import (
    CostEstimate,
    DatasetInfo,
    ExperimentConfig,
    ExperimentInfo,
    RateLimit,
    ScorerCatalogEntry,
    ScorerSpec,
)
from core.service import ExperimentConfigError, NotFoundError
from pages.ui import fmt, nav
from pages.ui.judge_key import judge_key_input
from pages.ui.options import option_inputs
from pages.ui.services import service
from pages.ui.text import md_text, plain_text
from pages.ui.widgets import running_experiments

KEY = "new_experiment"
DEFAULT_SCORERS = (
    "keyword-coverage-scorer",
    "completeness-scorer",
    "content-similarity-scorer",
    "textual-difference-scorer",
    "tone-scorer",
)
LAST_STARTED = f"{KEY}.last_started"
STARTING = f"{KEY}.starting"
"""Session key: set by the Start button's click, cleared once the run shows (or failed)."""
CONFIRM = f"{KEY}.confirm"
"""Session key: the configuration (JSON) whose start waits for a confirmation, and the id of
the running experiment it repeats."""
ERROR = f"{KEY}.error"
"""Session key: why the last start was refused (shown under the button)."""


def pick_dataset(datasets: list[DatasetInfo]) -> DatasetInfo | None:
    """A picker over the stored datasets (None, with a link, when there is none)."""
    if not datasets:
        st.info("No dataset yet: import one on the *Datasets* page.")
        st.page_link(nav.DATASETS, label="Datasets", icon=":material/table:")
        return None
    by_id = {d.id: d for d in datasets}
    chosen = st.selectbox(
        "Dataset",
        list(by_id),
        key=f"{KEY}.dataset",
        format_func=lambda i: plain_text(f"{by_id[i].name} · {by_id[i].item_count:,} items"),
    )
    return by_id[chosen]


def pick_scorers(
    catalog: list[ScorerCatalogEntry], dataset: DatasetInfo
) -> tuple[list[ScorerSpec], list[str], bool]:
    """Scorer choice and options; returns (specs, problems, whether a judge is needed).

    When the dataset maps a ground truth, the scorers that can compare the output with it
    (a `reference` option) start on it: scoring against the input would ignore the answers
    the user uploaded.
    """
    has_truth = dataset.mapping.ground_truth is not None
    preset = {"reference": "ground_truth"} if has_truth else {}
    by_id = {entry.id: entry for entry in catalog}
    chosen = st.multiselect(
        "Scorers",
        list(by_id),
        default=[i for i in DEFAULT_SCORERS if i in by_id],
        key=f"{KEY}.scorers",
        format_func=lambda i: plain_text(
            by_id[i].name + (" · judge" if by_id[i].calls_judge else "")
        ),
    )
    specs: list[ScorerSpec] = []
    problems: list[str] = []
    for scorer_id in chosen:
        entry = by_id[scorer_id]
        options: dict = {}
        if any(not option.code_only for option in entry.options):
            with st.expander(f"Options of {md_text(entry.name)}"):
                # A key per preset: another dataset's preset must not stick to the widget.
                options, found = option_inputs(entry, f"{KEY}.{has_truth:d}", preset)
                problems.extend(found)
        specs.append(ScorerSpec(scorer_id=scorer_id, options=options))
    if specs:
        st.caption(
            "Compares: "
            + " · ".join(
                f"{md_text(by_id[s.scorer_id].name)}: {md_text(service().comparison(s))}"
                for s in specs
            )
        )
    return specs, problems, any(by_id[s].calls_judge for s in chosen)


def judge_settings() -> tuple[str | None, str | None, dict, SecretStr | None]:
    st.markdown("**Judge** (for the LLM-judge scorers)")
    model_column, base_column = st.columns(2)
    model = model_column.text_input(
        "Judge model",
        placeholder="openai/gpt-4o-mini",
        key=f"{KEY}.model",
        help="Any litellm model string. API keys come from the environment "
        "(OPENAI_API_KEY, ANTHROPIC_API_KEY, ...) or are typed below; they are never stored.",
    )
    api_base = base_column.text_input(
        "API base (optional)",
        key=f"{KEY}.api_base",
        help="An OpenAI-compatible server: vLLM, Ollama, a proxy. It gets only a key meant "
        "for it: SCORELAB_JUDGE_API_KEY or the one typed below, never a provider's key "
        "(unless listed in SCORELAB_TRUSTED_API_BASES).",
    )
    typed_key = judge_key_input(KEY, model.strip() or None, api_base.strip() or None)
    temperature, retries, timeout = st.columns(3)
    settings = {
        "temperature": temperature.number_input(
            "Temperature", 0.0, 2.0, 0.0, 0.1, key=f"{KEY}.temperature"
        ),
        "num_retries": retries.number_input(
            "Retries (rate limits, errors)", 0, 10, 2, key=f"{KEY}.retries"
        ),
        "timeout": timeout.number_input("Timeout (s)", 5, 600, 60, key=f"{KEY}.timeout"),
    }
    return model.strip() or None, api_base.strip() or None, settings, typed_key


def cost_controls() -> tuple[bool, float | None]:
    """The judge cache switch and the spend cap (0: none)."""
    cache_column, cap_column = st.columns(2)
    cache = cache_column.toggle(
        "Judge cache",
        key=f"{KEY}.cache",
        help="Answer a judge request identical to one answered before (same model, prompt, "
        "schema and settings) from the cache instead of the provider: a re-run of unchanged "
        "items costs nothing. Off: the cache is neither read nor written.",
    )
    cap = cap_column.number_input(
        "Spend cap (USD, 0 = none)",
        min_value=0.0,
        value=0.0,
        step=0.5,
        format="%.2f",
        key=f"{KEY}.max_cost",
        help="No judge call starts once the spend so far plus the calls in flight would pass "
        "it (litellm's prices); the experiment then stops as budget_reached, every finished "
        "result kept. Needs a judge model litellm has a price for.",
    )
    return cache, (float(cap) if cap > 0 else None)


def rate_limit_controls() -> RateLimit | None:
    """The judge rate limit: requests and tokens per minute (0: the provider's default)."""
    rpm_column, tpm_column = st.columns(2)
    rpm = rpm_column.number_input(
        "Judge requests per minute (0 = default)",
        min_value=0,
        value=0,
        step=10,
        key=f"{KEY}.rpm",
        help="At most this many judge requests per minute (retries included) from this "
        "server to the judge model, shared with other experiments on it. 0: the provider's "
        "conservative default (openai 500, anthropic 50, ...; none for a model at another "
        "API base). A 429 from the provider pauses every call to the model.",
    )
    tpm = tpm_column.number_input(
        "Judge tokens per minute (0 = default)",
        min_value=0,
        value=0,
        step=1000,
        key=f"{KEY}.tpm",
        help="At most this many tokens (prompt and answer) per minute to the judge model. "
        "0: the provider's conservative default (openai 30,000, anthropic 20,000, ...).",
    )
    if not rpm and not tpm:
        return None
    return RateLimit(requests_per_minute=int(rpm) or None, tokens_per_minute=int(tpm) or None)


@st.cache_data(max_entries=32, ttl=600, show_spinner="Estimating the judge cost…")
def _estimate(config_json: str) -> CostEstimate:
    return service().estimate_cost(ExperimentConfig.model_validate_json(config_json))


def render_estimate(config: ExperimentConfig) -> None:
    """The estimated judge cost of `config` (from a sample of its items; nothing is sent)."""
    try:
        estimate = _estimate(config.model_dump_json())
    except (ExperimentConfigError, NotFoundError):
        return  # the problem is shown with the others when Start is pressed
    if not estimate.judge_calls:
        return
    sample = f"{estimate.sample_size:,} sampled item{'s' if estimate.sample_size != 1 else ''}"
    tokens = (
        f"{fmt.tokens(estimate.input_tokens_typical)} tokens in "
        f"({fmt.tokens(estimate.input_tokens_low)}–{fmt.tokens(estimate.input_tokens_high)}), "
        f"{fmt.tokens(estimate.output_tokens_typical)} out "
        f"({fmt.tokens(estimate.output_tokens_low)}–{fmt.tokens(estimate.output_tokens_high)})"
    )
    if estimate.priced:
        st.info(
            f"**Estimated judge cost: {fmt.money(estimate.cost_usd_low)} – "
            f"{fmt.money(estimate.cost_usd_high)}** (typical "
            f"{fmt.money(estimate.cost_usd_typical)}) · {estimate.judge_calls:,} calls · "
            f"{tokens}. An estimate from the real prompts of {sample} and litellm's price "
            "table, not a bill; answers from the judge cache cost nothing.",
            icon=":material/payments:",
        )
    else:
        st.info(
            f"{estimate.judge_calls:,} judge calls · {tokens} (an estimate from {sample}). "
            f"litellm's price table has no price for {md_text(estimate.judge_model or '')}: "
            "no dollar estimate, and no spend cap.",
            icon=":material/payments:",
        )


def ray_address() -> str | None:
    """Where the scorers run: this process (empty), or a Ray cluster (docs/scale.md)."""
    address = st.text_input(
        "Run on a Ray cluster (optional)",
        key=f"{KEY}.ray_address",
        placeholder="empty: SCORELAB_RAY_ADDRESS, else this process",
        help="auto, ray://host:10001, host:port (the head's GCS port) or local:N (N worker "
        "processes started and stopped with the run). This process stays the driver: results "
        "are stored and failures kept here. See docs/scale.md.",
    )
    return address.strip() or None


@st.cache_resource(show_spinner=False)
def _start_lock() -> threading.Lock:
    """One lock for every session of this server: the check for a running twin and the start
    happen as one step."""
    return threading.Lock()


def same_run(config: ExperimentConfig, info: ExperimentInfo) -> bool:
    """Whether `config` would run what `info` runs: the same dataset, scorers with their
    options (in order), judge model, API base and judge settings (name, concurrency, cache and
    caps aside: they do not change the judge calls made)."""
    return (
        config.dataset_id == info.dataset_id
        and [(s.scorer_id, s.options) for s in config.scorers]
        == [(s.scorer_id, s.options) for s in info.scorers]
        and config.judge_model == info.judge_model
        and config.api_base == info.api_base
        and config.judge_settings == info.judge_settings
    )


def running_twin(config: ExperimentConfig) -> ExperimentInfo | None:
    """The running experiment `config` repeats, if any (`same_run`)."""
    shared = service()
    for experiment_id in shared.running_experiments():
        try:
            info = shared.get_experiment(experiment_id)
        except NotFoundError:  # deleted meanwhile
            continue
        if same_run(config, info):
            return info
    return None


def start(
    config: ExperimentConfig,
    api_key: SecretStr | None = None,
    ray_at: str | None = None,
    *,
    confirmed: bool = False,
) -> str | None:
    """Start the experiment in the background with the key typed for it, if any, unless it
    repeats a running one and is not `confirmed` (then a confirmation is asked for, and
    nothing starts); returns its id (None: not started, the reason kept to be shown)."""
    st.session_state.pop(ERROR, None)
    st.session_state.pop(CONFIRM, None)
    with _start_lock():
        twin = None if confirmed else running_twin(config)
        if twin is not None:
            st.session_state[CONFIRM] = (config.model_dump_json(), twin.id)
            return None
        try:
            experiment_id = service().start_experiment(config, api_key=api_key, ray_address=ray_at)
        except (ExperimentConfigError, NotFoundError) as error:
            st.session_state[ERROR] = str(error)
            return None
    st.session_state[LAST_STARTED] = experiment_id
    st.query_params[nav.EXPERIMENT_PARAM] = experiment_id
    return experiment_id


def _clicked(confirmed: bool = False) -> None:
    st.session_state[STARTING] = "confirmed" if confirmed else "clicked"


def pending_twin(config: ExperimentConfig) -> ExperimentInfo | None:
    """The running experiment the last click repeats, while its question is open: dropped when
    the form changed since, or the twin stopped running (a click then asks again)."""
    waiting = st.session_state.get(CONFIRM)
    if not waiting:
        return None
    config_json, twin_id = waiting
    shared = service()
    if config.model_dump_json() == config_json and twin_id in shared.running_experiments():
        try:
            return shared.get_experiment(twin_id)
        except NotFoundError:
            pass
    st.session_state.pop(CONFIRM, None)
    return None


def render_confirmation(twin: ExperimentInfo) -> None:
    """The question when the last click repeats the running `twin`: "Start anyway" or
    "Don't start"."""
    st.warning(
        f"**{md_text(twin.name)}** is running with this same configuration (dataset, scorers, "
        f"options and judge): {twin.counts.done:,} of {twin.counts.total:,} runs done. "
        "Starting another runs every scorer again and pays for every judge call again.",
        icon=":material/content_copy:",
    )
    anyway, keep = st.columns(2)
    anyway.button(
        "Start anyway",
        key=f"{KEY}.start_anyway",
        on_click=_clicked,
        args=(True,),
        width="stretch",
    )
    keep.button(
        "Don't start",
        key=f"{KEY}.dont_start",
        on_click=st.session_state.pop,
        args=(CONFIRM, None),
        type="primary",
        width="stretch",
    )


def render_start(
    config: ExperimentConfig,
    problems: list[str],
    api_key: SecretStr | None,
    ray_at: str | None,
) -> None:
    """The Start button, drawn disabled ("Starting…") from its click until the run has
    started (then the page is drawn again with its progress), and while a confirmation is
    open; under it, the refusal of the last start, the question, and the progress of the
    running experiments."""
    clicked = st.session_state.pop(STARTING, None)
    twin = None if clicked else pending_twin(config)
    st.button(
        "Starting…" if clicked else "Start experiment",
        key=f"{KEY}.start",
        type="primary",
        disabled=bool(problems) or bool(clicked) or twin is not None,
        on_click=_clicked,
    )
    if clicked and not problems:
        start(config, api_key, ray_at, confirmed=clicked == "confirmed")
        st.rerun()  # the button free again; under it the run's progress, a refusal or a question
    refused = st.session_state.pop(ERROR, None)
    if refused:
        st.error(md_text(refused))
    if twin is not None:
        render_confirmation(twin)
    running_experiments(service())
    render_last_started()


def render_last_started() -> None:
    """When the experiment started here last has finished: its counts and a link."""
    experiment_id = st.session_state.get(LAST_STARTED) or st.query_params.get(nav.EXPERIMENT_PARAM)
    if not experiment_id:
        return
    try:
        progress = service().progress(experiment_id)
    except NotFoundError:
        return
    if progress.finished:
        st.success(
            f"Experiment finished ({progress.status}): {progress.counts.done:,} runs, "
            f"{progress.counts.failed:,} failed."
        )
        if st.button("Open the results", icon=":material/search:"):
            nav.open_experiment(nav.EXPERIMENT, experiment_id)


def main() -> None:
    """The page."""
    st.title("New experiment")
    shared = service()
    dataset = pick_dataset(shared.list_datasets())
    if dataset is None:
        return
    specs, problems, needs_judge = pick_scorers(shared.scorer_catalog(), dataset)
    problems.extend(shared.data_problems(dataset, specs))
    model = api_base = typed_key = None
    settings: dict = {}
    cache, max_cost, rate_limit = False, None, None
    if needs_judge:
        model, api_base, settings, typed_key = judge_settings()
        cache, max_cost = cost_controls()
        rate_limit = rate_limit_controls()
        if not model:
            problems.append("The chosen LLM-judge scorers need a judge model.")
    concurrency = st.slider("Concurrency (scorer runs at once)", 1, 64, 8, key=f"{KEY}.concurrency")
    name = st.text_input("Name (optional)", key=f"{KEY}.name")
    ray_at = ray_address()
    if specs:
        calls = shared.estimate_judge_calls(dataset.id, specs)
        runs = dataset.item_count * len(specs)
        st.caption(
            f"{runs:,} scorer runs · at least {calls:,} judge calls (the structured-output "
            "fallback and retries can add more)"
            if calls
            else f"{runs:,} scorer runs · no judge calls (code scorers only)"
        )
    else:
        problems.append("Choose at least one scorer.")
    config = ExperimentConfig(
        name=name or None,
        dataset_id=dataset.id,
        scorers=specs,
        judge_model=model,
        api_base=api_base,
        concurrency=concurrency,
        judge_settings=settings,
        cache=cache,
        max_cost=max_cost,
        rate_limit=rate_limit,
    )
    if specs and model and not problems:
        render_estimate(config)
    for problem in problems:
        st.warning(md_text(problem))
    render_start(config, problems, typed_key, ray_at)


if __name__ == "__main__":  # run by the router (app.py), not on import
    main()
