"""Errors the core raises on purpose.

`MastraError` mirrors Mastra's error shape (id, domain, category, details) so that a serialised
error reads the same on both sides. `ScorerRunError` is the one a failing scorer step raises; it
carries the failed step, the steps completed before it and a snapshot of what they produced.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.record_base import StepName
    from core.run_results import ScorerRunResult

__all__ = [
    "ExperimentConfigError",
    "InvalidInputError",
    "MastraError",
    "ReviewError",
    "ScorerConfigError",
    "ScorerRunError",
    "serialise_exception",
]

SCORER_DOMAIN = "SCORER"
USER_CATEGORY = "USER"


class MastraError(Exception):
    """Base of every error the core raises on purpose."""

    def __init__(
        self,
        *,
        id: str,
        message: str,
        domain: str = SCORER_DOMAIN,
        category: str = USER_CATEGORY,
        details: Mapping[str, Any] | None = None,
        cause: BaseException | None = None,
    ) -> None:
        super().__init__(message)
        self.id = id
        self.domain = domain
        self.category = category
        self.details: dict[str, Any] = dict(details or {})
        if cause is not None:
            self.__cause__ = cause

    @property
    def message(self) -> str:
        """The human-readable message (`str(error)`)."""
        return str(self)

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form: `{message, code, domain, category, details, cause}`."""
        body: dict[str, Any] = {
            "message": self.message,
            "code": self.id,
            "domain": self.domain,
            "category": self.category,
            "details": dict(self.details),
        }
        if self.__cause__ is not None:
            body["cause"] = serialise_exception(self.__cause__)
        return body


class ScorerConfigError(MastraError, ValueError):
    """A scorer or run configuration that cannot work, raised before any step runs."""


class ScorerRunError(MastraError):
    """A scorer step failed.

    `failed_step` is the Mastra step name that raised, `completed_steps` the steps that finished
    before it (in order), and `result` a snapshot of what they produced (or None when they
    produced nothing). `to_dict()` never includes the snapshot: step results, prompts and raw
    judge output stay out of anything that gets logged or sent.
    """

    RUN_FAILED_ID = "MASTR_SCORER_FAILED_TO_RUN_WORKFLOW_FAILED"

    def __init__(
        self,
        *,
        scorer_id: str,
        steps: list[StepName],
        failed_step: StepName,
        completed_steps: list[StepName],
        result: ScorerRunResult | None,
        cause: BaseException,
    ) -> None:
        cause_message = str(cause) or "Scorer workflow failed"
        super().__init__(
            id=self.RUN_FAILED_ID,
            message=f"Scorer Run Failed: {cause_message}",
            details={
                "scorerId": scorer_id,
                "steps": ", ".join(steps),
                "failedStep": failed_step,
                "completedSteps": ", ".join(completed_steps),
            },
            cause=cause,
        )
        self.failed_step: StepName = failed_step
        self.completed_steps: list[StepName] = list(completed_steps)
        self.result: ScorerRunResult | None = result


class ExperimentConfigError(ValueError):
    """An experiment that cannot start (unknown scorer, bad option, no judge model, a column the
    chosen scorers need and the dataset lacks, ...): one message for the person choosing."""


class InvalidInputError(ValueError):
    """A value the service refuses (a dataset or experiment name, a note, a tag, a theme
    setting): the message names the value, where it was given and what is wrong with it."""


def serialise_exception(error: BaseException) -> dict[str, Any]:
    """A JSON-ready summary of any exception, following the `__cause__` chain.

    Only the name, the message and a string code are kept: never headers, bodies or other
    attributes, which may hold secrets.
    """
    if isinstance(error, MastraError):
        return error.to_dict()
    body: dict[str, Any] = {"name": type(error).__name__, "message": str(error)}
    code = error_code(error)
    if code is not None:
        body["code"] = code
    if error.__cause__ is not None:
        body["cause"] = serialise_exception(error.__cause__)
    return body


def error_code(error: BaseException) -> str | None:
    """The error's string id or code, else its HTTP status as text, else None."""
    for attribute in ("id", "code"):
        value = getattr(error, attribute, None)
        if isinstance(value, str) and value:
            return value
    status = getattr(error, "status_code", None)
    if isinstance(status, int):
        return str(status)
    return None


class ReviewError(ValueError):
    """A review that cannot be stored (unknown item or scorer, a score outside the scorer's
    range, no verdict, a note too long): one message naming the field and the value."""
