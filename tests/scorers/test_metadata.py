"""What each prebuilt scorer compares (`core.scorers.metadata`): the table the scorer modules
declare their entries from says what the catalog says, for every option that changes it, and
reading it imports no scorer (what `scorelab export` shows in the "Compares" column)."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime
from typing import Any

import pytest

from core.records import ExperimentInfo, RunCounts, ScorerSpec
from core.scorers import PREBUILT
from core.scorers.catalog import ScorerCatalog
from core.scorers.metadata import COMPARES, comparison, comparisons

# Options that change what a scorer compares (the others compare one thing whatever is given).
_OPTIONS: list[dict[str, Any]] = [
    {},
    {"reference": "ground_truth"},
    {"reference": "input"},
    {"reference_tone": "Thanks, that is great!"},
    {"reference_tone": "", "reference": "ground_truth"},
]


def _experiment(specs: list[ScorerSpec], scorer_ids: list[str] | None = None) -> ExperimentInfo:
    ids = scorer_ids if scorer_ids is not None else [f"s{n}" for n in range(len(specs))]
    return ExperimentInfo(
        id="e1",
        name="every scorer",
        dataset_id="d1",
        dataset_fingerprint="fp",
        scorers=specs,
        scorer_ids=ids,
        status="completed",
        total_items=0,
        counts=RunCounts(),
        created_at=datetime(2026, 3, 1, tzinfo=UTC),
    )


def test_the_table_lists_exactly_the_catalogs_scorers_and_each_entry_reads_its_own() -> None:
    assert list(COMPARES) == list(PREBUILT)
    for scorer_id, entry in PREBUILT.items():
        assert entry.compares is COMPARES[scorer_id], scorer_id


@pytest.mark.parametrize("options", _OPTIONS)
def test_each_scorers_words_are_the_catalogs(options: dict[str, Any]) -> None:
    catalog = ScorerCatalog(PREBUILT)
    for scorer_id in PREBUILT:
        spec = ScorerSpec(scorer_id=scorer_id, options=options)
        assert (
            comparison(spec) == catalog.comparison(spec) == PREBUILT[scorer_id].comparison(options)
        ), (scorer_id, options)


def test_the_options_change_the_words_where_the_catalog_says_they_do() -> None:
    tone = [comparison(ScorerSpec(scorer_id="tone-scorer", options=o)) for o in _OPTIONS]
    assert tone[0] == "output tone stability (output only)"
    assert tone[1] == "output tone vs ground truth tone"
    assert tone[3] == "output tone vs the given reference tone"
    keyword = ScorerSpec(scorer_id="keyword-coverage-scorer", options={"reference": "ground_truth"})
    assert comparison(keyword) == "output vs ground truth"


def test_an_experiments_comparisons_are_the_catalogs_and_a_users_scorer_has_none() -> None:
    specs = [
        ScorerSpec(scorer_id=scorer_id, options=options)
        for scorer_id in PREBUILT
        for options in _OPTIONS[:4]
    ]
    specs.append(ScorerSpec(scorer_id="my-own-scorer", options={"reference": "ground_truth"}))
    info = _experiment(specs)
    found = comparisons(info)
    assert found == ScorerCatalog(PREBUILT).comparisons(info)
    assert len(found) == len(specs) - 1
    assert f"s{len(specs) - 1}" not in found  # the user's scorer: nothing known, as today


def test_an_import_without_its_scorers_listed_compares_nothing_known() -> None:
    info = _experiment([], scorer_ids=["tone-scorer"])
    assert comparisons(info) == ScorerCatalog(PREBUILT).comparisons(info) == {}


def test_reading_the_table_imports_no_scorer_module() -> None:
    code = (
        "import json, sys\n"
        "from core.scorers.metadata import comparison\n"
        "from core.records import ScorerSpec\n"
        "comparison(ScorerSpec(scorer_id='tone-scorer'))\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('core.'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    scorers = [m for m in loaded if m.startswith("core.scorers.")]
    assert scorers == ["core.scorers.metadata"]
    assert "core.scoring" not in loaded
