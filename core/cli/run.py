"""`scorelab run DATA --scorer ID ...`: import a file, run an experiment on it, follow it to its
end, write the exports, print the summary; the exit code says whether it passed."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from core.cli import _values
from core.cli._dataset_file import check_label_column, import_file
from core.cli._errors import CliError
from core.cli._finish import check_output_paths, finish
from core.cli._follow import Interrupts, follow_to_the_end
from core.cli._options import HelpFormatter, add_progress_option, add_report_options
from core.cli._progress import bars_wanted
from core.cli._summary import check_threshold_ids
from core.experiment_records import ExperimentConfig

if TYPE_CHECKING:
    from core.cli._options import Commands

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
    typed_key = run.add_mutually_exclusive_group()
    typed_key.add_argument(
        "--api-key-env",
        metavar="NAME",
        help="the judge's key for this run, read from the environment variable NAME "
        "(never stored, never on the command line)",
    )
    typed_key.add_argument(
        "--api-key-stdin",
        action="store_true",
        help="the judge's key for this run, read from the first line of standard input",
    )
    run.add_argument(
        "--judge-setting",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="judge call setting, e.g. temperature=0 or num_retries=4 (repeatable; allowed: "
        "temperature, top_p, max_tokens, max_completion_tokens, timeout, num_retries, "
        "max_retries, seed, stop, presence_penalty, frequency_penalty, reasoning_effort)",
    )


def _run(arguments: argparse.Namespace) -> int:
    from core.service import ExperimentConfigError, Service
    from core.service.terminal import release_unused_memory

    specs = [_values.scorer_spec(text) for text in arguments.scorer]
    thresholds = [_values.threshold(text) for text in arguments.threshold]
    settings = dict(_values.judge_setting(text) for text in arguments.judge_setting)
    typed_key = _values.typed_key(
        key_env=arguments.api_key_env,
        key_stdin=arguments.api_key_stdin,
        judge_model=arguments.judge_model,
    )
    check_output_paths(arguments)
    show = bars_wanted(arguments.no_progress)
    service = Service(arguments.database_url)
    dataset = import_file(arguments, service, show=show)
    release_unused_memory()  # the parsed file is gone: the runs need not stack on its memory
    if arguments.label_column is not None:
        check_label_column(arguments, dataset, service.dataset_items(dataset.id))
    with Interrupts() as interrupts:
        try:
            if arguments.judge_model:
                key = service.judge_key(
                    arguments.judge_model, arguments.api_base, typed=typed_key is not None
                )
                print(key.describe(), flush=True)
            experiment_id = service.start_experiment(
                ExperimentConfig(
                    name=arguments.name,
                    dataset_id=dataset.id,
                    scorers=specs,
                    judge_model=arguments.judge_model,
                    api_base=arguments.api_base,
                    concurrency=arguments.concurrency,
                    judge_settings=settings,
                ),
                api_key=typed_key,
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
        return finish(arguments, service, experiment_id, progress, thresholds, interrupts)
