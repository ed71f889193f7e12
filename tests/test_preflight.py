"""Pre-flight: an experiment whose scorers need a field the dataset does not map is refused
before anything is stored or any judge is called, with a message for the person in front of
the page; and what each scorer compared is said in words everywhere an experiment is read."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.exchange.exports import experiment_json_text
from core.records import ExperimentConfig, ScorerSpec
from core.service import ExperimentConfigError, Service
from core.testing import FakeJudge

WITH_TRUTH = (
    b"id,question,answer,expected\n"
    b"a,Who is Luke's father?,No. I am your father,No. I am your father\n"
    b"b,What is 2+2?,5,4\n"
)
WITHOUT_TRUTH = b"id,question,answer\na,Who is Luke's father?,No. I am your father\n"
WITH_CONTEXT = (
    b"id,question,answer,context\na,Who is Luke's father?,Darth Vader,Vader is Luke's father\n"
)


@pytest.fixture
def service(tmp_path: Path) -> Iterator[Service]:
    shared = Service(f"sqlite:///{tmp_path / 'preflight.db'}", samples_dir=tmp_path / "none")
    yield shared
    shared.store.close()


def start(service: Service, data: bytes, *specs: ScorerSpec, **judge: str) -> str:
    dataset = service.import_dataset("quiz.csv", data)
    return service.start_experiment(
        ExperimentConfig(dataset_id=dataset.id, scorers=list(specs), **judge)
    )


def judge_for(server: FakeJudge) -> dict[str, str]:
    return {"judge_model": "openai/fake-judge", "api_base": server.url}


def test_a_context_scorer_without_a_context_column_is_refused_before_any_call(
    service: Service, judge_server: FakeJudge
) -> None:
    with pytest.raises(ExperimentConfigError) as refused:
        start(
            service,
            WITHOUT_TRUTH,
            ScorerSpec(scorer_id="faithfulness-scorer"),
            **judge_for(judge_server),
        )
    message = str(refused.value)
    assert "Faithfulness needs the context the output is judged against" in message
    assert "a column named 'context'" in message and "dataset 'quiz'" in message
    assert "'id', 'question', 'answer'" in message  # what the dataset does have
    assert "give the scorer's 'context' option" in message  # the other way out
    assert service.list_experiments() == [] and judge_server.call_count == 0


@pytest.mark.parametrize(
    "scorer_id", ["hallucination-scorer", "context-precision-scorer", "context-relevance-scorer"]
)
def test_every_context_scorer_is_checked(
    service: Service, judge_server: FakeJudge, scorer_id: str
) -> None:
    with pytest.raises(ExperimentConfigError, match="a column named 'context'"):
        start(service, WITHOUT_TRUTH, ScorerSpec(scorer_id=scorer_id), **judge_for(judge_server))


def test_context_recall_needs_the_ground_truth_too(
    service: Service, judge_server: FakeJudge
) -> None:
    with pytest.raises(ExperimentConfigError) as refused:
        start(
            service,
            WITH_CONTEXT,
            ScorerSpec(scorer_id="context-recall-scorer"),
            **judge_for(judge_server),
        )
    assert "maps no ground-truth column" in str(refused.value)
    assert "'context'" not in str(refused.value).split("(its columns")[0]  # context is there


def test_a_context_column_or_option_lets_the_experiment_start(
    service: Service, judge_server: FakeJudge
) -> None:
    judge_server.responder = lambda request: '{"score": 1}'
    for data, options in ((WITH_CONTEXT, {}), (WITHOUT_TRUTH, {"context": ["Vader is it"]})):
        started = start(
            service,
            data,
            ScorerSpec(scorer_id="faithfulness-scorer", options=options),
            **judge_for(judge_server),
        )
        service.wait(started, timeout=60)  # it ran (its outcome is the judge tests' business)


def test_every_problem_is_listed_in_one_message(service: Service, judge_server: FakeJudge) -> None:
    with pytest.raises(ExperimentConfigError) as refused:
        start(
            service,
            WITHOUT_TRUTH,
            ScorerSpec(scorer_id="faithfulness-scorer"),
            ScorerSpec(scorer_id="answer-similarity-scorer"),
            ScorerSpec(scorer_id="noise-sensitivity-scorer"),
            **judge_for(judge_server),
        )
    message = str(refused.value)
    assert "Faithfulness needs" in message and "Answer Similarity needs" in message
    assert "'baselineResponse'" in message and "'noisyQuery'" in message


def test_answer_similarity_without_required_ground_truth_may_run(
    service: Service, judge_server: FakeJudge
) -> None:
    spec = ScorerSpec(scorer_id="answer-similarity-scorer", options={"require_ground_truth": False})
    assert service.data_problems(service.import_dataset("q.csv", WITHOUT_TRUTH), [spec]) == []


def test_the_cli_refuses_with_one_line_before_any_call(
    tmp_path: Path, judge_server: FakeJudge
) -> None:
    from core.cli import main

    data = tmp_path / "quiz.csv"
    data.write_bytes(WITHOUT_TRUTH)
    database = f"sqlite:///{tmp_path / 'cli.db'}"
    code = main(
        [
            "--database-url",
            database,
            "run",
            str(data),
            "--scorer",
            "hallucination-scorer",
            "--judge-model",
            "openai/fake-judge",
            "--api-base",
            judge_server.url,
        ]
    )
    assert code == 2 and judge_server.call_count == 0


def test_comparisons_are_said_in_words_and_survive_export_and_import(service: Service) -> None:
    started = start(
        service,
        WITH_TRUTH,
        ScorerSpec(scorer_id="checks.includes", options={"value": "father"}),
        ScorerSpec(scorer_id="tone-scorer"),
    )
    service.wait(started, timeout=60)
    expected = {
        "checks.includes": "output vs the given text",
        "tone-scorer": "output tone stability (output only)",
    }
    assert service.get_experiment(started).comparisons == expected
    assert service.list_experiments()[0].comparisons == expected
    detail = service.load_experiment(started)
    assert detail.info.comparisons == expected
    exported = json.loads(experiment_json_text(detail))
    assert exported["summary"]["comparisons"] == expected
    imported = service.import_experiment_json(experiment_json_text(detail).encode())
    assert service.get_experiment(imported).comparisons == expected


def test_catalog_entries_say_what_they_compare(service: Service) -> None:
    catalog = {entry.id: entry for entry in service.scorer_catalog()}
    assert catalog["answer-relevancy-scorer"].compares == "output vs input"
    assert catalog["faithfulness-scorer"].compares == "output vs context"
    assert catalog["bias-scorer"].compares == "output only"
    reference = next(o for o in catalog["keyword-coverage-scorer"].options if o.name == "reference")
    assert (reference.type, reference.default, reference.choices) == (
        "choice",
        "input",
        ["input", "ground_truth"],
    )


@pytest.mark.parametrize(
    ("spec", "fix"),
    [
        (
            ScorerSpec(scorer_id="keyword-coverage-scorer", options={"reference": "ground_truth"}),
            "or set the scorer's reference option to input",
        ),
        (ScorerSpec(scorer_id="exact-match-scorer"), "--ground-truth-column in the CLI"),
        (ScorerSpec(scorer_id="token-f1-scorer"), "the Datasets page"),
    ],
)
def test_a_ground_truth_scorer_without_a_ground_truth_column_is_refused(
    service: Service, spec: ScorerSpec, fix: str
) -> None:
    with pytest.raises(ExperimentConfigError) as refused:
        start(service, WITHOUT_TRUTH, spec)
    message = str(refused.value)
    assert "needs the ground truth the output is compared with" in message
    assert "maps no ground-truth column" in message and fix in message
    assert service.list_experiments() == []


def test_scoring_against_the_ground_truth_points_the_right_way(service: Service) -> None:
    """The hostile tester's first finding: an output equal to its ground truth must score 1."""
    specs = [
        ScorerSpec(scorer_id=scorer_id, options={"reference": "ground_truth"})
        for scorer_id in (
            "keyword-coverage-scorer",
            "completeness-scorer",
            "content-similarity-scorer",
            "textual-difference-scorer",
        )
    ]
    specs += [ScorerSpec(scorer_id="exact-match-scorer"), ScorerSpec(scorer_id="token-f1-scorer")]
    started = start(service, WITH_TRUTH, *specs)
    assert service.wait(started, timeout=60).status == "completed"
    detail = service.load_experiment(started)
    equal = {o.scorer_id: o.score for o in detail.results if o.item_id == "a"}
    assert equal == dict.fromkeys(equal, 1.0) and len(equal) == 6
    assert set(detail.info.comparisons.values()) == {"output vs ground truth"}
    against_input = start(service, WITH_TRUTH, ScorerSpec(scorer_id="keyword-coverage-scorer"))
    service.wait(against_input, timeout=60)
    info = service.get_experiment(against_input)
    assert info.comparisons == {"keyword-coverage-scorer": "output vs input"}


def test_a_bad_reference_is_a_configuration_error(service: Service) -> None:
    dataset = service.import_dataset("quiz.csv", WITH_TRUTH)
    for options in ({"reference": "truth"}, {"reference": "ground_truth", "reference_tone": "x"}):
        with pytest.raises(ExperimentConfigError, match="reference"):
            service.start_experiment(
                ExperimentConfig(
                    dataset_id=dataset.id,
                    scorers=[ScorerSpec(scorer_id="tone-scorer", options=options)],
                )
            )
    assert service.list_experiments() == []
