"""The `scorelab` command: run an experiment on a file, resume one stopped part-way, find and
export experiments, list the scorers, start the dashboard.

    scorelab run DATA --scorer ID [--scorer ID ...] [--judge-model MODEL] [--api-base URL]
                 [--api-key-env NAME | --api-key-stdin] [--concurrency N] [--name NAME]
                 [--cache] [--max-cost USD] [--retry-failed N] [--dry-run]
                 [--json PATH] [--html PATH] [--csv PATH]
                 [--threshold ID=MIN ...] [--max-failure-rate SHARE]
                 [--label-column COLUMN] [--no-progress]
    scorelab resume EXPERIMENT_ID [--max-cost USD] [--api-key-env NAME | --api-key-stdin]
                 [--json PATH] [--html PATH] [--csv PATH] [--threshold ID=MIN ...]
                 [--max-failure-rate SHARE] [--label-column COLUMN] [--no-progress]
    scorelab experiments [--json]
    scorelab export EXPERIMENT_ID [--json PATH] [--csv PATH] [--html PATH] [--no-progress]
    scorelab scorers [--json]
    scorelab serve [streamlit options]   (127.0.0.1 unless --server.address; see docs/deploy.md)

One module per command (`run`, `resume`, `experiments`, `export`, `scorers`, `serve`), each with its
`register(commands)`; `_parser.COMMANDS` lists them. The CLI reaches the core through
`core.service` (and `core.service.terminal`) and the record modules only: an import-linter
contract holds it to that.

Which key the judge gets is printed before the run starts ("Judge key: ..."; see
`scorelab run --help` and docs/deploy.md, Judge keys).

Exit codes: 0 done, 1 a threshold failed, more scorer runs failed than --max-failure-rate
allows (none by default), every run failed, or the --max-cost cap stopped the run
(`budget_reached`: its exports are written with the results it reached), 2 bad input or
usage (one line on stderr, never a traceback; set SCORELAB_DEBUG=1 to see one), 130
interrupted by Ctrl-C (143 by SIGTERM).
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

Long work (reading and storing the file, the runs, each export) shows a progress bar on stderr
with its rate and the time left, when stderr is a terminal and --no-progress is not given
(core/cli/_progress.py).
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Sequence

from core.cli._errors import CliError, fail
from core.cli._parser import build_parser

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code."""
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        arguments = build_parser().parse_args(argv)
        code: int = arguments.handler(arguments)
        return code
    except SystemExit as exit_:  # --help and --version
        return exit_.code if isinstance(exit_.code, int) else 0
    except CliError as error:
        return fail(str(error))
    except KeyboardInterrupt:
        print("scorelab: interrupted", file=sys.stderr)
        return 130
    except Exception as error:
        if os.environ.get("SCORELAB_DEBUG"):
            traceback.print_exc()
        return fail(f"{type(error).__name__}: {error}")
