"""A local Ray cluster for the session: a head and a second worker node on 127.0.0.1, one CPU
each, in a temporary directory, the head serving the Ray Client (`ray://`) too; stopped (by
the PIDs it started) at the end."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="the `ray` extra is not installed: pip install -e '.[ray]'")

ROOT = Path(__file__).resolve().parents[2]
RAY = str(Path(sys.executable).with_name("ray"))


@dataclass(frozen=True)
class Cluster:
    """The running test cluster."""

    address: str
    temp_dir: Path
    client_address: str = ""
    """`ray://127.0.0.1:PORT`: the head's Ray Client server."""

    def pids(self) -> set[int]:
        """Every process of this cluster: those naming its directory, and their children."""
        port = self.address.rsplit(":", 1)[1]
        named = {
            pid
            for pid, args in _processes()
            if str(self.temp_dir) in args
            # The Ray Client server names the GCS address only (and outlives the head).
            or ("ray.util.client.server" in args and f":{port} " in f"{args} ")
        }
        return _descendants(named - {os.getpid()}) - {os.getpid()}

    def chunk_workers(self) -> list[int]:
        """The worker processes running a chunk of an experiment now."""
        mine = self.pids()
        return [pid for pid, args in _processes() if pid in mine and "scorelab_chunk" in args]


def cluster_environment() -> dict[str, str]:
    """What the nodes (and so their workers) run with: this checkout first on the path (the
    same install everywhere), no token authentication on the loopback test cluster."""
    return {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "RAY_AUTH_MODE": "disabled",
        "RAY_USAGE_STATS_ENABLED": "0",
    }


@pytest.fixture(autouse=True)
def _driver_without_token_authentication(monkeypatch: pytest.MonkeyPatch) -> None:
    """The driver (this process) connects like the nodes run: without token authentication.
    Set for each test here and taken back after it, not for the whole session: the variable's
    name reads like a credential's, so its value would be masked in every later test's files."""
    monkeypatch.setenv("RAY_AUTH_MODE", "disabled")


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Cluster]:
    """Head and worker node, started once for the session."""
    # Short: Ray's unix sockets live under it and a socket path has at most 107 bytes.
    temp_dir = Path(tempfile.mkdtemp(prefix="slray-", dir="/tmp"))
    port, client_port = _free_port(), _free_port()
    env = cluster_environment()
    common = ["--num-cpus", "1", "--node-ip-address", "127.0.0.1", "--disable-usage-stats"]
    cluster = Cluster(f"127.0.0.1:{port}", temp_dir, f"ray://127.0.0.1:{client_port}")
    try:
        _ray(env, "start", "--head", "--port", str(port), "--include-dashboard=false",
             "--ray-client-server-port", str(client_port), "--temp-dir", str(temp_dir),
             *common)  # fmt: skip
        _ray(env, "start", "--address", cluster.address, *common)
        _wait_for_nodes(env, cluster.address, 2)
        yield cluster
    finally:
        import ray

        from core.experiments.ray_backend import disconnect

        disconnect()  # before the cluster goes: a driver left connected would exit the tests
        ray.shutdown()  # a test's own connection too
        _stop(cluster)
        shutil.rmtree(temp_dir, ignore_errors=True)


def _ray(env: dict[str, str], *args: str) -> None:
    done = subprocess.run([RAY, *args], env=env, capture_output=True, text=True, timeout=180)
    if done.returncode:
        raise RuntimeError(f"ray {' '.join(args)} failed:\n{done.stdout}\n{done.stderr}")


def _wait_for_nodes(env: dict[str, str], address: str, count: int) -> None:
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        status = subprocess.run(
            [RAY, "status", "--address", address], env=env, capture_output=True, text=True
        ).stdout
        active = status.split("Active:", 1)[-1].split("Pending:", 1)[0]
        if active.count("node_") >= count:
            return
        time.sleep(1)
    raise RuntimeError(f"the Ray test cluster at {address} never had {count} nodes")


def _stop(cluster: Cluster) -> None:
    """SIGTERM, then SIGKILL, to the cluster's own processes only (never `ray stop`, which
    would stop any Ray of this user on the machine)."""
    pids = cluster.pids()
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and any(_alive(pid) for pid in pids):
            time.sleep(0.2)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split(") ", 1)[1][0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"


def _processes() -> list[tuple[int, str]]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                args = (
                    (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                )
            except OSError:
                continue
            found.append((int(entry.name), args))
    return found


def _descendants(roots: set[int]) -> set[int]:
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int(
                    (entry / "stat").read_text().split(") ", 1)[1].split()[1]
                )
            except (OSError, IndexError, ValueError):
                continue
    found = set(roots)
    grew = True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in found and pid not in found:
                found.add(pid)
                grew = True
    return found


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
