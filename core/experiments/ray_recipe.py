"""What a Ray worker rebuilds: the experiment's scorers as specs and a judge without its key.

The driver (core/experiments/ray_backend.py) sends a `ScorerRecipe` with every chunk; the worker
builds the scorers from it once and resolves the judge's key where the call is made, so no
secret travels inside a task's arguments (docs/scale.md, Judge keys).
"""

from __future__ import annotations

import os
import socket
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pydantic import SecretStr

from core.judge.config import JudgeConfig
from core.judge.credentials import JudgeKey, JudgeSetupError, judge_key
from core.judge.secrets import remember_secret
from core.records import ScorerSpec
from core.scorers import PREBUILT, PrebuiltScorer
from core.scorers.catalog import ScorerCatalog
from core.scoring import Scorer

__all__ = ["ScorerRecipe", "recipe_of"]


@dataclass(frozen=True, slots=True)
class ScorerRecipe:
    """What a worker needs to build the experiment's scorers: never a secret (the key is a
    decision, `JudgeKey`, resolved in the worker; a typed key travels apart, see `RayRunner`)."""

    specs: tuple[ScorerSpec, ...]
    judge: JudgeConfig | None
    """The judge without its key."""
    key: JudgeKey | None
    """Which key the judge gets (resolved where the call is made)."""
    catalog: Mapping[str, PrebuiltScorer] | None = None
    """None: the prebuilt catalog; else the driver's own (pickled by reference: the same
    install on every node)."""

    def build(self, typed_key: SecretStr | None) -> list[Scorer]:
        """The scorers, with the judge's key resolved in this process."""
        judge = self.judge
        if judge is not None and self.key is not None:
            if typed_key is not None:
                remember_secret(typed_key)  # its echoes are masked in failures here too
            try:
                key = self.key.api_key(typed_key)
            except JudgeSetupError as error:
                raise JudgeSetupError(
                    f"On the Ray worker {socket.gethostname()} (pid {os.getpid()}): {error}. "
                    "A key from the environment is read on each node: set it in the environment "
                    "of `ray start` there (docs/scale.md, Judge keys)"
                ) from None
            judge = judge.model_copy(update={"api_key": key})
        catalog = ScorerCatalog(PREBUILT if self.catalog is None else self.catalog)
        return catalog.build_all(self.specs, judge)


def recipe_of(
    specs: Sequence[ScorerSpec],
    judge: JudgeConfig | None,
    typed_key: SecretStr | str | None,
    catalog: Mapping[str, PrebuiltScorer] | None = None,
    key: JudgeKey | None = None,
) -> tuple[ScorerRecipe, SecretStr | None]:
    """The recipe of the scorers the driver built with `judge`, and the typed key (if one was
    typed) that must travel with each task; `key`: the judge's key as its route decided it
    (`core.judge.credentials.route_judge`), else decided here."""
    typed = SecretStr(typed_key) if isinstance(typed_key, str) else typed_key
    if typed is not None and not typed.get_secret_value().strip():
        typed = None
    if judge is not None and judge.model:
        if key is None:
            key = judge_key(judge.model, judge.api_base, typed=typed is not None)
        judge = judge.model_copy(update={"api_key": None})
    else:
        key = None
    own = None if catalog is None or _is_prebuilt(catalog) else dict(catalog)
    return ScorerRecipe(tuple(specs), judge, key, own), typed


def _is_prebuilt(catalog: Mapping[str, PrebuiltScorer]) -> bool:
    return dict(catalog.items()) == dict(PREBUILT.items())
