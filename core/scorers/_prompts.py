"""Prompt-building helpers of the LLM-judge scorers, so that every prompt delimits its inputs
the same way: `tagged` blocks, readable JSON, numbered context pieces, the claims-listing
prompt several scorers share, and the "Explain the score" reason step."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from core.judge import PromptStep
from core.scorers._options import call_maybe_async
from core.scorers._scores import format_score
from core.scoring import StepContext

__all__ = ["as_json", "claims_prompt", "explain_step", "numbered", "reason_prompt", "tagged"]


def tagged(tag: str, text: str) -> str:
    """`text` between `<tag>` and `</tag>` lines; a closing tag inside the text is defused so
    the text cannot end its own block."""
    safe = text.replace(f"</{tag}>", f"<\\/{tag}>")
    return f"<{tag}>\n{safe}\n</{tag}>"


def as_json(value: Any) -> str:
    """Readable JSON for prompts (non-ASCII kept as is)."""
    return json.dumps(value, ensure_ascii=False, indent=2)


def numbered(pieces: Sequence[str]) -> str:
    """Context pieces as `[0] first`, `[1] second`, ... lines (indexes from 0)."""
    return "\n".join(f"[{index}] {piece}" for index, piece in enumerate(pieces))


def reason_prompt(
    *,
    metric: str,
    score: float,
    scale: float,
    meaning: str,
    findings: str,
    example: str,
) -> str:
    """The prompt of a reason step: explain a computed score from the findings behind it."""
    return "\n\n".join(
        [
            f"Below are the {metric} score of a response and the findings it was computed "
            "from. Write a short "
            "explanation of the score for someone reading an evaluation report.",
            "Rules:\n"
            f'- Begin with "The score is {format_score(score)} because".\n'
            "- Use one to three sentences, and mention the findings that most raised or "
            "lowered the score.\n"
            "- Rely only on the findings given; do not re-judge the response or invent facts.\n"
            "- Answer in plain text, not JSON.",
            f"Score: {format_score(score)} (scale 0 to {format_score(scale)}; {meaning}).",
            tagged("findings", findings),
            f"Example of the expected form:\n{example}",
        ]
    )


def explain_step(
    *,
    metric: str,
    scale: float,
    meaning: str,
    example: str,
    findings: Callable[[StepContext], str | Awaitable[str]],
) -> PromptStep:
    """The reason step ("Explain the score") of a judge scorer: `reason_prompt` with the run's
    score; `findings(ctx)` (sync or async) gives the findings text the score came from."""

    async def create_prompt(ctx: StepContext) -> str:
        return reason_prompt(
            metric=metric,
            score=ctx.score,
            scale=scale,
            meaning=meaning,
            findings=await call_maybe_async(findings, ctx),
            example=example,
        )

    return PromptStep(description="Explain the score", create_prompt=create_prompt)


def claims_prompt(text: str, what: str = "response") -> str:
    """Ask the judge to list the claims of `text` (the assistant's response, a reference
    answer, ...), so that each can be checked on its own later."""
    return "\n\n".join(
        [
            f"List the claims made in the {what} below, so that each one can later be checked "
            "against reference material on its own.",
            "Rules:\n"
            "- A claim states that something is, was or will be the case: a fact, a figure, a "
            'date, a cause, a prediction, or a speculation (keep its hedge: "X may happen").\n'
            "- Write each claim as a short sentence that makes sense alone; split a sentence "
            "that states several things into one claim per thing.\n"
            "- Leave out greetings, questions, offers of help and pure matters of taste.\n"
            f"- Stay faithful to the {what}: add nothing, correct nothing, even when it is "
            "wrong.\n"
            f"- If the {what} makes no claim (or is empty), return an empty list.",
            'Answer with JSON: {"claims": ["...", "..."]}',
            'Example: for "The Eiffel Tower, finished in 1889, is 330 m tall. It might be '
            'repainted in 2030." the answer is\n'
            '{"claims": ["The Eiffel Tower was finished in 1889.", "The Eiffel Tower is 330 m '
            'tall.", "The Eiffel Tower might be repainted in 2030."]}',
            tagged(what.replace(" ", "_"), text),
        ]
    )
