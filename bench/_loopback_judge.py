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
from core.judge.call import schema_instruction
from core.judge.schema import score_schema

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
    """Calls per second of bare `litellm.acompletion` at `concurrency`, sending the request a
    scorelab score step sends for `prompt_for(index)`: the same messages (this model takes no
    `response_format`, so the schema goes into the prompt) and the same retry settings (so the
    same litellm client and connection pool too), `concurrency` workers sharing the items as
    the experiment engine's do. Only the pipeline around the call differs."""
    module = litellm()
    instruction = schema_instruction(score_schema())
    indices = iter(range(items))

    async def worker() -> None:
        for index in indices:
            await module.acompletion(
                model=MODEL,
                messages=[
                    {"role": "system", "content": INSTRUCTIONS},
                    {"role": "user", "content": f"{prompt_for(index)}\n\n{instruction}"},
                ],
                api_base=url,
                api_key="bench",
                num_retries=0,
                max_retries=0,
            )

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(min(concurrency, items))))
    return items / (time.perf_counter() - started)
