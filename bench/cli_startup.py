"""Start-up of the `scorelab` commands that call no judge (issue 21, item 9): wall time and
whether litellm got imported.

    python bench/cli_startup.py [--runs 5] [--items 12] [--baseline CHECKOUT] [--no-bytecode]

Makes a database of its own (in a temporary folder) holding one completed experiment of a
judge scorer, run against the fake OpenAI-compatible judge of `core/testing` on loopback, then
times each command in a fresh Python process, `--runs` times:

- `scorelab experiments` and `scorelab experiments --json`;
- `scorelab export ID --json - --csv PATH`;
- `scorelab export ID --html PATH` (no pandas, NumPy or scorer module since issue 21);
- `scorelab resume ID` of that completed experiment (refused: exit 2);
- `scorelab scorers --json`;

and prints, per command, the best and median wall time, the exit code and whether litellm
was in `sys.modules` when the command returned (a child process reports it, so the figure
includes the interpreter's start). The target (issue 21): under 1 s on a quiet machine; the
load average is printed before and after, so a figure taken under load says so. With
`--baseline` (another checkout of scorelab, e.g. `git archive COMMIT | tar -x -C DIR`), each
command is also timed on that code, in alternating runs on the same database: the two figures
side by side under the same load. Each row also gives the child's best CPU time (user + system),
which load disturbs less than the wall time.

The children keep Python's compiled bytecode in a folder of their own (PYTHONPYCACHEPREFIX in
the temporary folder), written by the untimed first run of each command: what a user's second
run of a command meets. The venv is installed by uv without bytecode, and with
PYTHONDONTWRITEBYTECODE set (as in some shells) every start compiles every module it imports
again that has no bytecode yet; `--no-bytecode` measures that case.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # this checkout's core, not whatever the environment installed

from core.testing import FakeJudge  # noqa: E402
from core.testing.fake_judge import answer_from_schema  # noqa: E402

TARGET_SECONDS = 1.0
JUDGED = "toxicity-scorer"

# The child: runs one command, then reports its exit code and whether litellm was imported.
CHILD = """
import contextlib, io, json, resource, sys
from core.cli import main
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    code = main(sys.argv[1:])
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"code": code, "litellm": "litellm" in sys.modules,
                  "sqlalchemy": "sqlalchemy" in sys.modules,
                  "modules": len(sys.modules), "cpu": usage.ru_utime + usage.ru_stime}))
"""


def _loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def _environment(folder: Path, *, bytecode: bool = True) -> dict[str, str]:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    inherited = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    cache = {"PYTHONPYCACHEPREFIX": str(folder / "pycache")} if bytecode else {}
    return {
        **(inherited if bytecode else {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}),
        **cache,
        "PYTHONPATH": path,
        "SCORELAB_DATABASE_URL": f"sqlite:///{folder / 'bench.db'}",
        "SCORELAB_JUDGE_CACHE": str(folder / "judge-cache"),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "OPENAI_API_KEY": "sk-bench-startup",
    }


def _completed_experiment(env: dict[str, str], folder: Path, items: int) -> str:
    data = folder / "items.jsonl"
    data.write_text(
        "".join(
            json.dumps({"id": f"i{n}", "input": "Say hello", "output": f"hello number {n}"}) + "\n"
            for n in range(items)
        )
    )
    judge = FakeJudge(responder=answer_from_schema)
    judge.start()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "core.cli", "run", str(data), "--scorer", JUDGED,
             "--judge-model", "openai/fake-judge", "--api-base", judge.url,
             "--judge-setting", "num_retries=0", "--no-progress"],
            capture_output=True, text=True, env=env, check=False,
        )  # fmt: skip
    finally:
        judge.stop()
    if done.returncode != 0:
        raise SystemExit(f"could not make the experiment: {done.stderr.strip()[-500:]}")
    for line in done.stdout.splitlines():
        if line.startswith("Experiment "):
            return line.split()[1]
    raise SystemExit(f"no experiment id in: {done.stdout[:500]}")


def _time(
    env: dict[str, str], arguments: list[str], code: Path = ROOT
) -> tuple[float, dict[str, object]]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, *arguments],
        capture_output=True,
        text=True,
        env={**env, "PYTHONPATH": str(code)},
        cwd=code,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{arguments}: the child failed: {done.stderr.strip()[-500:]}")
    report: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return elapsed, report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="timed runs per command")
    parser.add_argument("--items", type=int, default=12, help="items of the experiment")
    parser.add_argument("--baseline", type=Path, help="another checkout, timed side by side")
    parser.add_argument(
        "--no-bytecode", action="store_true", help="compile every module at every start"
    )
    args = parser.parse_args()
    codes = {"": ROOT, **({" (baseline)": args.baseline.resolve()} if args.baseline else {})}
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        env = _environment(folder, bytecode=not args.no_bytecode)
        experiment = _completed_experiment(env, folder, args.items)
        commands = {
            "experiments": ["experiments"],
            "experiments --json": ["experiments", "--json"],
            "export --json - --csv": ["export", experiment, "--json", "-", "--csv",
                                      str(folder / "out.csv")],
            "export --html": ["export", experiment, "--html", str(folder / "out.html")],
            "resume (completed)": ["resume", experiment],
            "scorers --json": ["scorers", "--json"],
        }  # fmt: skip
        print(f"one completed experiment of {args.items} items ({JUDGED}); {args.runs} runs each; "
              f"bytecode {'compiled each start' if args.no_bytecode else 'cached'}")  # fmt: skip
        print(f"load before: {_loadavg()}")
        print(f"{'command':<36}{'best s':>8}{'median s':>10}{'CPU s':>7}{'exit':>6}  litellm  "
              "sqlalchemy  modules  verdict")  # fmt: skip
        for label, arguments in commands.items():
            for code in codes.values():
                _time(env, arguments, code)  # one untimed run: the file system's caches warm
            times: dict[str, list[float]] = {suffix: [] for suffix in codes}
            reports: dict[str, list[dict[str, object]]] = {suffix: [] for suffix in codes}
            for _ in range(args.runs):
                for suffix, code in codes.items():  # alternating: the same load for both
                    elapsed, report = _time(env, arguments, code)
                    times[suffix].append(elapsed)
                    reports[suffix].append(report)
            for suffix in codes:
                _row(label + suffix, times[suffix], reports[suffix])
        print(f"load after: {_loadavg()}")


def _row(label: str, times: list[float], reports: list[dict[str, object]]) -> None:
    imported = any(bool(r["litellm"]) for r in reports)
    alchemy = any(bool(r.get("sqlalchemy")) for r in reports)
    cpu = min(float(str(r.get("cpu", 0.0))) for r in reports)
    verdict = "ok" if min(times) < TARGET_SECONDS and not imported else "OVER TARGET"
    print(
        f"{label:<36}{min(times):>8.2f}{statistics.median(times):>10.2f}{cpu:>7.2f}"
        f"{reports[-1]['code']!s:>6}  {'yes' if imported else 'no':<7}  "
        f"{'yes' if alchemy else 'no':<10}  {reports[-1]['modules']!s:>7}  {verdict}"
    )


if __name__ == "__main__":
    sys.exit(main())
