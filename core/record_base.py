"""Names shared by every layer: the Mastra step names and the record base class."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel

__all__ = ["STEP_ORDER", "Record", "StepName"]

StepName = Literal["preprocess", "analyze", "generateScore", "generateReason"]
"""A Mastra step name, as used in judge records and `ScorerRunError`."""

STEP_ORDER: tuple[StepName, ...] = ("preprocess", "analyze", "generateScore", "generateReason")
"""The documented order of the four steps."""


class Record(BaseModel):
    """Base of the frozen records that cross a layer: camelCase JSON, snake_case attributes."""

    model_config = ConfigDict(
        frozen=True,
        alias_generator=to_camel,
        validate_by_name=True,
        validate_by_alias=True,
        serialize_by_alias=True,
        use_attribute_docstrings=True,
        arbitrary_types_allowed=True,
    )
