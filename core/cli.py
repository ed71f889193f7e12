"""The `scorelab` command: run an experiment on a file, list the scorers, start the dashboard.

    scorelab run DATA --scorer ID [--scorer ID ...] [--judge-model MODEL] [--api-base URL]
                 [--api-key-env NAME | --api-key-stdin] [--concurrency N] [--name NAME]
                 [--json PATH] [--html PATH] [--csv PATH]
                 [--threshold ID=MIN ...] [--max-failure-rate SHARE]
                 [--label-column COLUMN]
    scorelab scorers
    scorelab serve [streamlit options]   (127.0.0.1 unless --server.address; see docs/deploy.md)

Which key the judge gets is printed before the run starts ("Judge key: ..."; see
`scorelab run --help` and docs/deploy.md, Judge keys).

Exit codes: 0 done, 1 a threshold failed, more scorer runs failed than --max-failure-rate
allows (none by default) or every run failed, 2 bad input or usage (one line on stderr, never a
traceback; set SCORELAB_DEBUG=1 to see one), 130 interrupted by Ctrl-C (143 by SIGTERM).
Experiments go to the dashboard's database.

Ctrl-C (or SIGTERM) while an experiment runs cancels it: no new run starts, the runs in flight
finish (a second Ctrl-C aborts them), the experiment is recorded as `cancelled` with its finished
results kept, and no --json/--html/--csv file is written (a file is only ever written whole, for
an experiment that ran to its end); stderr says so.

A run keeps little in memory: the file is read and stored, then dropped; the items are read
back a page at a time as the runs start; the summary comes from the database (means and
counts) and the failed runs; --json and --csv are written a page of items at a time. Only
--html and --label-column load the whole experiment. What is printed from the data (names,
ids, errors) has its control characters shown escaped, so a file cannot drive the terminal.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import threading
import traceback
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TextIO

from core.experiments.engine import MAX_CONCURRENCY

__all__ = ["main"]

PROJECT_DIR = Path(__file__).resolve().parents[1]


class CliError(Exception):
    """A problem to report in one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise CliError(f"{message} (see: {self.prog} --help)")


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        arguments = _parser().parse_args(argv)
        return int(arguments.handler(arguments))
    except SystemExit as exit_:  # --help and --version
        return exit_.code if isinstance(exit_.code, int) else 0
    except CliError as error:
        return _fail(str(error))
    except KeyboardInterrupt:
        print("scorelab: interrupted", file=sys.stderr)
        return 130
    except Exception as error:
        if os.environ.get("SCORELAB_DEBUG"):
            traceback.print_exc()
        return _fail(f"{type(error).__name__}: {error}")


def _fail(message: str) -> int:
    from core.judge.secrets import mask_secrets

    line = " ".join(mask_secrets(message).split())  # one line, and no key in it
    print(f"scorelab: error: {_printable(line)}", file=sys.stderr)
    return 2


def _printable(text: object) -> str:
    """`text` with every control or invisible formatting character shown as an escape (`\\x1b`),
    so what comes from a data file cannot move the cursor, recolour or retitle the terminal."""
    value = str(text)
    if value.isprintable():
        return value
    return "".join(c if c.isprintable() else _escape(c) for c in value)


def _escape(character: str) -> str:
    code = ord(character)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="scorelab", description="LLM eval experiments on Mastra-style scorers.")
    parser.add_argument(
        "--database-url",
        help="database URL (default: SCORELAB_DATABASE_URL, else data/scorelab.db)",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True

    run = commands.add_parser(
        "run",
        help="score a dataset file with chosen scorers",
        epilog=JUDGE_KEY_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("data", metavar="DATA", help="CSV, TSV, JSONL, JSON, XLSX or Parquet file")
    run.add_argument(
        "--scorer",
        action="append",
        required=True,
        metavar="ID",
        help="scorer id from `scorelab scorers`; options as ID='{\"key\": value}' (repeatable)",
    )
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
    run.add_argument(
        "--concurrency",
        type=_concurrency,
        default=8,
        metavar="N",
        help=f"scorer runs at once, 1 to {MAX_CONCURRENCY} (default 8)",
    )
    run.add_argument("--name", help="experiment name")
    run.add_argument("--json", type=Path, metavar="PATH", help="write results as JSON")
    run.add_argument("--html", type=Path, metavar="PATH", help="write an HTML report")
    run.add_argument("--csv", type=Path, metavar="PATH", help="write results as CSV")
    run.add_argument(
        "--threshold",
        action="append",
        default=[],
        metavar="ID=MIN",
        help="fail (exit 1) when the scorer's mean is below MIN, in [0, 1] (repeatable)",
    )
    run.add_argument(
        "--max-failure-rate",
        type=_share,
        default=0.0,
        metavar="SHARE",
        help="share of a scorer's runs allowed to fail, in [0, 1] (default 0: any failed run "
        "exits 1, since means leave failed runs out)",
    )
    run.add_argument(
        "--label-column",
        metavar="COLUMN",
        help="column holding a human verdict per item (true/false, yes/no, 0/1 or a number in "
        "[0, 1]): report how well each scorer's scores agree with it",
    )
    run.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    run.set_defaults(handler=_run)

    scorers = commands.add_parser("scorers", help="list the scorers")
    scorers.add_argument("--json", action="store_true", help="print the catalog as JSON")
    scorers.set_defaults(handler=_scorers)

    serve = commands.add_parser(
        "serve",
        help="start the dashboard (streamlit run app.py) on 127.0.0.1; any other "
        "--server.address needs the login (docs/deploy.md)",
        # Nothing after `serve` is parsed here: with no `-` prefix of its own, argparse takes
        # `--server.port 8502` and the like as plain words and hands them all to streamlit,
        # in order (`scorelab serve --help` shows streamlit's options).
        prefix_chars="+",
        add_help=False,
    )
    serve.add_argument("streamlit_args", nargs=argparse.REMAINDER, help="passed to streamlit")
    serve.set_defaults(handler=_serve)
    return parser


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


def _share(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected a share between 0 and 1 (0.05 for 5%), got {text!r}"
        ) from None
    if not math.isfinite(value) or not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(
            f"expected a share between 0 and 1 (0.05 for 5%), got {text!r}"
        )
    return value


def _concurrency(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    if value > MAX_CONCURRENCY:
        raise argparse.ArgumentTypeError(
            f"at most {MAX_CONCURRENCY} runs at once, got {value:,} (each run in flight holds "
            "memory, and a judge server is better served with fewer)"
        )
    return value


# ---- run ----


def _run(arguments: argparse.Namespace) -> int:
    from core.experiment_records import ExperimentConfig
    from core.experiments.datasets import release_unused_memory
    from core.service import DatasetImportError, ExperimentConfigError, Service

    specs = [_scorer_spec(text) for text in arguments.scorer]
    thresholds = [_threshold(text) for text in arguments.threshold]
    settings = dict(_setting(text) for text in arguments.judge_setting)
    typed_key = _typed_key(arguments)
    service = Service(arguments.database_url)
    dataset = _import_file(arguments, service, DatasetImportError)
    release_unused_memory()  # the parsed file is gone: the runs need not stack on its memory
    if arguments.label_column is not None:
        _check_label_column(arguments, dataset, service.dataset_items(dataset.id))
    with _Interrupts() as interrupts:
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
        progress = _follow_to_the_end(
            service, experiment_id, interrupts, thresholds, show=not arguments.no_progress
        )
        return _report(arguments, service, experiment_id, progress, thresholds, interrupts)


def _report(
    arguments: argparse.Namespace,
    service: Any,
    experiment_id: str,
    progress: Any,
    thresholds: list[tuple[str, float]],
    interrupts: _Interrupts,
) -> int:
    """The exports (of an experiment that ran to its end only), the summary, the exit code.
    The summary needs no result: the database gives the means and counts."""
    info = service.get_experiment(experiment_id)
    failures = service.failures(experiment_id)
    gate = _gate(info, failures, thresholds, arguments.max_failure_rate)
    detail = None
    if arguments.html is not None or arguments.label_column is not None:
        detail = service.load_experiment(experiment_id)  # these two need every result at once
    agreement = _agreement(detail, arguments.label_column)
    ran_to_the_end = progress.status in ("completed", "failed") and not interrupts.count
    unwritten = _write_outputs(
        arguments,
        service,
        experiment_id,
        detail,
        gate.thresholds,
        agreement,
        stop=lambda: not ran_to_the_end or bool(interrupts.count),
    )
    _print_summary(info, failures, gate)
    if agreement is not None:
        _print_agreement(agreement)
    if unwritten:
        why = (
            "interrupted"
            if interrupts.count
            else "the experiment was cancelled"
            if progress.status == "cancelled"
            else "the experiment stopped on an error"
        )
        print(
            f"scorelab: {why}, so {', '.join(map(str, unwritten))} "
            f"{'was' if len(unwritten) == 1 else 'were'} not written; its "
            f"{info.counts.succeeded} finished results are in the database "
            f"(experiment {experiment_id})",
            file=sys.stderr,
        )
    if progress.status == "error":
        raise CliError(f"the experiment stopped: {progress.error}")
    if interrupts.count:
        return 128 + interrupts.signal_number
    if progress.status == "cancelled":  # by another hand than ours: not a finished run
        return 130
    if progress.status == "failed":  # every run failed: nothing was measured
        return 1
    return 0 if gate.passed else 1


def _typed_key(arguments: argparse.Namespace) -> Any:
    """The key given for this run (--api-key-env or --api-key-stdin) as a SecretStr, or None;
    it never appears on the command line, and it is never stored."""
    from pydantic import SecretStr

    if arguments.api_key_env is None and not arguments.api_key_stdin:
        return None
    option = (
        "--api-key-stdin" if arguments.api_key_stdin else f"--api-key-env {arguments.api_key_env}"
    )
    if not arguments.judge_model:
        raise CliError(f"{option}: a judge key needs --judge-model")
    if arguments.api_key_stdin and sys.stdin.isatty():
        import getpass

        value = getpass.getpass("Judge API key (not shown): ").strip()
    elif arguments.api_key_stdin:
        value = sys.stdin.readline().strip()
        if not value:
            raise CliError(f"{option}: standard input holds no key (one line expected)")
    else:
        value = os.environ.get(arguments.api_key_env, "").strip()
        if not value:
            raise CliError(f"{option}: that environment variable is not set or is empty")
    return SecretStr(value)


def _import_file(arguments: argparse.Namespace, service: Any, import_error: type) -> Any:
    """The file read, parsed once and stored (or found stored); its bytes and parsed table are
    dropped on return, before the experiment runs."""
    parsed = service.read_upload(Path(arguments.data).name, _read_file(arguments.data))
    try:
        return service.import_parsed(
            parsed,
            _mapping(arguments, lambda: service.preview(parsed)),
            reuse_existing=True,
        )
    except import_error as error:
        raise CliError(_import_message(arguments.data, error)) from None


def _mapping(arguments: argparse.Namespace, read_preview: Any) -> Any:
    """The mapping from --*-column options over the detected one; None when none is given."""
    from core.experiment_records import ColumnMapping

    given = {
        "input": arguments.input_column,
        "output": arguments.output_column,
        "ground_truth": arguments.ground_truth_column,
        "id": arguments.id_column,
    }
    if all(value is None for value in given.values()):
        return None
    preview = read_preview()
    proposed = preview.proposed_mapping
    roles = {
        role: value if value is not None else getattr(proposed, role, None)
        for role, value in given.items()
    }
    for role in ("input", "output"):
        if roles[role] is None:
            raise CliError(
                f"{arguments.data}: no {role} column found; name it with --{role}-column"
            )
    used = {value for value in roles.values() if value is not None}
    return ColumnMapping(**roles, metadata=[c for c in preview.columns if c not in used])


def _check_label_column(arguments: argparse.Namespace, dataset: Any, items: list[Any]) -> None:
    """Refuse, before anything runs, a label column that is not in the file, plays another
    role, or holds a value that is not a label."""
    from core.reporting import LabelError, label_values

    column = arguments.label_column
    where = f"{arguments.data}: --label-column {column!r}"
    if column not in dataset.columns:
        raise CliError(f"{where}: no such column (columns: {', '.join(dataset.columns)})")
    mapping = dataset.mapping
    for role, label in (
        ("input", "input"),
        ("output", "output"),
        ("ground_truth", "ground-truth"),
        ("id", "id"),
    ):
        if getattr(mapping, role) == column:
            raise CliError(f"{where}: it is the {label} column; the labels must be another column")
    try:
        label_values(items, column)
    except LabelError as error:
        place = f"item {error.item_id!r} (row {error.row}): " if error.item_id else ""
        raise CliError(f"{where}: {place}{error.problem}") from None


def _agreement(detail: Any, column: str | None) -> Any:
    if column is None:
        return None
    from core.reporting import LabelError, label_agreement

    try:
        return label_agreement(detail, column)
    except LabelError as error:  # checked before the run; only a changed dataset gets here
        raise CliError(f"--label-column {column!r}: {error}") from None


def _print_agreement(agreement: Any) -> None:
    from core.reporting import agreement_line

    print(
        f"  labels from column {_printable(repr(agreement.label_column))}: "
        f"{agreement.labelled_items} items labelled, {agreement.unlabelled_items} without a "
        "label (left out)"
    )
    for entry in agreement.scorers:
        print(f"  {_printable(entry.scorer_id)}: {_printable(agreement_line(entry))}")


class _Interrupts:
    """Ctrl-C and SIGTERM while an experiment runs, counted instead of raised.

    Python raises KeyboardInterrupt wherever the main thread happens to be, and a handler in
    the middle of a database write or a thread's join can leave the experiment `running` or
    a half-written export behind; here the signal only counts, and `_follow` acts on it
    between two waits. Outside the block the previous handlers are back, unless a signal came:
    the command is then on its way out, and more of them (an impatient user) are ignored rather
    than let a KeyboardInterrupt cut the exit short."""

    _SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.count = 0
        self.signal_number = signal.SIGINT.value
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> _Interrupts:
        if threading.current_thread() is threading.main_thread():  # signals go there only
            for number in self._SIGNALS:
                self._previous[number] = signal.signal(number, self._received)
        return self

    def __exit__(self, *_exc: object) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, signal.SIG_IGN if self.count else handler)

    def _received(self, number: int, _frame: Any) -> None:
        if not self.count:
            self.signal_number = number
        self.count += 1


def _follow_to_the_end(
    service: Any,
    experiment_id: str,
    interrupts: _Interrupts,
    thresholds: list[tuple[str, float]],
    *,
    show: bool,
) -> Any:
    """Follow the experiment until it ended and its end was recorded. Should anything go
    wrong meanwhile, it is aborted and its end recorded before the error goes on."""
    try:
        _check_threshold_ids(thresholds, service.get_experiment(experiment_id).scorer_ids)
        return _follow(service, experiment_id, interrupts, show=show)
    except BaseException:
        service.cancel(experiment_id, abort_in_flight=True)
        with contextlib.suppress(TimeoutError):
            service.wait(experiment_id, timeout=30)
        raise


def _follow(service: Any, experiment_id: str, interrupts: _Interrupts, *, show: bool) -> Any:
    """Wait for the experiment, drawing a progress bar on a terminal. The first Ctrl-C stops new
    runs from starting, the second aborts those in flight."""
    bar = _ProgressBar(sys.stderr) if show and sys.stderr.isatty() else None
    acted_on = 0
    try:
        while True:
            if interrupts.count > acted_on:
                acted_on = interrupts.count
                _cancel(service, experiment_id, abort=acted_on > 1, bar=bar)
            try:
                return service.wait(experiment_id, timeout=0.2)
            except TimeoutError:
                if bar is not None:
                    bar.draw(service.progress(experiment_id))
    finally:
        if bar is not None:
            bar.draw(service.progress(experiment_id))
            bar.close()


def _cancel(service: Any, experiment_id: str, *, abort: bool, bar: _ProgressBar | None) -> None:
    if bar is not None:
        bar.close()  # the message goes under the bar, not over it
    if abort:
        message = "aborting the runs in flight..."
    else:
        message = (
            "cancelling: no new run starts, the runs in flight finish and every finished "
            "result is kept (Ctrl-C again to abort the runs in flight)..."
        )
    print(f"scorelab: {message}", file=sys.stderr, flush=True)
    service.cancel(experiment_id, abort_in_flight=abort)


class _ProgressBar:
    """A one-line bar redrawn in place: runs done, failures, judge tokens, elapsed, ETA."""

    def __init__(self, stream: TextIO, width: int = 28) -> None:
        self.stream = stream
        self.width = width

    def draw(self, progress: Any) -> None:
        counts = progress.counts
        filled = round(self.width * counts.fraction)
        tokens = counts.usage.total_tokens or 0
        eta = f" · ETA {_clock(progress.eta_s)}" if progress.eta_s is not None else ""
        line = (
            f"[{'#' * filled}{'.' * (self.width - filled)}] {counts.done}/{counts.total} runs"
            f" · {counts.failed} failed · {tokens:,} judge tokens"
            f" · {_clock(progress.elapsed_s)}{eta}"
        )
        self.stream.write("\r" + line + "\x1b[K")
        self.stream.flush()

    def close(self) -> None:
        self.stream.write("\n")
        self.stream.flush()


def _clock(seconds: float) -> str:
    seconds = max(0, int(seconds))
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes:02d}:{seconds:02d}"


def _read_file(name: str) -> bytes:
    path = Path(name)
    if not path.exists():
        raise CliError(f"{name}: no such file")
    if path.is_dir():
        raise CliError(f"{name}: is a directory, not a dataset file")
    try:
        return path.read_bytes()
    except OSError as error:
        raise CliError(f"{name}: cannot read it ({error.strerror or error})") from None


def _import_message(name: str, error: Any) -> str:
    problems = error.report.problems
    more = len(problems) - 1
    suffix = f" (and {more} more problem{'s' * (more != 1)})" if more > 0 else ""
    return f"{name}: {problems[0].message}{suffix}"


def _scorer_spec(text: str) -> Any:
    from core.experiment_records import ScorerSpec

    scorer_id, _, raw = text.partition("=")
    scorer_id = scorer_id.strip()
    if not scorer_id:
        raise CliError(f"--scorer {text!r}: the scorer id is missing")
    if not raw:
        return ScorerSpec(scorer_id=scorer_id)
    try:
        options = json.loads(raw)
    except json.JSONDecodeError as error:
        raise CliError(f"--scorer {text!r}: the options are not valid JSON ({error.msg})") from None
    if not isinstance(options, dict):
        raise CliError(f"--scorer {text!r}: the options must be a JSON object")
    return ScorerSpec(scorer_id=scorer_id, options=options)


def _threshold(text: str) -> tuple[str, float]:
    scorer_id, separator, raw = text.rpartition("=")
    if not separator or not scorer_id.strip():
        raise CliError(f"--threshold {text!r}: expected ID=MIN, e.g. tone-scorer=0.7")
    try:
        minimum = float(raw)
    except ValueError:
        raise CliError(f"--threshold {text!r}: {raw!r} is not a number") from None
    if not math.isfinite(minimum) or not 0 <= minimum <= 1:
        raise CliError(f"--threshold {text!r}: the minimum must be between 0 and 1")
    return scorer_id.strip(), minimum


def _setting(text: str) -> tuple[str, Any]:
    key, separator, raw = text.partition("=")
    if not separator or not key.strip():
        raise CliError(f"--judge-setting {text!r}: expected KEY=VALUE, e.g. temperature=0")
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        value = raw  # a plain string
    return key.strip(), value


def _check_threshold_ids(thresholds: list[tuple[str, float]], scorer_ids: list[str]) -> None:
    for scorer_id, _ in thresholds:
        if scorer_id not in scorer_ids:
            raise CliError(
                f"--threshold {scorer_id}: no such scorer in this run "
                f"(scorers: {', '.join(scorer_ids)})"
            )


@dataclass(frozen=True, slots=True)
class _Gate:
    """What decides the exit code: the thresholds, and the failed runs per scorer."""

    thresholds: list[Any]
    failed_by_scorer: dict[str, int]
    runs_per_scorer: int
    max_failure_rate: float

    @property
    def too_many_failures(self) -> list[str]:
        from core.experiments.thresholds import failures_within

        return [
            scorer_id
            for scorer_id, failed in self.failed_by_scorer.items()
            if not failures_within(failed, self.runs_per_scorer, self.max_failure_rate)
        ]

    @property
    def passed(self) -> bool:
        return not self.too_many_failures and all(t.passed for t in self.thresholds)


def _gate(
    info: Any, failures: list[Any], thresholds: list[tuple[str, float]], max_failure_rate: float
) -> _Gate:
    """Thresholds checked by the same rule as `run_evals`: a mean leaves failed runs out, so a
    scorer passes only when its failed runs are within the allowed share too."""
    from core.experiments.thresholds import Threshold, check_threshold

    failed = Counter(outcome.scorer_id for outcome in failures)
    by_scorer = {scorer_id: failed[scorer_id] for scorer_id in info.scorer_ids}
    return _Gate(
        thresholds=[
            check_threshold(
                scorer_id,
                Threshold(min=minimum),
                info.scores.get(scorer_id),
                failed_runs=by_scorer.get(scorer_id, 0),
                total_runs=info.total_items,
                max_failure_rate=max_failure_rate,
            )
            for scorer_id, minimum in thresholds
        ],
        failed_by_scorer=by_scorer,
        runs_per_scorer=info.total_items,
        max_failure_rate=max_failure_rate,
    )


def _write_outputs(
    arguments: argparse.Namespace,
    service: Any,
    experiment_id: str,
    detail: Any,
    thresholds: list[Any],
    agreement: Any,
    *,
    stop: Callable[[], bool],
) -> list[Path]:
    """The --json, --csv and --html files, each written whole or not at all; none once
    `stop()` holds (the run did not reach its end, or an interrupt came). JSON and CSV are
    written a page of items at a time; HTML needs `detail`, the whole experiment. Every key the
    process holds is masked in them. Returns the paths left unwritten."""
    from core.reporting import experiment_html
    from core.run_results import json_ready

    checks = [json_ready(t) for t in thresholds] or None
    outputs = [
        (arguments.json, lambda out: _write_json(out, service, experiment_id, checks, agreement)),
        (arguments.csv, lambda out: _write_csv(out, service, experiment_id)),
        (arguments.html, lambda out: out.write(experiment_html(detail, agreement=agreement))),
    ]
    unwritten = []
    for path, write in outputs:
        if path is None:
            continue
        if stop():
            unwritten.append(path)
            continue
        _write_whole(path, write)
    return unwritten


def _write_whole(path: Path, write: Callable[[TextIO], None]) -> None:
    """Write `path` through a temporary file beside it, every piece masked: a reader (or a
    crash) never finds a half-written export, and an older file stays until the new one is
    complete."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with temporary.open("w", encoding="utf-8", newline="") as out:
            write(_MaskedWriter(out))
        os.replace(temporary, path)
    except OSError as error:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise CliError(f"{path}: cannot write it ({error.strerror or error})") from None
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


class _MaskedWriter:
    """A text file whose every write has the process's keys masked (`masked_export`); each
    piece written is a whole JSON value, CSV page or HTML report, so no key is cut in two."""

    def __init__(self, out: TextIO) -> None:
        from core.reporting import masked_export

        self._out = out
        self._mask = masked_export

    def write(self, text: str) -> int:
        return self._out.write(self._mask(text))


def _write_json(
    out: TextIO, service: Any, experiment_id: str, thresholds: Any, agreement: Any
) -> None:
    """`experiment_json` of the whole experiment, written a page of items at a time: the
    document around its `items` (the same for every page) from the first page, then each
    page's items."""
    from core.reporting import experiment_json

    options: dict[str, Any] = {"ensure_ascii": False, "indent": 2, "default": str}
    marker = json.dumps(f"items-{uuid.uuid4().hex}")
    tail, items = "", 0
    for page in service.experiment_pages(experiment_id):
        document = experiment_json(page, thresholds=thresholds, agreement=agreement)
        if not tail:
            head, tail = json.dumps({**document, "items": json.loads(marker)}, **options).split(
                marker
            )
            out.write(head + "[")
        for item in document["items"]:
            text = json.dumps(item, **options).replace("\n", "\n    ")
            out.write((",\n    " if items else "\n    ") + text)
            items += 1
    out.write(("\n  ]" if items else "]") + tail)


def _write_csv(out: TextIO, service: Any, experiment_id: str) -> None:
    """`results_csv` of the whole experiment, written a page of items at a time (the header
    once: every row has the same columns)."""
    from core.reporting import results_csv

    header_written = False
    empty = ""
    for page in service.experiment_pages(experiment_id):
        text = results_csv(page)
        if not page.results and not page.failures:
            empty = empty or text  # the header of a file without rows
            continue
        out.write(text if not header_written else text.split("\r\n", 1)[1])
        header_written = True
    if not header_written:
        out.write(empty)


def _print_summary(info: Any, failures: list[Any], gate: _Gate) -> None:
    counts = info.counts
    print(f"Experiment {info.id} ({_printable(info.name)}): {info.status}")
    print(f"  {info.total_items} items, {counts.succeeded} runs succeeded, {counts.failed} failed")
    for scorer_id in info.scorer_ids:
        mean = info.scores.get(scorer_id)
        failed = gate.failed_by_scorer.get(scorer_id, 0)
        note = f" ({failed} of {info.total_items} runs failed, not in the mean)" if failed else ""
        shown = "no score" if mean is None else f"{mean:.4f}"
        print(f"  {_printable(scorer_id)}: {shown}{note}")
    if counts.judge_calls:
        usage = counts.usage
        print(
            f"  judge: {counts.judge_calls} calls, {usage.input_tokens or 0} input and "
            f"{usage.output_tokens or 0} output tokens"
        )
    for result in gate.thresholds:
        verdict = "passed" if result.passed else "FAILED"
        mean = result.average_score
        shown = "no score" if mean is None else f"{mean:.4f}"
        more = f", {result.failed_runs} failed runs" if result.failed_runs else ""
        print(
            f"  threshold {_printable(result.id)} >= {result.threshold.min}: {verdict} "
            f"({shown}{more})"
        )
    if info.status == "failed":
        print("  FAILED: every scorer run failed, so nothing was measured")
    allowed = f"{gate.max_failure_rate:.0%}"
    for scorer_id in gate.too_many_failures:
        failed = gate.failed_by_scorer[scorer_id]
        print(
            f"  FAILED: {failed} of {info.total_items} runs of {_printable(scorer_id)} failed "
            f"(allowed: {allowed}; see --max-failure-rate)"
        )
    if failures:
        from core.judge.secrets import mask_secrets

        first = failures[0]
        error = " ".join(mask_secrets(str(first.error)).split())
        print(
            f"scorelab: warning: {len(failures)} scorer run(s) failed (first: item "
            f"{_printable(first.item_id)}, {_printable(first.scorer_id)}: {_printable(error)})",
            file=sys.stderr,
        )


# ---- scorers and serve ----


def _scorers(arguments: argparse.Namespace) -> int:
    from core.service import scorer_catalog

    catalog = scorer_catalog()
    if arguments.json:
        print(json.dumps([entry.model_dump(mode="json") for entry in catalog], indent=2))
        return 0
    width = max(len(entry.id) for entry in catalog)
    for entry in catalog:
        judge = "judge" if entry.calls_judge else "code "
        print(f"{entry.id:<{width}}  {judge}  {entry.description}")
        for option in entry.options:
            if option.code_only:  # a Python function cannot be given as JSON
                continue
            need = "required" if option.required else f"default {option.default!r}"
            print(f"{'':<{width}}         --scorer option {option.name} ({option.type}, {need})")
    return 0


LOOPBACK = "127.0.0.1"
"""Where `scorelab serve` listens unless told otherwise: this machine only."""


def _serve(arguments: argparse.Namespace) -> int:
    app = PROJECT_DIR / "app.py"
    if not app.is_file():
        raise CliError(f"the dashboard is not here ({app} is missing)")
    env = dict(os.environ)
    if arguments.database_url:
        env["SCORELAB_DATABASE_URL"] = arguments.database_url
    flags = list(arguments.streamlit_args)
    given = _flag_values(flags, "server.address")
    address = given[-1] if given else env.get("STREAMLIT_SERVER_ADDRESS")
    if address is None:
        # Private by default, whatever a config.toml elsewhere says.
        address = LOOPBACK
        flags = ["--server.address", LOOPBACK, *flags]
    _check_serving_address(address, flags, env)
    command = [sys.executable, "-m", "streamlit", "run", str(app), *flags]
    return subprocess.call(command, env=env)


def _check_serving_address(address: str | None, flags: list[str], env: dict[str, str]) -> None:
    """Refuse, before streamlit starts, an address other hosts reach when the login is not set
    up (app.py refuses it too, for a plain `streamlit run`)."""
    from core.dashboard_access import (
        SecretsError,
        is_loopback,
        login_problems,
        read_secrets,
        unprotected_address_message,
    )

    if is_loopback(address):
        return
    try:
        secrets = read_secrets(_secrets_files(flags))
    except SecretsError as error:
        raise CliError(str(error)) from None
    problems = login_problems(secrets, env)
    if problems:
        raise CliError(unprotected_address_message(address, problems))


def _secrets_files(flags: list[str]) -> list[Path]:
    """The secrets files streamlit will read: --secrets.files, else `[secrets] files` of a
    config.toml, else secrets.toml in ~/.streamlit, ./.streamlit and the app's .streamlit."""
    given = _flag_values(flags, "secrets.files")
    if given:
        return [Path(name) for name in given]
    folders = list(dict.fromkeys([Path.home(), Path.cwd(), PROJECT_DIR]))
    configured: list[str] = []
    for folder in folders:  # a later config file wins, as in streamlit
        config = _toml_or_empty(folder / ".streamlit" / "config.toml")
        files = (config.get("secrets") or {}).get("files")
        if isinstance(files, list) and files:
            configured = [str(name) for name in files]
    if configured:
        return [Path(name) for name in configured]
    return [folder / ".streamlit" / "secrets.toml" for folder in folders]


def _toml_or_empty(path: Path) -> dict[str, Any]:
    import tomllib

    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return {}  # streamlit reports a broken config file itself


def _flag_values(flags: list[str], name: str) -> list[str]:
    """Each value given to streamlit's `--name VALUE` or `--name=VALUE`, in order (streamlit
    keeps the last; the script's own arguments after `--` are not streamlit's)."""
    values = []
    option = f"--{name}"
    for index, flag in enumerate(flags):
        if flag == "--":
            break
        if flag == option and index + 1 < len(flags):
            values.append(flags[index + 1])
        elif flag.startswith(option + "="):
            values.append(flag[len(option) + 1 :])
    return values


if __name__ == "__main__":
    sys.exit(main())
