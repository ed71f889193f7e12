"""A run's judge set up: model routed once, base and settings checked, cache, spend cap."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from pydantic import SecretStr

from core.errors import ExperimentConfigError
from core.judge import JudgeConfig
from core.judge.budget import JudgeBudget
from core.judge.cache import JudgeCacheError, judge_cache
from core.judge.credentials import (
    RoutedJudge,
    check_api_base,
    check_judge_settings,
    judge_config,
    route_judge,
)
from core.judge.pricing import estimate_cost_usd, unit_prices
from core.judge.secrets import remember_secret, secret_masker
from core.records import ExperimentConfig, ExperimentInfo, ExperimentProgress

__all__ = ["budget", "masked_progress", "open_judge_cache", "resumed_budget", "set_up_judge"]


def set_up_judge(
    model: str | None,
    api_base: str | None,
    settings: Mapping[str, Any] | None,
    typed_key: SecretStr | str | None,
    cache: bool = False,
) -> tuple[JudgeConfig | None, str | None, dict[str, Any], RoutedJudge | None]:
    """(the judge of a model string, the API base and the settings as they may be stored, the
    model routed once for what else decides on the judge: its rate limit, a Ray recipe). No
    judge without a model (a scorer that needs one says so), but the base and the settings are
    checked all the same, since they are stored. Raises JudgeSetupError, an
    ExperimentConfigError."""
    checked_base = check_api_base(api_base)
    checked = check_judge_settings(settings)
    typed = SecretStr(typed_key) if isinstance(typed_key, str) else typed_key
    if typed is not None and not typed.get_secret_value().strip():
        typed = None
    if typed is not None:
        remember_secret(typed)  # its echoes are masked, like the environment's keys
    if not model:
        return None, checked_base, checked, None
    routed = route_judge(model, checked_base, typed=typed is not None)
    judge = judge_config(routed, checked, typed_key=typed, cache=cache)
    return judge, checked_base, checked, routed


def open_judge_cache() -> None:
    """Open the judge cache now: one that cannot work refuses the experiment before it starts,
    rather than failing each of its runs."""
    try:
        judge_cache()
    except JudgeCacheError as error:
        raise ExperimentConfigError(str(error)) from None


def budget(config: ExperimentConfig) -> JudgeBudget | None:
    """The spend cap of an experiment, if it has one; raises ExperimentConfigError for a cap
    that is no positive number of USD, or on a judge model litellm has no price for (the cap
    could not bound it)."""
    _check_cap(config.max_cost, config.judge_model)
    return None if config.max_cost is None else JudgeBudget(config.max_cost)


def _check_cap(cap: float | None, judge_model: str | None) -> None:
    """Raises ExperimentConfigError for a cap that cannot bound `judge_model`'s spend."""
    if cap is None:
        return
    if isinstance(cap, bool) or not isinstance(cap, int | float) or not math.isfinite(cap):
        raise ExperimentConfigError(f"The spend cap (max_cost) must be USD, got {cap!r}")
    if cap <= 0:
        raise ExperimentConfigError(f"The spend cap (max_cost) must be above $0, got {cap!r}")
    if judge_model and unit_prices(judge_model) is None:
        raise ExperimentConfigError(
            f"litellm's price table has no price for the judge model {judge_model!r}, "
            "so a spend cap (max_cost) cannot bound it: remove the cap or choose a priced "
            "model (e.g. openai/gpt-4o-mini)"
        )


def resumed_budget(info: ExperimentInfo, max_cost: float | None) -> JudgeBudget | None:
    """The spend cap of a resumed experiment: `max_cost` (else the one it started with) less
    what its stored runs' judge calls cost (litellm's prices of their tokens); raises
    ExperimentConfigError when nothing is left of it."""
    cap = info.max_cost if max_cost is None else max_cost
    _check_cap(cap, info.judge_model)
    if cap is None:
        return None
    usage = info.counts.usage
    spent = estimate_cost_usd(info.judge_model, usage.input_tokens or 0, usage.output_tokens or 0)
    left = cap - (spent or 0.0)
    if left <= 0:
        raise ExperimentConfigError(
            f"Experiment {info.name!r} ({info.id}) has spent about ${spent:,.4f} of its judge "
            f"budget already, which a cap of ${cap:,.4f} does not leave room for: resume it "
            "with a higher max_cost"
        )
    return JudgeBudget(left)


def masked_progress(progress: ExperimentProgress) -> ExperimentProgress:
    """The progress with every secret the process holds masked in its error."""
    if not progress.error:
        return progress
    return progress.model_copy(update={"error": secret_masker().text(progress.error)})
