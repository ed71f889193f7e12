"""Loading the Mastra test vectors from `../shared/vectors/` (skipped when absent).

The vectors were produced by running Mastra's real scorers; see spec prebuilt-scorers.md §6.
A case's test id is `<index in the file>-<slug of its test name>`, stable as long as the file is.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

VECTORS_DIR = Path(__file__).resolve().parents[2] / ".." / "shared" / "vectors"
CODE_VECTORS = VECTORS_DIR / "mastra-code-scorer-vectors.json"


@cache
def _all_cases() -> tuple[dict[str, Any], ...]:
    return tuple(json.loads(CODE_VECTORS.read_text(encoding="utf-8")))


def case_id(index: int, case: dict[str, Any]) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", case["test_name"].lower()).strip("-")
    return f"{index}-{slug}"


def vector_cases(*scorers: str) -> list[Any]:
    """`pytest.param(case, id=...)` for every case of the given scorers, or one skipped param
    saying why when the vectors are not there."""
    if not CODE_VECTORS.exists():
        reason = f"Mastra vectors not found at {CODE_VECTORS.resolve()} (../shared/vectors)"
        return [pytest.param(None, id="vectors-absent", marks=pytest.mark.skip(reason=reason))]
    return [
        pytest.param(case, id=case_id(index, case))
        for index, case in enumerate(_all_cases())
        if case["scorer"] in scorers
    ]


def as_messages(value: Any, role: str) -> Any:
    """A vector's `input` / `output`: a list of texts means several messages of that role."""
    if isinstance(value, list):
        return [{"role": role, "content": text} for text in value]
    return value
