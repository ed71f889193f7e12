"""Fixtures for the LLM-judge prebuilt scorers: a judge pointed at the session's fake server
(without instructions, so each scorer's own instructions are used) and a small harness that
scripts the judge's answers in step order and checks judge records and failures."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pytest

from core import JudgeConfig, Scorer, ScorerRunError, ScorerRunResult
from core.testing import FakeJudge, Fault

REASON = "The score is given because of the mock findings."


@dataclass
class JudgeHarness:
    """Runs prebuilt judge scorers against the fake judge server."""

    server: FakeJudge
    judge: JudgeConfig

    @staticmethod
    def prompt_steps(scorer: Scorer) -> list[str]:
        """The Mastra names of the scorer's prompt steps, in order."""
        return [step.name for step in scorer.steps if step.kind == "prompt"]

    def answers_for(self, scorer: Scorer, answers: Mapping[str, Any]) -> list[str]:
        """The judge's answers in call order: JSON for schema steps, text for the reason."""
        return [
            REASON if name == "generateReason" else json.dumps(answers[name])
            for name in self.prompt_steps(scorer)
        ]

    def run(self, scorer: Scorer, answers: Mapping[str, Any], **run: Any) -> ScorerRunResult:
        """Script the answers, run the scorer, and return its result."""
        self.server.script(*self.answers_for(scorer, answers))
        return scorer.run_sync(**run)

    def fail(self, scorer: Scorer, scripted: list[Any], **run: Any) -> ScorerRunError:
        """Script raw answers (faults included), run, and return the ScorerRunError."""
        self.server.script(*scripted)
        with pytest.raises(ScorerRunError) as caught:
            scorer.run_sync(**run)
        return caught.value

    def check_end_to_end(
        self, scorer: Scorer, answers: Mapping[str, Any], **run: Any
    ) -> ScorerRunResult:
        """Run through litellm and check the judge record: one successful execution per
        prompt step, with the fake server's usage and the step's prompt."""
        self.server.reset()
        result = self.run(scorer, answers, **run)
        steps = self.prompt_steps(scorer)
        assert result.judge is not None
        assert sorted(result.judge) == sorted(steps)
        prompts = {
            "preprocess": result.preprocess_prompt,
            "analyze": result.analyze_prompt,
            "generateReason": result.generate_reason_prompt,
        }
        for name in steps:
            (execution,) = result.judge[name].executions
            assert execution.status == "success"
            assert execution.usage.input_tokens == 10
            assert execution.usage.output_tokens == 20
            assert execution.prompt == prompts[name]
        assert self.server.call_count == len(steps)
        system = self.server.requests[0]["messages"][0]
        assert system["role"] == "system" and system["content"]
        if "generateReason" in steps:
            assert result.reason == REASON
        return result

    def check_faults(self, scorer: Scorer, answers: Mapping[str, Any], **run: Any) -> None:
        """For every prompt step: an HTTP 500 fails that step; for the JSON steps, invalid
        JSON twice fails it too. Earlier steps are reported as completed."""
        steps = [step.name for step in scorer.steps]
        scripted = self.answers_for(scorer, answers)
        for position, name in enumerate(self.prompt_steps(scorer)):
            before = scripted[:position]
            completed = steps[: steps.index(name)]
            self.server.reset()
            error = self.fail(scorer, [*before, Fault(500)], **run)
            assert (error.failed_step, error.completed_steps) == (name, completed)
            assert self.server.call_count == position + 1
            if name != "generateReason":
                self.server.reset()
                error = self.fail(scorer, [*before, "not JSON", "still {not JSON"], **run)
                assert (error.failed_step, error.completed_steps) == (name, completed)
                assert self.server.call_count == position + 2


@pytest.fixture
def llm_judge(judge_server: FakeJudge) -> JudgeConfig:
    """A judge on the fake server with no instructions (the scorer supplies its own)."""
    return JudgeConfig(
        model="openai/fake-judge",
        api_base=judge_server.url,
        api_key="test",
        model_settings={"num_retries": 0},
    )


@pytest.fixture
def harness(judge_server: FakeJudge, llm_judge: JudgeConfig) -> JudgeHarness:
    """The harness on a freshly reset fake judge."""
    return JudgeHarness(judge_server, llm_judge)
