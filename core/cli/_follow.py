"""An experiment followed from the terminal until its end: a progress bar of its runs, and
Ctrl-C (or SIGTERM) turned into a cancel (the first) or an abort (the second)."""

from __future__ import annotations

import contextlib
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import TYPE_CHECKING

from core.cli._errors import CliError
from core.cli._progress import Bar
from core.records import ExperimentProgress

if TYPE_CHECKING:
    from pydantic import SecretStr

    from core.service import Service

__all__ = ["Interrupts", "follow_to_the_end", "retry_failures"]

_Handler = Callable[[int, FrameType | None], object] | int | signal.Handlers | None
"""A signal's handler, as `signal.signal` takes and returns it."""


class Interrupts:
    """Ctrl-C and SIGTERM while an experiment runs, counted instead of raised.

    Python raises KeyboardInterrupt wherever the main thread happens to be, and a handler in
    the middle of a database write or a thread's join can leave the experiment `running` or
    a half-written export behind; here the signal only counts, and `follow_to_the_end` acts on
    it between two waits. Outside the block the previous handlers are back, unless a signal
    came: the command is then on its way out, and more of them (an impatient user) are ignored
    rather than let a KeyboardInterrupt cut the exit short."""

    _SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.count = 0
        self.signal_number = signal.SIGINT.value
        self._previous: dict[signal.Signals, _Handler] = {}

    def __enter__(self) -> Interrupts:
        if threading.current_thread() is threading.main_thread():  # signals go there only
            for number in self._SIGNALS:
                self._previous[number] = signal.signal(number, self._received)
        return self

    def __exit__(self, *_exc: object) -> None:
        for number, handler in self._previous.items():
            signal.signal(number, signal.SIG_IGN if self.count else handler)

    def _received(self, number: int, _frame: FrameType | None) -> None:
        if not self.count:
            self.signal_number = number
        self.count += 1


def follow_to_the_end(
    service: Service,
    experiment_id: str,
    interrupts: Interrupts,
    *,
    check: Callable[[], None] = lambda: None,
    show: bool,
) -> ExperimentProgress:
    """`check()`, then follow the experiment until it ended and its end was recorded. Should
    anything go wrong meanwhile (the check failing included), it is aborted and its end
    recorded before the error goes on."""
    try:
        check()
        return _follow(service, experiment_id, interrupts, show=show)
    except BaseException:
        service.cancel(experiment_id, abort_in_flight=True)
        with contextlib.suppress(TimeoutError):
            service.wait(experiment_id, timeout=30)
        raise


def retry_failures(
    service: Service,
    experiment_id: str,
    progress: ExperimentProgress,
    interrupts: Interrupts,
    *,
    times: int,
    api_key: SecretStr | None,
    show: bool,
) -> ExperimentProgress:
    """Run the experiment's failed runs (held in this process's memory) again, up to `times`
    rounds, each followed like the run; stops early once none is left, or when the run did
    not reach its end (cancelled, capped, broken: its failures stay as they are). Returns the
    progress at the end of the last round."""
    from core.service import ExperimentConfigError

    for round_number in range(1, times + 1):
        if progress.status not in ("completed", "failed") or interrupts.count:
            break
        left = len(service.failures(experiment_id))
        if not left:
            break
        print(
            f"scorelab: re-running {left} failed run{'' if left == 1 else 's'} "
            f"(--retry-failed, round {round_number} of {times})...",
            file=sys.stderr,
            flush=True,
        )
        try:
            service.retry_failed(experiment_id, api_key=api_key)
        except ExperimentConfigError as error:
            raise CliError(str(error)) from None
        progress = follow_to_the_end(service, experiment_id, interrupts, show=show)
    return progress


def _follow(
    service: Service, experiment_id: str, interrupts: Interrupts, *, show: bool
) -> ExperimentProgress:
    """Wait for the experiment, drawing a progress bar on a terminal. The first Ctrl-C stops new
    runs from starting, the second aborts those in flight."""
    bar = _RunsBar(service, experiment_id, show=show)
    acted_on = 0
    try:
        while True:
            if interrupts.count > acted_on:
                acted_on = interrupts.count
                bar.close()  # the message goes under the bar, not over it
                _cancel(service, experiment_id, abort=acted_on > 1)
            try:
                return service.wait(experiment_id, timeout=0.2)
            except TimeoutError:
                bar.draw()
    finally:
        bar.draw()
        bar.close()


class _RunsBar:
    """The runs of one experiment: done of planned, runs a second, failures, judge tokens."""

    def __init__(self, service: Service, experiment_id: str, *, show: bool) -> None:
        self._service = service
        self._experiment_id = experiment_id
        self._show = show
        self._bar: Bar | None = None

    def draw(self) -> None:
        """Draw the counts now; after `close`, on a new line."""
        if not self._show:
            return
        counts = self._service.progress(self._experiment_id).counts
        if self._bar is None:
            self._bar = Bar("runs", total=counts.total, unit="runs", show=True)
        tokens = counts.usage.total_tokens or 0
        self._bar.update(
            counts.done,
            total=counts.total,
            note=f"· {counts.failed:,} failed · {tokens:,} judge tokens",
        )

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _cancel(service: Service, experiment_id: str, *, abort: bool) -> None:
    if abort:
        message = "aborting the runs in flight..."
    else:
        message = (
            "cancelling: no new run starts, the runs in flight finish and every finished "
            "result is kept (Ctrl-C again to abort the runs in flight)..."
        )
    print(f"scorelab: {message}", file=sys.stderr, flush=True)
    service.cancel(experiment_id, abort_in_flight=abort)
