"""Experiments on a Ray cluster: the same engine, its runs spread over Ray workers.

The process that starts the experiment (the dashboard or the CLI) is the driver: it reads the
items, cuts the (item, scorer) pairs into chunks and submits one Ray task per chunk. A task
rebuilds the scorers from their specs (`ScorerRecipe`) and runs the one engine
(`core.experiments.engine.run_experiment`) on its chunk with the experiment's concurrency; its
outcomes come back to the driver, which hands them to the `ExperimentJob` exactly as the
in-process engine does (successes written by the `ResultWriter`, failures kept in the driver's
memory). docs/scale.md says how to start a cluster and why a failure never reaches a disk:

- every part a task sends back that holds a failure is packed under Ray's inline limit
  (`inline_limit`), so Ray hands it straight to the driver's in-process memory store: it never
  enters the object store (plasma), so it can never be spilled to disk; the driver checks the
  size of every such part;
- a `local:N` cluster is started with object spilling turned off as well.

A worker that dies mid-chunk: Ray runs the task again elsewhere (`max_retries`); the driver
takes each pair of a chunk once (the first outcome it receives), and the store skips a pair it
already holds, so nothing is lost or stored twice.

This module is the Ray task code (the worker's body, the connection, the driver's loop); its
pieces that need no Ray stand beside it: the chunk planning and the counts
(`core.experiments.ray_chunks`), the packing of what a task sends back
(`core.experiments.ray_parts`) and the scorers' recipe (`core.experiments.ray_recipe`).

With its two actors' modules (`core.experiments.ray_limiter`, the rate limit, and
`core.experiments.ray_budget`, the spend cap), this is the only module that imports `ray`
(lazily: the in-process default needs no Ray), an import-linter contract says so.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import queue
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from pydantic import SecretStr

from core._sync import run_coroutine_sync
from core.errors import ExperimentConfigError
from core.experiments.engine import (
    CancelToken,
    OnOutcome,
    OnProgress,
    Skip,
    final_status,
    run_experiment,
)
from core.experiments.ray_chunks import MAX_RETRIES, Chunk, Tally, plan_chunks
from core.experiments.ray_parts import (
    RAY_INLINE_DEFAULT,
    ChunkResult,
    inline_limit,
    pack_outcomes,
    unpack_outcomes,
)
from core.experiments.ray_recipe import ScorerRecipe, recipe_of
from core.judge.budget import JudgeBudget
from core.judge.config import JudgeConfig
from core.judge.credentials import JudgeKey
from core.judge.rate_limit import RateLimit
from core.records import (
    DatasetItem,
    ExperimentSummary,
    RunCounts,
    ScorerOutcome,
    ScorerSpec,
)
from core.scorers import PrebuiltScorer
from core.scoring import Scorer

__all__ = [
    "RAY_ADDRESS_ENV",
    "ChunkResult",
    "RayRunner",
    "RayTarget",
    "ScorerRecipe",
    "check_ray_address",
    "disconnect",
    "inline_limit",
    "pack_outcomes",
    "ray_runner",
    "ray_target",
    "recipe_of",
    "unpack_outcomes",
]

logger = logging.getLogger(__name__)

RAY_ADDRESS_ENV = "SCORELAB_RAY_ADDRESS"
"""Where experiments run when no address is given: `auto`, `ray://host:10001`, `host:port`
(a cluster's GCS address) or `local:N`; unset or `in-process`: in this process."""

_FLUSH_EVERY_S = 0.5
"""How often a running chunk sends back what it finished (the driver's progress follows)."""


# ---- where to run ----


@dataclass(frozen=True, slots=True)
class RayTarget:
    """A parsed Ray address."""

    address: str | None
    """What `ray.init(address=...)` gets; None for a throw-away local cluster."""
    local_workers: int = 0
    """`local:N`: the N worker processes of the local cluster started for the run."""

    def describe(self) -> str:
        """One line for the person starting the run."""
        if self.address is None:
            return f"Ray: a local cluster of {self.local_workers} worker process(es)"
        return f"Ray: the cluster at {self.address}"


def ray_target(address: str | None, environ: Mapping[str, str] | None = None) -> RayTarget | None:
    """The Ray cluster an experiment runs on: `address` if given, else SCORELAB_RAY_ADDRESS;
    None (or `in-process`) runs it in this process. Raises ExperimentConfigError naming a bad
    address."""
    environ = os.environ if environ is None else environ
    where = "the Ray address" if address is not None else RAY_ADDRESS_ENV
    text = (address if address is not None else environ.get(RAY_ADDRESS_ENV, "")).strip()
    if not text or text == "in-process":
        return None
    if text.startswith("local:"):
        count = text.removeprefix("local:")
        if not count.isdigit() or not 1 <= int(count) <= 256:
            raise ExperimentConfigError(
                f"{where} {text!r}: local:N needs N, the worker processes, from 1 to 256"
            )
        return RayTarget(None, int(count))
    if text == "auto" or text.startswith("ray://") or _is_host_port(text):
        return RayTarget(text)
    raise ExperimentConfigError(
        f"{where} {text!r} is not a Ray address: use auto, ray://host:10001, host:port (the "
        "head's GCS port), local:N or in-process"
    )


def _is_host_port(text: str) -> bool:
    host, _, port = text.rpartition(":")
    return bool(host) and port.isdigit() and "/" not in text


# ---- the worker side ----

_built: dict[tuple[Any, ...], list[Scorer]] = {}
_built_lock = threading.Lock()


def _scorers(recipe: ScorerRecipe, typed_key: SecretStr | None) -> list[Scorer]:
    """The recipe's scorers, built once per worker process (a chunk after another reuses them)."""
    key = (
        tuple(spec.model_dump_json() for spec in recipe.specs),
        None if recipe.judge is None else recipe.judge.model_dump_json(),
        recipe.key,
        None if recipe.catalog is None else tuple(sorted(recipe.catalog)),
        None if typed_key is None else typed_key.get_secret_value(),
    )
    with _built_lock:
        if len(_built) > 8:
            _built.clear()
        scorers = _built.get(key)
        if scorers is None:
            scorers = _built[key] = recipe.build(typed_key)
        return scorers


def run_chunk(
    recipe: ScorerRecipe,
    typed_key: SecretStr | None,
    units: list[tuple[DatasetItem, tuple[str, ...]]],
    concurrency: int,
    limiter: Any = None,
    budget: tuple[Any, float] | None = None,
) -> Iterator[bytes]:
    """The body of a chunk's Ray task (a generator: its parts stream back as they are made):
    the engine over `units` (each an item and the scorer ids to run on it), outcomes packed
    by `pack_outcomes` every `_FLUSH_EVERY_S`. `budget`: the spend cap's actor and its cap
    (`core.experiments.ray_budget`): a run it refuses is not sent back (not finished)."""
    if limiter is not None:
        _install_proxy_limiter(limiter)
    proxy = None
    if budget is not None:
        from core.experiments.ray_budget import RayBudgetProxy

        proxy = RayBudgetProxy(*budget, concurrency=concurrency)
        proxy.prime()
    scorers = _scorers(recipe, typed_key)
    wanted = {(item.id, scorer_id) for item, ids in units for scorer_id in ids}
    finished: queue.SimpleQueue[ScorerOutcome] = queue.SimpleQueue()
    engine_loop = _engine_loop()
    future = asyncio.run_coroutine_threadsafe(
        run_experiment(
            items=[item for item, _ in units],
            scorers=scorers,
            concurrency=concurrency,
            on_outcome=finished.put,
            skip=lambda item, scorer_id: (item.id, scorer_id) not in wanted,
            budget=proxy,
        ),
        engine_loop,
    )
    limit = inline_limit()
    try:
        while not future.done():
            concurrent.futures.wait([future], timeout=_FLUSH_EVERY_S)
            for part in pack_outcomes(_drained(finished), limit):
                yield part  # not `yield from`: Ray's generator wrapper wants real yields
        future.result()  # an engine error is the task's error
        if proxy is not None:
            proxy.flush()  # its settlements and the unspent slice go back (not waited for)
            proxy = None
        for part in pack_outcomes(_drained(finished), limit):
            yield part
    finally:
        future.cancel()
        if proxy is not None and future.done():
            with contextlib.suppress(Exception):
                proxy.flush()  # an engine error: what its slice holds unspent goes back


def run_chunk_whole(
    recipe: ScorerRecipe,
    typed_key: SecretStr | None,
    units: list[tuple[DatasetItem, tuple[str, ...]]],
    concurrency: int,
    limiter: Any = None,
    budget: tuple[Any, float] | None = None,
) -> list[bytes]:
    """`run_chunk` for a driver connected through the Ray Client (`ray://`), which has no
    streaming generators: every part at the end, one return value each (the task has one
    return per pair of the chunk, plus one: a part holds one outcome at least), padded with
    empty ones; so each stays a return of its own under the inline limit."""
    parts = list(run_chunk(recipe, typed_key, units, concurrency, limiter, budget))
    slots = sum(len(ids) for _, ids in units) + 1
    return parts + [b""] * (slots - len(parts))


def _drained(finished: queue.SimpleQueue[ScorerOutcome]) -> list[ScorerOutcome]:
    taken = []
    while not finished.empty():
        taken.append(finished.get())
    return taken


def _engine_loop() -> asyncio.AbstractEventLoop:
    """The worker's one event loop (core._sync's): litellm's clients stay valid across chunks."""
    loop: asyncio.AbstractEventLoop = run_coroutine_sync(_running_loop())
    return loop


async def _running_loop() -> asyncio.AbstractEventLoop:
    return asyncio.get_running_loop()


def _install_proxy_limiter(limiter: Any) -> None:
    """Hook for the cluster-wide rate limit (see `core.experiments.ray_limiter`)."""
    from core.experiments.ray_limiter import install_proxy

    install_proxy(limiter)


# ---- the driver side ----

_remote_chunk: Any = None
_remote_whole_chunk: Any = None


def _chunk_task() -> Any:
    """`run_chunk` as a Ray task, made on first use (importing ray is left to this moment)."""
    global _remote_chunk
    if _remote_chunk is None:
        import ray

        _remote_chunk = ray.remote(num_cpus=1, max_retries=MAX_RETRIES, retry_exceptions=False)(
            run_chunk
        ).options(name="scorelab_chunk")
    return _remote_chunk


def _whole_chunk_task() -> Any:
    """`run_chunk_whole` as a Ray task (a driver on the Ray Client), made on first use."""
    global _remote_whole_chunk
    if _remote_whole_chunk is None:
        import ray

        _remote_whole_chunk = ray.remote(
            num_cpus=1, max_retries=MAX_RETRIES, retry_exceptions=False
        )(run_chunk_whole)
    return _remote_whole_chunk


class _WholeChunk:
    """A chunk's task run whole (`run_chunk_whole`), read as a generator's parts are: ready
    when its first return is, its parts then taken one by one."""

    def __init__(self, refs: list[Any]) -> None:
        self.refs = refs
        self._parts: list[bytes] | None = None

    def next_part(self) -> bytes:
        """The next part; StopIteration after the last."""
        import ray

        if self._parts is None:
            self._parts = [part for part in ray.get(self.refs) if part]
            self._parts.reverse()
        if not self._parts:
            raise StopIteration
        return self._parts.pop()


class _Connection:
    """This process's connection to Ray, shared by the experiments running at once. A cluster
    connection stays open after a run: the cluster's workers belong to this driver's job, so
    the next experiment finds them started, litellm imported (each run would pay that
    otherwise). A `local:N` cluster stops with the last run using it. One target at a time."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users = 0
        self._target: RayTarget | None = None
        self._owned = False

    def acquire(self, target: RayTarget) -> None:
        import ray

        with self._lock:
            if self._users and target != self._target:
                raise ExperimentConfigError(
                    f"This process is connected to Ray for another experiment "
                    f"({self._target.describe() if self._target else 'elsewhere'}); one target "
                    "at a time: wait for it to end, or use the same address"
                )
            if not self._users and target != self._target and self._owned:
                ray.shutdown()  # connected elsewhere, and nothing runs there now
                self._owned, self._target = False, None
            if not ray.is_initialized():
                _reached(ray, target)
                self._owned = True
            self._target = target
            self._users += 1

    def check(self, target: RayTarget) -> None:
        """Connect to `target` now (the connection is the run's, kept open for it): an
        address nothing answers at is refused before the experiment is stored."""
        if target.address is not None:
            try:  # even when this process is connected already (maybe elsewhere)
                _probe(target.address)
            except (OSError, ValueError) as error:
                raise _unreachable(target.address, error) from None
        self.acquire(target)
        self.release()

    def release(self) -> None:
        import ray

        with self._lock:
            self._users -= 1
            local = self._target is not None and self._target.address is None
            if not self._users and self._owned and local:
                ray.shutdown()
                self._owned, self._target = False, None

    def close(self) -> None:
        import ray

        with self._lock:
            if self._users:
                raise RuntimeError("An experiment still runs on Ray: cancel it first")
            if self._owned:
                ray.shutdown()
            self._owned, self._target = False, None


_connection = _Connection()


def check_ray_address(address: str | None) -> None:
    """Refuse, before anything is stored, the Ray address an experiment would run on
    (`address`, else SCORELAB_RAY_ADDRESS) when it is not one, Ray is not installed, or no
    cluster answers there (ExperimentConfigError naming it); a cluster's address is connected
    to, the connection kept for the run. Nothing to check for `in-process` or `local:N`."""
    target = ray_target(address)
    if target is None or target.address is None:
        return
    try:
        import ray  # noqa: F401  (only to say early that it is missing)
    except ImportError:
        raise ExperimentConfigError(
            f"Running on Ray ({target.describe()}) needs Ray installed: pip install 'scorelab[ray]'"
        ) from None
    _connection.check(target)


def disconnect() -> None:
    """Drop this process's connection to a Ray cluster, kept open between experiments (e.g.
    before that cluster stops). Raises RuntimeError while an experiment runs on it."""
    if "ray" in sys.modules:
        _connection.close()


_PROBE_TIMEOUT_S = 5.0
"""How long the driver waits for a TCP connection to the address before calling it unreachable
(Ray itself waits 30 s for a Ray Client server, and hangs on a GCS address nobody serves)."""


def _reached(ray: Any, target: RayTarget) -> None:
    """`_init`, after a TCP probe of a `host:port` or `ray://` address; an address nothing
    answers at is an ExperimentConfigError naming it."""
    if target.address is None:
        _init(ray, target)
        return
    try:
        _probe(target.address)
        _init(ray, target)
    except (OSError, TimeoutError, RuntimeError, ValueError) as error:  # ConnectionError too
        with contextlib.suppress(Exception):
            ray.shutdown()  # what a half-made connection left
        raise _unreachable(target.address, error) from None


def _probe(address: str) -> None:
    """A TCP connection to a `host:port` or `ray://` address (OSError when none answers)."""
    if address == "auto":
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    with socket.create_connection((host.strip("[]"), int(port)), _PROBE_TIMEOUT_S):
        pass


def _unreachable(address: str, error: BaseException) -> ExperimentConfigError:
    detail = " ".join(str(error).split())[:300] or type(error).__name__
    return ExperimentConfigError(
        f"The Ray cluster at {address!r} could not be reached ({detail}): is it started "
        "there (`ray start --head`; for ray://, with `--ray-client-server-port`), and is "
        "the address right?"
    )


def _init(ray: Any, target: RayTarget) -> None:
    settings: dict[str, Any] = {
        "namespace": "scorelab",
        "logging_level": "WARNING",
        "log_to_driver": False,
    }
    if target.address is not None:
        _init_at(ray, target.address, settings)
        return
    # A throw-away cluster: no dashboard, a small object store, and spilling off, so nothing
    # (failures or anything else) is ever written to this machine's disk by Ray.
    ray.init(
        num_cpus=target.local_workers,
        include_dashboard=False,
        object_store_memory=128 * 1024 * 1024,
        _system_config={"automatic_object_spilling_enabled": False},
        **settings,
    )


_CLIENT_SERVER_FAILED = (
    "Starting Ray client server failed",
    "Proxy failed to Connect to backend",
    "start_specific_server",
)
"""What Ray's client proxy answers when the per-connection server it starts for this client
failed: its two messages, and the frame of a traceback raised while starting it."""
_CLIENT_SERVER_RETRY_PAUSE_S = 2.0


def _init_at(ray: Any, address: str, settings: Mapping[str, Any]) -> None:
    """`ray.init` at an existing cluster. A Ray Client server that could not start the
    per-connection server it forks for this client (Ray's own "Starting Ray client server
    failed", or an error raised while starting it: each seen once on a loaded CI machine) is
    asked once more before the address is called unreachable."""
    try:
        ray.init(address=address, **settings)
    except (RuntimeError, ConnectionError) as error:  # Ray's client: ConnectionAbortedError
        text = str(error)
        if not address.startswith("ray://") or not any(
            sign in text for sign in _CLIENT_SERVER_FAILED
        ):
            raise
        logger.warning(
            "The Ray Client server at %s could not start this connection's server; "
            "asking once more", address
        )
        with contextlib.suppress(Exception):
            ray.shutdown()
        time.sleep(_CLIENT_SERVER_RETRY_PAUSE_S)
        ray.init(address=address, **settings)


class _Spend:
    """The driver's side of a spend cap on Ray: the budget actor the workers reserve from
    (`core.experiments.ray_budget`), its figures mirrored on the experiment's `JudgeBudget`
    (what the progress reads) as the run goes."""

    def __init__(self, budget: JudgeBudget) -> None:
        from core.experiments.ray_budget import budget_holder

        self.budget = budget
        self.actor = budget_holder(budget.max_cost_usd)
        self.held: tuple[Any, float] = (self.actor, budget.max_cost_usd)
        self._read_at = -1.0

    def reached(self, every_s: float = 0.0) -> bool:
        """Whether the actor refused a request (read anew at most every `every_s`)."""
        now = time.monotonic()
        if now - self._read_at >= every_s:
            self._read()
            self._read_at = now
        return self.budget.reached

    def _read(self) -> None:
        import ray

        self.budget.mirror(*ray.get(self.actor.figures.remote()))

    def close(self) -> None:
        """The last figures (once the chunks' slices are back), then the actor goes."""
        import ray

        from core.experiments.ray_budget import settled_figures

        try:
            self.budget.mirror(*settled_figures(self.actor))
        finally:
            ray.kill(self.actor)


@dataclass
class RayRunner:
    """Runs an experiment on Ray with `run_experiment`'s keyword arguments (the `runner` of an
    `ExperimentJob`): the scorers given are the driver's, used for their ids only."""

    target: RayTarget
    recipe: ScorerRecipe
    typed_key: SecretStr | None = None
    chunk_size: int | None = None
    """Pairs per chunk; default: 4 × concurrency, at least 16."""
    limits: Mapping[str, RateLimit] | None = None
    """Judge rate limits per model, shared by every worker (`core.experiments.ray_limiter`)."""
    part_sizes: list[int] = field(default_factory=list)
    """Bytes of each part received that held a failure (each checked under the inline limit)."""

    async def __call__(
        self,
        *,
        items: Iterable[DatasetItem],
        scorers: Sequence[Scorer],
        concurrency: int = 8,
        item_count: int | None = None,
        on_outcome: OnOutcome | None = None,
        on_progress: OnProgress | None = None,
        cancel: CancelToken | None = None,
        skip: Skip | None = None,
        budget: JudgeBudget | None = None,
        **_: Any,
    ) -> ExperimentSummary:
        return await asyncio.to_thread(
            self._drive, items, [s.id for s in scorers], concurrency, item_count, on_outcome,
            cancel, skip, budget,
        )  # fmt: skip

    def _drive(
        self,
        items: Iterable[DatasetItem],
        scorer_ids: list[str],
        concurrency: int,
        item_count: int | None,
        on_outcome: OnOutcome | None,
        cancel: CancelToken | None,
        skip: Skip | None,
        budget: JudgeBudget | None,
    ) -> ExperimentSummary:
        if item_count is None:
            item_count = len(items)  # type: ignore[arg-type]
        tally = Tally(RunCounts(total=item_count * len(scorer_ids)))
        started_at = datetime.now(UTC)
        _connection.acquire(self.target)
        try:
            spend = None if budget is None else _Spend(budget)
            try:
                aborted = self._submit_all(
                    items, scorer_ids, concurrency, tally, on_outcome, cancel, skip, spend
                )
            finally:
                if spend is not None:
                    spend.close()
        finally:
            _connection.release()
        counts = tally.counts
        cancelled = aborted or (cancel is not None and cancel.cancelled and counts.skipped > 0)
        capped = budget is not None and budget.reached and counts.skipped > 0
        return ExperimentSummary(
            status=final_status(counts, cancelled, capped),
            counts=counts,
            scores=tally.means(),
            started_at=started_at,
            finished_at=datetime.now(UTC),
        )

    def _submit_all(
        self,
        items: Iterable[DatasetItem],
        scorer_ids: list[str],
        concurrency: int,
        tally: Tally,
        on_outcome: OnOutcome | None,
        cancel: CancelToken | None,
        skip: Skip | None,
        spend: _Spend | None = None,
    ) -> bool:
        """Submit the chunks, at most a few more than the cluster's CPUs at once (the items
        are read as they go), and take their parts as they come; under a spend cap (`spend`),
        none once it is reached. True when aborted."""
        import ray

        whole = self.target.address is not None and self.target.address.startswith("ray://")
        task = _whole_chunk_task() if whole else _chunk_task()
        limiter = None
        if self.limits:
            from core.experiments.ray_limiter import shared_limiter
            from core.judge import rate_limit

            # Read now, as the in-process limiter does: tests shorten the window.
            limiter = shared_limiter(self.limits, rate_limit.DEFAULT_WINDOW_S)
        cpus = ray.cluster_resources().get("CPU", 1)  # type: ignore[no-untyped-call]
        slots = max(2, int(cpus) + 1)
        size = self.chunk_size or max(16, 4 * concurrency)
        running: dict[Any, Chunk] = {}

        held = None if spend is None else spend.held

        def submit(chunk: Chunk) -> None:
            if spend is not None and spend.reached():
                return  # the cap is reached: what the chunk holds is not run (skipped)
            arguments = (self.recipe, self.typed_key, chunk.units, concurrency, limiter, held)
            if whole:
                slots = sum(len(ids) for _, ids in chunk.units) + 1
                refs = task.options(num_returns=slots, name="scorelab_chunk").remote(*arguments)
                running[_WholeChunk(refs)] = chunk
            else:
                running[task.remote(*arguments)] = chunk

        chunks = plan_chunks(items, scorer_ids, skip, size, tally)
        exhausted = False
        while True:
            stopping = (cancel is not None and cancel.cancelled) or (
                spend is not None and spend.reached(every_s=0.2)
            )
            while not exhausted and not stopping and len(running) < slots:
                chunk = next(chunks, None)
                if chunk is None:
                    exhausted = True
                    break
                submit(chunk)
            if not running:
                return False
            waited = {_waitable(generator): generator for generator in running}
            if cancel is not None and cancel._abort.is_set():
                for waitable in waited:
                    ray.cancel(waitable)
                return True
            ready, _ = ray.wait(list(waited), num_returns=1, timeout=0.2)
            for waitable in ready:
                self._take(waited[waitable], running, tally, on_outcome, submit)

    def _take(
        self,
        generator: Any,
        running: dict[Any, Chunk],
        tally: Tally,
        on_outcome: OnOutcome | None,
        submit: Callable[[Chunk], None],
    ) -> None:
        """The next part of a chunk; at its end, the pairs it never sent back go out again as
        a chunk of their own. Ray retries a task whose worker died, but a retried generator's
        parts at positions the driver already took are dropped by Ray, and the retry cuts its
        parts differently (outcomes finish in another order): so the driver, which knows what
        it received, asks for the rest itself."""
        import ray

        chunk = running[generator]
        try:
            if isinstance(generator, _WholeChunk):
                part = generator.next_part()
            else:
                part = ray.get(next(generator))
        except StopIteration:
            del running[generator]
            if chunk.pending:
                submit(chunk.rest())
            return
        except ray.exceptions.RayError as error:  # its retries spent: a chunk's last chance
            del running[generator]
            if chunk.attempts >= MAX_RETRIES:
                raise
            logger.warning("A Ray chunk failed (%s): its missing runs go out again", error)
            submit(chunk.rest())
            return
        outcomes = unpack_outcomes(part)
        if any(o.status != "success" for o in outcomes):
            self._check_inline(part)
        for outcome in outcomes:
            key = (outcome.item_id, outcome.scorer_id)
            if key not in chunk.pending:
                continue  # a retried chunk sends again what the driver already has
            chunk.pending.discard(key)
            tally.add(outcome)
            if on_outcome is not None:
                on_outcome(outcome)

    def _check_inline(self, part: bytes) -> None:
        self.part_sizes.append(len(part))
        if len(part) > RAY_INLINE_DEFAULT:
            raise RuntimeError(
                f"A part holding a failure came back with {len(part):,} bytes, over Ray's "
                f"inline limit ({RAY_INLINE_DEFAULT:,}): it may have gone to the object store"
            )


def _waitable(generator: Any) -> Any:
    """What `ray.wait` waits on for a running chunk."""
    return generator.refs[0] if isinstance(generator, _WholeChunk) else generator


def ray_runner(
    address: str | None,
    specs: Sequence[ScorerSpec],
    judge: JudgeConfig | None,
    typed_key: SecretStr | str | None = None,
    catalog: Mapping[str, PrebuiltScorer] | None = None,
    *,
    limits: Mapping[str, RateLimit] | None = None,
    key: JudgeKey | None = None,
) -> RayRunner | None:
    """The runner of an experiment on Ray (None: in this process), from `address` or
    SCORELAB_RAY_ADDRESS; `limits`: the judge rate limits (model -> limit) the whole cluster
    keeps together (`core.experiments.ray_limiter`); `key`: the judge's key as its route
    decided it (`core.judge.credentials.route_judge`). Raises ExperimentConfigError for a bad
    address, one nothing answers at (a cluster's address is connected to here, before the
    experiment is stored), or when Ray is not installed (`pip install 'scorelab[ray]'`). A
    spend cap needs
    nothing here: the runner is given the experiment's `JudgeBudget` and keeps it in a Ray
    actor (`core.experiments.ray_budget`)."""
    target = ray_target(address)
    if target is None:
        return None
    try:
        import ray  # noqa: F401  (only to say early that it is missing)
    except ImportError:
        raise ExperimentConfigError(
            f"Running on Ray ({target.describe()}) needs Ray installed: pip install 'scorelab[ray]'"
        ) from None
    if target.address is not None:
        _connection.check(target)  # before anything is stored: a refused address names itself
    recipe, typed = recipe_of(specs, judge, typed_key, catalog, key)
    wanted = {model: limit for model, limit in (limits or {}).items() if not limit.is_unlimited()}
    return RayRunner(target, recipe, typed, limits=wanted or None)
