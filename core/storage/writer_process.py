"""The result writer's own process: a running experiment's rows written to the database by a
child interpreter, so the inserts, the commits and the index maintenance never take the
scoring interpreter's time (docs/storage.md, "The write path").

`WriterProcess` is a `ResultSink` (core/experiments/result_writer.py) for one experiment:
`add_rows`, `update_experiment_progress` and `heartbeat` are sent to the child (`python -m
core.storage.writer_process`) over its standard input as pickled frames (the rows are already
encoded tuples, `core.run_results.ResultRow`), and each call waits for the child's answer, so
what the caller is told was written is committed, and an error of the child's (a full disk,
the database gone) is raised in the caller as a `StorageError` naming it. The child opens its
own connection (`Store` on the same URL, sent in the first frame, never on its command line)
and ends when its standard input closes, or at once when the parent dies (a `kill -9` of the
parent kills the child too: its transaction in flight is rolled back, never committed after).
A child that dies is a `StorageError` in the parent: the experiment stops `interrupted`, its
committed results kept, and a resume runs the rest (`INSERT ... ON CONFLICT DO NOTHING`: a
batch committed just before the child died is never doubled)."""

from __future__ import annotations

import contextlib
import os
import pickle
import struct
import subprocess
import sys
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO, Any

from core.records import ExperimentStatus, RunCounts, ScorerOutcome
from core.run_results import ResultRow

__all__ = ["WriterProcess"]

_HEADER = struct.Struct("!I")
_START_TIMEOUT_S = 120.0
"""How long the child may take to import the store and open the database."""


class WriterProcess:
    """One experiment's result writer in a child process (see the module's docstring).

    Calls are made from one thread at a time (the `ResultWriter`'s); `close` ends the child."""

    def __init__(self, database_url: str) -> None:
        root = str(Path(__file__).resolve().parents[2])  # the folder holding `core`
        path = os.environ.get("PYTHONPATH")
        env = {**os.environ, "PYTHONPATH": root if not path else f"{root}{os.pathsep}{path}"}
        self._child = subprocess.Popen(
            [sys.executable, "-m", "core.storage.writer_process", str(os.getpid())],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            cwd=root,
        )
        self._lock = threading.Lock()
        self._closed = False
        try:
            self._call("open", database_url)
        except BaseException:
            self.close()
            raise

    @property
    def pid(self) -> int:
        """The child's process id."""
        return self._child.pid

    def add_results(self, experiment_id: str, outcomes: Iterable[ScorerOutcome]) -> int:
        """Write successful outcomes (the store's `add_results`, in the child)."""
        return int(self._call("add_results", experiment_id, list(outcomes)))

    def add_rows(self, experiment_id: str, rows: Sequence[ResultRow]) -> int:
        """Write pre-encoded rows (the store's `add_rows`, in the child); returns how many were
        written, once they are committed."""
        return int(self._call("add_rows", experiment_id, list(rows)))

    def update_experiment_progress(
        self, experiment_id: str, counts: RunCounts, failed: RunCounts | None = None
    ) -> None:
        """The store's `update_experiment_progress`, in the child."""
        self._call("update_experiment_progress", experiment_id, counts, failed)

    def heartbeat(self, experiment_id: str) -> None:
        """The store's `heartbeat`, in the child."""
        self._call("heartbeat", experiment_id)

    def finish_experiment(
        self,
        experiment_id: str,
        status: ExperimentStatus,
        counts: RunCounts | None = None,
        error: str | None = None,
        failed: RunCounts | None = None,
    ) -> None:
        """The store's `finish_experiment`, in the child."""
        self._call("finish_experiment", experiment_id, status, counts, error, failed)

    def close(self) -> None:
        """End the child (it finishes what it was asked first) and wait for it."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            stdin = self._child.stdin
            if stdin is not None:
                with contextlib.suppress(OSError):  # the child is gone already
                    stdin.close()
            try:
                self._child.wait(timeout=_START_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self._child.kill()
                self._child.wait()
            if self._child.stdout is not None:
                self._child.stdout.close()

    def _call(self, method: str, *arguments: Any) -> Any:
        from core.storage.store import StorageError

        with self._lock:
            if self._closed:
                raise StorageError("The result writer's process was closed")
            stdin, stdout = self._child.stdin, self._child.stdout
            assert stdin is not None and stdout is not None
            try:
                _send(stdin, (method, arguments))
                answer = _receive(stdout)
            except (OSError, EOFError, pickle.UnpicklingError) as error:
                code = self._child.poll()
                ended = f"it ended with code {code}" if code is not None else str(error)
                raise StorageError(
                    f"The result writer's process (pid {self._child.pid}) stopped: {ended}"
                ) from error
        kind, value = answer
        if kind == "error":
            raise StorageError(value)
        return value


def _send(stream: IO[bytes], value: Any) -> None:
    data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)))
    stream.write(data)
    stream.flush()


def _receive(stream: IO[bytes]) -> Any:
    header = stream.read(_HEADER.size)
    if len(header) < _HEADER.size:
        raise EOFError("the pipe closed")
    (size,) = _HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("the pipe closed mid-frame")
    return pickle.loads(data)  # our own child's frames, over our own pipe


_METHODS = frozenset(
    {"add_results", "add_rows", "update_experiment_progress", "heartbeat", "finish_experiment"}
)


def _serve(requests: IO[bytes], answers: IO[bytes]) -> None:
    """The child's loop: open the store, then answer each call until the pipe closes."""
    from core.storage.store import Store

    store: Store | None = None
    while True:
        try:
            method, arguments = _receive(requests)
        except EOFError:
            break
        try:
            if method == "open":
                store = Store(*arguments)
                value: Any = None
            elif method in _METHODS and store is not None:
                value = getattr(store, method)(*arguments)
            else:
                raise ValueError(f"unknown call {method!r} (or the store is not open)")
            answer: tuple[str, Any] = ("ok", value)
        except Exception as error:
            answer = ("error", f"{type(error).__name__}: {error}")
        try:
            _send(answers, answer)
        except BrokenPipeError:  # the parent is gone
            break
    if store is not None:
        store.close()


def _die_with(parent: int) -> None:
    """End this process when `parent` ends, at once, as the writer thread ends with its
    interpreter: a `kill -9` of the parent never leaves a write of this child after it (on
    Linux, `PR_SET_PDEATHSIG`; elsewhere the child ends at its next read, on the closed pipe)."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # it died before the line above
        os._exit(1)


if __name__ == "__main__":
    _die_with(int(sys.argv[1]))
    # The answers go to a copy of the pipe; anything printed goes to standard error instead,
    # never between two frames.
    _answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    _serve(sys.stdin.buffer, _answers)
