"""Throughput of the prebuilt code scorers, in runs/s through `scorer.run_sync`.

    python bench/code_scorers.py [--pairs 1000] [--seconds 2]

Generates realistic question/answer pairs in-process (seeded, so every run sees the same
data), warms each scorer up on a slice of them, then times `run_sync` over all pairs for at
least `--seconds` and prints runs/s next to the target: 5x the throughput of Mastra's own
scorers (@mastra/evals 1.10.2 on Node 20) measured on this machine.
"""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable
from typing import Any

from core.scorers import (
    create_completeness_scorer,
    create_content_similarity_scorer,
    create_keyword_coverage_scorer,
    create_textual_difference_scorer,
    create_tone_scorer,
)

# Mastra's measured runs/s on this machine; the target is five times as many.
MASTRA_RUNS_PER_S = {
    "keyword coverage": 680,
    "completeness": 70,
    "content similarity": 1400,
    "textual difference": 1030,
    "tone": 950,
}

SUBJECTS = [
    "React", "Vue", "TypeScript", "Python", "Rust", "Kubernetes", "PostgreSQL", "Redis",
    "Node.js", "Docker", "GraphQL", "machine learning", "a neural network", "the database",
    "the cache", "the scheduler", "our API", "the compiler", "the test suite", "the frontend",
    "a transformer model", "the search index", "the payment service", "the mobile app",
]  # fmt: skip
TOPICS = [
    "memory management", "error handling", "type inference", "state management", "caching",
    "authentication", "rate limiting", "schema migrations", "hyperparameter tuning",
    "feature engineering", "garbage collection", "concurrency", "logging", "deployment",
    "dependency injection", "code splitting", "query planning", "data preprocessing",
    "unit testing", "load balancing", "observability", "backpressure", "pagination",
]  # fmt: skip
QUESTIONS = [
    "How does {s} handle {t}?",
    "What is the best way to approach {t} in {s}?",
    "Can you explain {t} for {s} to a new engineer?",
    "Why does {s} struggle with {t} under heavy load?",
    "What are the trade-offs of {t} when using {s}?",
    "Is {t} in {s} worth the extra complexity?",
]
OPENERS = [
    "In {s}, {t} is handled by a dedicated layer that keeps the core simple.",
    "{S} approaches {t} with a small set of well-tested primitives.",
    "Great question! {t} in {s} is easier than it looks.",
    "Honestly, {t} in {s} can be frustrating at first.",
    "The short answer is that {s} delegates most of {t} to the runtime.",
]
DETAILS = [
    "It tracks every request and retries failed calls with exponential backoff.",
    "The design favours explicit configuration over hidden magic, which helps debugging.",
    "You should measure first, because premature optimisation wastes time.",
    "Most teams start with the defaults and tune them once real traffic arrives.",
    "Benchmarks show a clear improvement, although results vary across workloads.",
    "The documentation is excellent and the community is friendly and helpful.",
    "Unfortunately the error messages are confusing and the defaults are poor.",
    "A common mistake is to ignore timeouts, which causes terrible cascading failures.",
    "Tests should cover the edge cases: empty inputs, huge payloads and slow networks.",
    "Caching the results avoids repeated work and keeps latency predictable.",
    "Security reviews are essential, since a single leak can be disastrous.",
    "The new release fixed several annoying bugs and added useful features.",
    "Monitoring dashboards make regressions visible before users notice them.",
    "It integrates well with existing tools, so adoption is usually smooth.",
]
CLOSERS = [
    "Overall, it works well for most projects.",
    "I would recommend trying it on a small service first.",
    "Let me know if you want a concrete example.",
    "In short: keep it simple and measure everything",
    "",
]


def make_pairs(count: int, seed: int = 7) -> list[tuple[str, str]]:
    """`count` question/answer pairs of 1 to 2 sentences / 3 to 6 sentences."""
    rng = random.Random(seed)
    pairs: list[tuple[str, str]] = []
    for _ in range(count):
        subject, topic = rng.choice(SUBJECTS), rng.choice(TOPICS)
        fill = {"s": subject, "S": subject[0].upper() + subject[1:], "t": topic}
        question = rng.choice(QUESTIONS).format(**fill)
        if rng.random() < 0.3:
            question += " " + rng.choice(DETAILS)
        sentences = [rng.choice(OPENERS).format(**fill)]
        sentences += rng.sample(DETAILS, rng.randint(2, 4))
        sentences.append(rng.choice(CLOSERS))
        pairs.append((question, " ".join(sentence for sentence in sentences if sentence)))
    return pairs


def runs_per_second(
    run: Callable[[str, str], Any], pairs: list[tuple[str, str]], seconds: float
) -> float:
    for question, answer in pairs[:200]:  # warm-up: imports, caches, lexicons
        run(question, answer)
    done = 0
    started = time.perf_counter()
    while True:
        for question, answer in pairs:
            run(question, answer)
        done += len(pairs)
        elapsed = time.perf_counter() - started
        if elapsed >= seconds:
            return done / elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    pairs = make_pairs(args.pairs)
    scorers = {
        "keyword coverage": create_keyword_coverage_scorer(),
        "completeness": create_completeness_scorer(),
        "content similarity": create_content_similarity_scorer(),
        "textual difference": create_textual_difference_scorer(),
        "tone": create_tone_scorer(),
    }
    words = sum(len(q.split()) + len(a.split()) for q, a in pairs) / len(pairs)
    print(f"{len(pairs)} question/answer pairs, {words:.0f} words per pair on average")
    print(f"{'scorer':<20}{'runs/s':>10}{'target':>10}{'Mastra':>10}{'x Mastra':>10}  verdict")
    for name, scorer in scorers.items():

        def run(question: str, answer: str, scorer: Any = scorer) -> Any:
            return scorer.run_sync(input=question, output=answer)

        rate = runs_per_second(run, pairs, args.seconds)
        mastra = MASTRA_RUNS_PER_S[name]
        verdict = "ok" if rate >= 5 * mastra else "BELOW TARGET"
        figures = f"{rate:>10,.0f}{5 * mastra:>10,}{mastra:>10,}{rate / mastra:>10.1f}"
        print(f"{name:<20}{figures}  {verdict}")


if __name__ == "__main__":
    main()
