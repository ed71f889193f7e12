"""What the judge-bound benchmarks share: the fake judge in its own process, and the raw
`litellm.acompletion` baseline they are compared with."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Callable

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from core.judge._litellm import litellm

MODEL = "openai/fake-judge"
INSTRUCTIONS = "You are a strict grader. Answer with JSON."


def start_fake_judge(*options: str) -> tuple[subprocess.Popen[str], str]:
    """The fake judge in its own process (as a real provider would be); returns it and its URL.
    `options`: its command-line options (e.g. `--from-schema`)."""
    process = subprocess.Popen(
        [sys.executable, "-c", "from core.testing.fake_judge import main; main()", *options],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    return process, process.stdout.readline().strip()


async def raw_calls(
    url: str, items: int, concurrency: int, prompt_for: Callable[[int], str]
) -> float:
    """Calls per second of bare `litellm.acompletion` at `concurrency`."""
    module = litellm()
    semaphore = asyncio.Semaphore(concurrency)

    async def one(index: int) -> None:
        async with semaphore:
            await module.acompletion(
                model=MODEL,
                messages=[
                    {"role": "system", "content": INSTRUCTIONS},
                    {"role": "user", "content": prompt_for(index)},
                ],
                api_base=url,
                api_key="bench",
                num_retries=0,
            )

    started = time.perf_counter()
    await asyncio.gather(*(one(i) for i in range(items)))
    return items / (time.perf_counter() - started)
