"""`scorelab resume EXPERIMENT_ID`: run the missing (item, scorer) pairs of an experiment
stopped part-way (`interrupted`, `cancelled`, `budget_reached`), follow it to its end like
`scorelab run`, write the exports, print the summary; the exit code says whether it passed."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from core.cli import _values
from core.cli._dataset_file import check_label_column
from core.cli._errors import CliError
from core.cli._finish import check_output_paths, finish
from core.cli._follow import Interrupts, follow_to_the_end
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
from core.cli.run import JUDGE_KEY_HELP
from core.service.listing import RESUMABLE, listed_experiment

if TYPE_CHECKING:
    from core.cli._options import Commands
    from core.records import ExperimentInfo
    from core.service import Service

__all__ = ["register"]

DESCRIPTION = """\
Run again, under the same id, the (item, scorer) pairs of an experiment stopped part-way that
have no stored result (its failed runs included): an `interrupted` one (its process died), a
`cancelled` one, or a `budget_reached` one (give a higher --max-cost). The scorers, their
options, the judge's model, API base and settings and its rate limit (--rpm/--tpm change it,
and the change is stored) are those the experiment stored; a key
is never stored: give one again (--api-key-env / --api-key-stdin) or let the environment's
apply. The stored results stay as they were; the exports and the summary cover the whole
experiment."""


def register(commands: Commands) -> None:
    """Add `resume` and its options."""
    resume = commands.add_parser(
        "resume",
        help="run the missing pairs of an interrupted, cancelled or capped experiment",
        description=DESCRIPTION,
        epilog=JUDGE_KEY_HELP,
        formatter_class=HelpFormatter,
    )
    resume.add_argument(
        "experiment_id", metavar="EXPERIMENT_ID", help="its id (see `scorelab experiments`)"
    )
    add_max_cost_option(
        resume,
        help="the experiment's whole judge spend cap in USD, what it spent before included "
        "(default: the cap it was started with); a budget_reached one needs a higher one",
    )
    add_judge_key_options(resume)
    add_report_options(resume)
    add_progress_option(resume)
    add_ray_option(resume)
    add_rate_limit_options(resume)  # a figure given replaces the stored one (kept after)
    resume.set_defaults(handler=_resume)


def _resume(arguments: argparse.Namespace) -> int:
    thresholds = [_values.threshold(text) for text in arguments.threshold]
    check_output_paths(arguments)
    show = bars_wanted(arguments.no_progress)
    experiment_id: str = arguments.experiment_id
    _refuse_quickly(arguments, thresholds, experiment_id)

    from core.service import ExperimentConfigError, NotFoundError, Service

    service = Service(arguments.database_url)
    try:
        info = service.get_experiment(experiment_id)
    except NotFoundError:
        raise CliError(
            f"no experiment {experiment_id!r} in the database (ids: scorelab experiments)"
        ) from None
    check_threshold_ids(thresholds, info.scorer_ids)
    if arguments.label_column is not None:
        _check_labels(arguments, service, info)
    no_model = f"experiment {experiment_id} has no judge model, so no judge to give a key to"
    if not info.judge_model:  # a key given for no judge: refused without reading anything
        _values.typed_key(
            key_env=arguments.api_key_env,
            key_stdin=arguments.api_key_stdin,
            judge_model=None,
            no_model=no_model,
        )
    if info.status not in RESUMABLE:  # refused before any key is read or resolved
        raise CliError(_not_resumable(info.name, experiment_id, info.status))
    typed_key = _values.typed_key(
        key_env=arguments.api_key_env,
        key_stdin=arguments.api_key_stdin,
        judge_model=info.judge_model,
        no_model=no_model,
    )
    with Interrupts() as interrupts:
        try:
            if info.judge_model:
                key = service.judge_key(
                    info.judge_model, info.api_base, typed=typed_key is not None
                )
                print(key.describe(), flush=True)
            service.resume_experiment(
                experiment_id,
                api_key=typed_key,
                max_cost=arguments.max_cost,
                ray_address=arguments.ray_address,
                rate_limit=_values.rate_limit(arguments.rpm, arguments.tpm),
            )
        except (ExperimentConfigError, NotFoundError) as error:
            raise CliError(str(error)) from None
        progress = follow_to_the_end(service, experiment_id, interrupts, show=show)
        cap = info.max_cost if arguments.max_cost is None else arguments.max_cost
        return finish(arguments, service, experiment_id, progress, thresholds, interrupts, cap=cap)


def _refuse_quickly(
    arguments: argparse.Namespace, thresholds: list[tuple[str, float]], experiment_id: str
) -> None:
    """Refuse an experiment that is not stopped part-way from its row alone, read directly
    (`core.service.listing`: no Service, no scorers, no judge), when nothing checked before
    the status needs more: no --threshold or --label-column to check against it, and no key
    given for an experiment without a judge. Anything else goes on to the full checks."""
    if thresholds or arguments.label_column is not None:
        return
    listed = listed_experiment(arguments.database_url, experiment_id)
    if listed is None or listed.status in RESUMABLE:
        return
    key_given = arguments.api_key_env is not None or arguments.api_key_stdin
    if key_given and not listed.judge_model:
        return  # the full path says there is no judge to give the key to
    raise CliError(_not_resumable(listed.name, experiment_id, listed.status))


def _not_resumable(name: str, experiment_id: str, status: str) -> str:
    return (
        f"Experiment {name!r} ({experiment_id}) is {status}: only an experiment "
        f"stopped part-way ({', '.join(RESUMABLE)}) can be resumed"
    )


def _check_labels(arguments: argparse.Namespace, service: Service, info: ExperimentInfo) -> None:
    dataset = service.get_dataset(info.dataset_id)
    check_label_column(
        arguments, dataset, service.dataset_items(dataset.id), source=f"experiment {info.id}"
    )
