"""The self-contained HTML report of a synthetic experiment: 10,000 items × 5 scorers (each
result with a judge record; 1% of runs failed), its size and build time, and the JSON and CSV
exports next to it.

    python bench/html_report.py [--items 10000] [--scorers 5] [--repeat 3] [--out PATH]
                                [--plain] [--varied]
    python bench/html_report.py --stored 100000 [--scorers 2] [--repeat 3]
                                [--baseline CHECKOUT] [--run-html] [--download]

The first form builds the report in this process and prints its size, its build time and the
process's peak RSS. `--stored N` instead stores an experiment of N results (N / scorers items ×
`--scorers` code scorers, through `scorelab run`) in a temporary SQLite database, then times
`scorelab export ID --html` in a fresh child process per round and prints its wall time, CPU
time and peak RSS (the child's own `ru_maxrss`); `--baseline` names another checkout of
scorelab (e.g. `git archive COMMIT | tar -x -C DIR`), run in alternating rounds on the same
database so the two are measured side by side under the same load. `--run-html` also times
`scorelab run ITEMS --html PATH` of those items (a new experiment each round, its report at the
end) and `--download` the dashboard's HTML download of the stored experiment (what its button
builds, in a child process without Streamlit's server: `html_download` where the checkout has
it, else the whole-experiment `experiment_html` the button used to build), each with its
child's peak RSS.

The report stays usable at that size: its data is embedded once (gzip-compressed past 2 MB, so
the file fits in an email), the browser parses it once and renders the item table 50 rows at a
time; the charts are inline SVG (no plotly.js, which was 4.6 MB). `--plain` shows the
uncompressed size too.
The synthetic texts repeat a template and compress unusually well; `--varied` gives every
input, output, ground truth and reason 20-60 random words (a 5,000-word vocabulary), closer to
real answers and judge reasons.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the synthetic experiment's builder

from reporting_tables import best_of, synthetic_detail

from core.exchange.exports import experiment_json, results_csv
from core.exchange.html import experiment_html
from core.records import ExperimentDetail

MB = 1024 * 1024
ROOT = Path(__file__).resolve().parents[1]
CODE_SCORERS = (
    "keyword-coverage-scorer",
    "completeness-scorer",
    "content-similarity-scorer",
    "textual-difference-scorer",
    "token-f1-scorer",
)

# The child: `scorelab export ID --html PATH`, then its own peak RSS and CPU time.
CHILD = """
import json, resource, sys
from core.cli import main
code = main(sys.argv[1:])
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"code": code, "rss_kb": usage.ru_maxrss, "cpu": usage.ru_utime + usage.ru_stime}))
"""


def _loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def _stored_experiment(folder: Path, results: int, scorers: int) -> tuple[dict[str, str], str]:
    """A SQLite database with one completed experiment of `results` stored results."""
    items = max(results // scorers, 1)
    data = folder / "items.jsonl"
    with data.open("w") as out:
        for n in range(items):
            row = {"id": f"i{n}", "input": f"question {n} about topic {n % 97}",
                   "output": f"an answer {n} mentioning topic {n % 97} and more words",
                   "ground_truth": f"the answer about topic {n % 97}"}  # fmt: skip
            out.write(json.dumps(row) + "\n")
    env = {**os.environ, "SCORELAB_DATABASE_URL": f"sqlite:///{folder / 'bench.db'}",
           "LITELLM_LOCAL_MODEL_COST_MAP": "True"}  # fmt: skip
    command = [sys.executable, "-m", "core.cli", "run", str(data), "--no-progress"]
    for scorer in CODE_SCORERS[:scorers]:
        command += ["--scorer", scorer]
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=ROOT, check=False)
    for line in done.stdout.splitlines():
        if line.startswith("Experiment "):
            return env, line.split()[1]
    raise SystemExit(f"could not store the experiment: {done.stderr[-800:]}{done.stdout[:400]}")


def _export_html(env: dict[str, str], code: Path, experiment: str, out: Path) -> dict[str, float]:
    child_env = {**env, "PYTHONPATH": str(code)}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, "export", experiment, "--html", str(out), "--no-progress"],
        capture_output=True, text=True, env=child_env, cwd=code, check=False,
    )  # fmt: skip
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{code}: export failed: {done.stderr[-800:]}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return {"wall": wall, "cpu": report["cpu"], "rss_mb": report["rss_kb"] / 1024,
            "size_mb": out.stat().st_size / MB}  # fmt: skip


# The child: the dashboard's HTML download of one experiment, then its peak RSS and CPU time.
DOWNLOAD_CHILD = """
import json, resource, sys
from core.service import Service
import pages.ui.downloads as downloads
from core.service.views import experiment_html
service = Service(sys.argv[1])
if hasattr(downloads, "html_download"):
    page = downloads.html_download(service, sys.argv[2])
else:  # the whole experiment, as the button built it before
    page = experiment_html(service.load_experiment(sys.argv[2]))
open(sys.argv[3], "w", encoding="utf-8").write(page)
usage = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"code": 0, "rss_kb": usage.ru_maxrss, "cpu": usage.ru_utime + usage.ru_stime}))
"""


def _child(
    env: dict[str, str], code: Path, arguments: list[str], out: Path, script: str = CHILD
) -> dict[str, float]:
    child_env = {**env, "PYTHONPATH": str(code)}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", script, *arguments],
        capture_output=True, text=True, env=child_env, cwd=code, check=False,
    )  # fmt: skip
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{code}: {arguments[:1]} failed: {done.stderr[-800:]}")
    report = json.loads(done.stdout.strip().splitlines()[-1])
    return {"wall": wall, "cpu": report["cpu"], "rss_mb": report["rss_kb"] / 1024,
            "size_mb": out.stat().st_size / MB}  # fmt: skip


def stored(
    results: int,
    scorers: int,
    repeat: int,
    baseline: Path | None,
    *,
    run_html: bool = False,
    download: bool = False,
) -> None:
    """Time `scorelab export --html` of a stored experiment (and the baseline's, alternating);
    with `run_html`, `scorelab run --html` too; with `download`, the dashboard's download."""
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        print(f"storing {results} results ({scorers} code scorers)…", flush=True)
        env, experiment = _stored_experiment(folder, results, scorers)
        codes = {"this checkout": ROOT, **({"baseline": baseline} if baseline else {})}
        out = folder / "r.html"
        kinds: dict[str, Callable[[dict[str, str], Path], dict[str, float]]] = {
            "scorelab export --html": lambda e, c: _export_html(e, c, experiment, out)
        }
        if run_html:
            command = ["run", str(folder / "items.jsonl"), "--no-progress", "--html", str(out)]
            for scorer in CODE_SCORERS[:scorers]:
                command += ["--scorer", scorer]
            kinds["scorelab run --html"] = lambda e, c: _child(e, c, command, out)
        if download:
            url = env["SCORELAB_DATABASE_URL"]
            kinds["dashboard download"] = lambda e, c: _child(
                e, c, [url, experiment, str(out)], out, DOWNLOAD_CHILD
            )
        print(f"load before: {_loadavg()}")
        for kind, measure in kinds.items():
            rounds: dict[str, list[dict[str, float]]] = {label: [] for label in codes}
            for _ in range(repeat):
                for label, code in codes.items():
                    rounds[label].append(measure(env, code))
            print(f"{kind:<24}{'best wall s':>12}{'best CPU s':>12}"
                  f"{'peak RSS MB':>13}{'report MB':>11}")  # fmt: skip
            for label, found in rounds.items():
                print(f"  {label:<22}{min(r['wall'] for r in found):>12.2f}"
                      f"{min(r['cpu'] for r in found):>12.2f}"
                      f"{max(r['rss_mb'] for r in found):>13.0f}"
                      f"{found[-1]['size_mb']:>11.2f}", flush=True)  # fmt: skip
            print(f"load now: {_loadavg()}")


def varied(detail: ExperimentDetail, seed: int = 11) -> ExperimentDetail:
    """The same experiment with random-word texts instead of the repeated templates."""
    rng = random.Random(seed)
    vocabulary = ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(2, 10)))
                  for _ in range(5_000)]  # fmt: skip

    def text() -> str:
        return " ".join(rng.choices(vocabulary, k=rng.randint(20, 60)))

    items = [
        item.model_copy(update={"input": text(), "output": text(), "ground_truth": text()})
        for item in detail.items
    ]
    results = [o.model_copy(update={"reason": text()}) for o in detail.results]
    return detail.model_copy(update={"items": items, "results": results})


def main() -> None:
    """Build the experiment once, then time each export."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=10_000)
    parser.add_argument("--scorers", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, help="also write the report there")
    parser.add_argument("--plain", action="store_true", help="also time it uncompressed")
    parser.add_argument("--varied", action="store_true", help="random-word texts")
    parser.add_argument(
        "--stored",
        type=int,
        metavar="RESULTS",
        help="time `scorelab export --html` of a stored experiment of RESULTS",
    )
    parser.add_argument("--baseline", type=Path, help="another checkout, timed side by side")
    parser.add_argument("--run-html", action="store_true", help="with --stored: run --html too")
    parser.add_argument(
        "--download", action="store_true", help="with --stored: the dashboard's download too"
    )
    args = parser.parse_args()
    if args.stored:
        stored(
            args.stored,
            min(args.scorers, len(CODE_SCORERS)),
            args.repeat,
            args.baseline,
            run_html=args.run_html,
            download=args.download,
        )
        return
    detail = synthetic_detail(args.items, args.scorers)
    if args.varied:
        detail = varied(detail)
    runs = len(detail.results) + len(detail.failures)
    failed = len(detail.failures)
    print(f"{args.items} items × {args.scorers} scorers ({runs} runs, {failed} failed)")
    experiment_html(synthetic_detail(2, 1))  # warm-up: reads the price table for the cost estimate
    html = ""
    variants = [("HTML report", {})]
    if args.plain:
        variants.append(("uncompressed", {"compress_over": 1 << 62}))
    for label, options in variants:
        seconds, text = best_of(args.repeat, lambda o=options: experiment_html(detail, **o))
        size = len(text.encode("utf-8"))
        print(f"{label + ':':13} {seconds:6.2f} s  {size / MB:6.2f} MB (charts: inline SVG)")
        html = html or text  # the default (compressed) report is the one written
    seconds, text = best_of(
        args.repeat,
        lambda: json.dumps(experiment_json(detail), ensure_ascii=False, default=str),
    )
    print(f"JSON export:  {seconds:6.2f} s  {len(text.encode('utf-8')) / MB:6.1f} MB")
    seconds, text = best_of(args.repeat, lambda: results_csv(detail))
    print(f"CSV export:   {seconds:6.2f} s  {len(text.encode('utf-8')) / MB:6.1f} MB")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS of this process: {peak:.0f} MB")
    if args.out:
        args.out.write_text(html, encoding="utf-8")
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
