"""Themes of judge reasons (core/reporting/themes.py) on synthetic reasons of growing number:
five planted topics, each phrased many ways, with filler words, item ids and numbers, so that
almost every reason is distinct (as a judge's are).

    python bench/themes.py [--reasons 817,10000] [--seed 0] [--repeat 3]

Prints, per size, the best of `--repeat` timings of `cluster_texts` (TF-IDF, KMeans for each
k in 2..6, the silhouettes), the themes found and their sizes. The first call's scikit-learn
import is timed apart; the machine's load average is printed with the figures.
"""

from __future__ import annotations

import argparse
import os
import random
import time

TOPICS = [
    ["wrong date", "incorrect year", "the date is off", "misstates when it happened"],
    ["invented source", "made-up citation", "cites a paper that does not exist", "fake reference"],
    ["rude tone", "dismissive reply", "condescending to the user", "impolite wording"],
    ["misses the question", "answers another question", "off topic", "ignores what was asked"],
    ["contradicts the context", "conflicts with the passage", "says the opposite of the text"],
]
FILLER = [
    *[
        "the",
        "response",
        "output",
        "answer",
        "claims",
        "states",
        "mentions",
        "says",
        "that",
        "this",
        "which",
        "however",
    ],
    *[
        "overall",
        "partly",
        "mostly",
        "clearly",
        "because",
        "since",
        "while",
        "although",
        "reference",
        "ground",
    ],
    *["truth", "expected", "item"],
]


def reasons(count: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    texts = []
    for n in range(count):
        topic = TOPICS[rng.randrange(len(TOPICS))]
        words = rng.sample(FILLER, 6)
        phrase = rng.choice(topic)
        text = (
            f"The {words[0]} {words[1]} {phrase}; {words[2]} {words[3]} {rng.choice(topic)} "
            f"for item q{n} (score {rng.random():.2f}, {rng.randint(1, 9999)} {words[4]})."
        )
        texts.append((f"q{n}", text))
    return texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reasons", default="817,10000")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()

    started = time.perf_counter()
    from core.reporting.themes import cluster_texts

    cluster_texts([("a", "warm up"), ("b", "the import"), ("c", "of scikit-learn"), ("d", "x")])
    print(f"first call (scikit-learn import): {time.perf_counter() - started:.2f} s")
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"load average: {load} on {os.cpu_count()} cores")
    for count in (int(n) for n in args.reasons.split(",")):
        texts = reasons(count, args.seed)
        best = float("inf")
        themes = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            themes = cluster_texts(texts, seed=args.seed)
            best = min(best, time.perf_counter() - start)
        print(f"{count:>7,} reasons: {best:.2f} s (best of {args.repeat}), {len(themes)} themes")
        for theme in themes:
            print(f"    {theme.size:>6,}  {theme.label}")


if __name__ == "__main__":
    main()
