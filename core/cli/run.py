"""`scorelab run DATA --scorer ID ...`: import a file, run an experiment on it, follow it to its
end, write the exports, print the summary; the exit code says whether it passed."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from core.cli import _values
from core.cli._dataset_file import check_label_column, import_file
from core.cli._errors import CliError
from core.cli._finish import check_output_paths, finish
from core.cli._follow import Interrupts, follow_to_the_end, retry_failures
from core.cli._options import (
    HelpFormatter,
    add_judge_key_options,
    add_max_cost_option,
    add_progress_option,
    add_rate_limit_options,
    add_ray_option,
    add_report_options,
)
from core.cli._progress import bars_wanted
from core.cli._summary import check_threshold_ids
from core.cli._text import printable
from core.records import ExperimentConfig

if TYPE_CHECKING:
    from core.cli._options import Commands
    from core.records import CostEstimate, DatasetInfo, ScorerSpec
    from core.service import Service

__all__ = ["register"]

JUDGE_KEY_HELP = """\
judge keys (docs/deploy.md, Judge keys), the first that applies:
  --api-key-env NAME / --api-key-stdin   that key, wherever the judge is (never stored)
  SCORELAB_JUDGE_API_KEY set             that key, to the --api-base given (or the provider)
  no --api-base, the provider's own one, the provider's key from the environment
  or one listed in                       (OPENAI_API_KEY, ANTHROPIC_API_KEY, ...)
  SCORELAB_TRUSTED_API_BASES
  any other --api-base                   none: the server gets a placeholder key
SCORELAB_TRUSTED_API_BASES holds comma-separated origins, scheme://host[:port].
The key chosen is printed before the run starts, e.g.
  Judge key: OPENAI_API_KEY (the provider's own endpoint)
  Judge key: SCORELAB_JUDGE_API_KEY for http://127.0.0.1:8000
  Judge key: none (the server gets a placeholder)
Every key the process holds is masked (***) in messages, results and exports."""


def register(commands: Commands) -> None:
    """Add `run` and its options."""
    run = commands.add_parser(
        "run",
        help="score a dataset file with chosen scorers",
        epilog=JUDGE_KEY_HELP,
        formatter_class=HelpFormatter,
    )
    run.add_argument("data", metavar="DATA", help="CSV, TSV, JSONL, JSON, XLSX or Parquet file")
    run.add_argument(
        "--scorer",
        action="append",
        required=True,
        metavar="ID",
        help="scorer id from `scorelab scorers`; options as ID='{\"key\": value}' (repeatable)",
    )
    _add_column_options(run)
    _add_judge_options(run)
    run.add_argument(
        "--concurrency",
        type=_values.concurrency,
        default=8,
        metavar="N",
        help="scorer runs at once, 1 to {max_concurrency} (default 8)",
    )
    run.add_argument("--name", help="experiment name")
    add_ray_option(run)
    _add_spend_options(run)
    add_rate_limit_options(run)
    add_report_options(run)
    add_progress_option(run)
    run.set_defaults(handler=_run)


def _add_column_options(run: argparse.ArgumentParser) -> None:
    for role, what in (
        ("input", "the input"),
        ("output", "the output"),
        ("ground-truth", "the ground truth"),
        ("id", "the item ids"),
    ):
        run.add_argument(
            f"--{role}-column",
            metavar="COLUMN",
            help=f"column holding {what} (default: detected from the column names)",
        )


def _add_judge_options(run: argparse.ArgumentParser) -> None:
    run.add_argument("--judge-model", help="litellm model string for LLM-judge scorers")
    run.add_argument(
        "--api-base",
        help="base URL of an OpenAI-compatible judge server (no user:password in it); it gets "
        "only a key meant for it (see 'judge keys' below)",
    )
    add_judge_key_options(run)
    run.add_argument(
        "--judge-setting",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="judge call setting, e.g. temperature=0 or num_retries=4 (repeatable; allowed: "
        "temperature, top_p, max_tokens, max_completion_tokens, timeout, num_retries, "
        "max_retries, seed, stop, presence_penalty, frequency_penalty, reasoning_effort)",
    )


def _add_spend_options(run: argparse.ArgumentParser) -> None:
    run.add_argument(
        "--cache",
        action="store_true",
        help="answer a judge request identical to an earlier one from the judge cache (no "
        "request, no cost) and keep new answers there; the cache is SCORELAB_JUDGE_CACHE "
        "(a folder or redis:// URL), else judge-cache.sqlite3 in the data folder",
    )
    add_max_cost_option(
        run,
        help="stop starting judge calls before the judge spend (litellm's prices) passes USD; "
        "the run then ends budget_reached (exit 1) with its finished results written, and "
        "`scorelab resume ID --max-cost HIGHER` runs the rest (the judge model needs a price)",
    )
    run.add_argument(
        "--retry-failed",
        type=_values.retry_count,
        default=0,
        metavar="N",
        help="once the run has ended (not cancelled or stopped by --max-cost), run its failed "
        "runs again, up to N rounds (fewer when none is left); the summary and exit code "
        "count the final outcome",
    )
    run.add_argument(
        "--dry-run",
        action="store_true",
        help="print the judge cost estimate (judge calls, tokens and USD, from the prompts of "
        "the first 20 items; no judge is called) and exit 0 without running anything; the "
        "file is still imported as a dataset, as a run imports it",
    )


def _check_ray_address(address: str | None) -> None:
    from core.service import ExperimentConfigError
    from core.service.terminal import check_ray_address

    try:
        check_ray_address(address)
    except ExperimentConfigError as error:
        raise CliError(str(error)) from None


def _run(arguments: argparse.Namespace) -> int:
    from core.service import ExperimentConfigError, Service
    from core.service.terminal import release_unused_memory

    specs = [_values.scorer_spec(text) for text in arguments.scorer]
    thresholds = [_values.threshold(text) for text in arguments.threshold]
    settings = dict(_values.judge_setting(text) for text in arguments.judge_setting)
    typed_key = None
    if not arguments.dry_run:  # nothing is sent: no key is asked for
        typed_key = _values.typed_key(
            key_env=arguments.api_key_env,
            key_stdin=arguments.api_key_stdin,
            judge_model=arguments.judge_model,
        )
    check_output_paths(arguments)
    show = bars_wanted(arguments.no_progress)
    if not arguments.dry_run:  # a refused Ray address: nothing imported, nothing stored
        _check_ray_address(arguments.ray_address)
    service = Service(arguments.database_url)
    dataset = import_file(arguments, service, show=show)
    release_unused_memory()  # the parsed file is gone: the runs need not stack on its memory
    if arguments.label_column is not None:
        check_label_column(arguments, dataset, service.dataset_items(dataset.id))
    config = _config(arguments, dataset.id, specs, settings)
    if arguments.dry_run:
        return _dry_run(service, config, dataset)
    with Interrupts() as interrupts:
        try:
            if arguments.judge_model:
                key = service.judge_key(
                    arguments.judge_model, arguments.api_base, typed=typed_key is not None
                )
                print(key.describe(), flush=True)
            experiment_id = service.start_experiment(
                config, api_key=typed_key, ray_address=arguments.ray_address
            )
        except ExperimentConfigError as error:
            raise CliError(str(error)) from None
        progress = follow_to_the_end(
            service,
            experiment_id,
            interrupts,
            check=lambda: check_threshold_ids(
                thresholds, service.get_experiment(experiment_id).scorer_ids
            ),
            show=show,
        )
        progress = retry_failures(
            service,
            experiment_id,
            progress,
            interrupts,
            times=arguments.retry_failed,
            api_key=typed_key,
            show=show,
        )
        return finish(
            arguments,
            service,
            experiment_id,
            progress,
            thresholds,
            interrupts,
            cap=arguments.max_cost,
        )


def _config(
    arguments: argparse.Namespace,
    dataset_id: str,
    specs: list[ScorerSpec],
    settings: dict[str, object],
) -> ExperimentConfig:
    return ExperimentConfig(
        name=arguments.name,
        dataset_id=dataset_id,
        scorers=specs,
        judge_model=arguments.judge_model,
        api_base=arguments.api_base,
        concurrency=arguments.concurrency,
        judge_settings=settings,
        cache=arguments.cache,
        max_cost=arguments.max_cost,
        rate_limit=_values.rate_limit(arguments.rpm, arguments.tpm),
    )


def _dry_run(service: Service, config: ExperimentConfig, dataset: DatasetInfo) -> int:
    """--dry-run: the estimate, and nothing started."""
    from core.service import ExperimentConfigError

    try:
        estimate = service.estimate_cost(config)
    except ExperimentConfigError as error:
        raise CliError(str(error)) from None
    _print_estimate(estimate, dataset, config.max_cost)
    return 0


def _print_estimate(estimate: CostEstimate, dataset: DatasetInfo, cap: float | None) -> None:
    """The estimate on stdout, labelled as one; then what was (not) done."""
    model = printable(estimate.judge_model or "no judge model")
    print(
        f"Cost estimate for {model} (an ESTIMATE from the prompts of {estimate.sample_size} "
        f"of {estimate.items} items, not a bill):"
    )
    if not estimate.judge_calls:
        print("  no judge calls: the chosen scorers call no judge, nothing to pay")
    else:
        print(f"  judge calls:   {estimate.judge_calls:,} at least (retries can add more)")
        print(
            f"  input tokens:  low {estimate.input_tokens_low:,}, typical "
            f"{estimate.input_tokens_typical:,}, high {estimate.input_tokens_high:,}"
        )
        print(
            f"  output tokens: low {estimate.output_tokens_low:,}, typical "
            f"{estimate.output_tokens_typical:,}, high {estimate.output_tokens_high:,}"
        )
        print(f"  cost (USD):    {_dollars(estimate)}")
    if cap is not None and estimate.cost_usd_high is not None:
        within = "within it" if estimate.cost_usd_high <= cap else "above it: it may stop there"
        print(f"  spend cap:     ${cap:,.4f} (the high estimate is {within})")
    elif cap is not None and estimate.judge_model and not estimate.priced:
        print(
            f"  spend cap:     ${cap:,.4f} cannot bound a model without a price: a run is refused"
        )
    print(
        f"Nothing was run (--dry-run); the file is stored as dataset {dataset.id} "
        f"({printable(dataset.name)}), as a run stores it."
    )


def _dollars(estimate: CostEstimate) -> str:
    low, typical, high = estimate.cost_usd_low, estimate.cost_usd_typical, estimate.cost_usd_high
    if not estimate.priced or low is None or typical is None or high is None:
        model = printable(estimate.judge_model or "")
        return f"no price for {model} in litellm's price table"
    return f"low ${low:,.4f}, typical ${typical:,.4f}, high ${high:,.4f}"
