"""docs/scorers.md, the reference the scorer modules cite, keeps up with the catalog: a
section per prebuilt scorer naming each of its options, and every citation in core/scorers
names a section that exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from core.scorers import PREBUILT

ROOT = Path(__file__).resolve().parents[2]
DOC = (ROOT / "docs" / "scorers.md").read_text(encoding="utf-8")
HEADINGS = re.findall(r"^#{2,3} (.+)$", DOC, flags=re.MULTILINE)


def _section(heading: str) -> str:
    start = DOC.index(f"### {heading}\n")
    end = re.compile(r"^#{2,3} ", re.MULTILINE).search(DOC, start + 4)
    return DOC[start : end.start() if end else len(DOC)]


@pytest.mark.parametrize("scorer_id", list(PREBUILT))
def test_each_scorer_has_a_section_naming_its_options(scorer_id: str) -> None:
    entry = PREBUILT[scorer_id]
    heading = "Checks" if scorer_id.startswith("checks.") else entry.name
    section = _section(heading)
    if scorer_id.startswith("checks."):
        assert f"`{scorer_id}`" in section
    for option in entry.options:
        assert f"`{option.name}`" in section, f"{heading} does not describe {option.name}"


def test_citations_in_the_scorer_modules_name_existing_sections() -> None:
    uncited = []
    for path in sorted((ROOT / "core" / "scorers").glob("*.py")):
        text = " ".join(path.read_text(encoding="utf-8").split())  # citations may wrap
        citations = re.findall(r"docs/scorers\.md, \"?([^\"]+)", text)
        for after in citations:
            assert any(after.startswith(heading) for heading in HEADINGS), (path.name, after)
        if not path.name.startswith("_") and "CATALOG_ENTR" in text and not citations:
            uncited.append(path.name)
    assert uncited == []
