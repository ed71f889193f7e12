"""What the `scorelab` command needs of the core beyond `Service`, as the CLI may import it.

The CLI reaches the core through `core.service` only (plus the record modules and
core.errors), like the pages: this module hands it the pieces it uses that are not the
service's own. Nothing here is new behaviour; each name is the one documented where it is
defined (docs/architecture.md).

From core.experiments: MAX_CONCURRENCY (the engine's cap), release_unused_memory, the
threshold rule (Threshold, ThresholdResult, check_threshold, failures_within). From
core.reporting: the export files (experiment_json, results_csv, experiment_html,
masked_export) and the agreement with a label column (label_values, label_agreement,
agreement_line, agreement_verdict, scorer_verdict, LabelAgreement, LabelError). From
core.dashboard_access: what `scorelab serve` checks before it starts (read_secrets,
SecretsError, is_loopback, login_problems, unprotected_address_message). From
core.judge.pricing: estimate_cost_usd (what an experiment's judge tokens cost in litellm's
price table, for the spend a capped run reports). From core.experiments.ray_backend:
check_ray_address (a `--ray-address` refused before the command stores anything).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from core.dashboard_access import (
        SecretsError,
        is_loopback,
        login_problems,
        read_secrets,
        unprotected_address_message,
    )
    from core.datasets.upload import release_unused_memory
    from core.exchange.exports import experiment_json, masked_export, results_csv
    from core.exchange.html import experiment_html, write_experiment_html
    from core.experiments.engine import MAX_CONCURRENCY
    from core.experiments.ray_backend import check_ray_address
    from core.experiments.thresholds import (
        Threshold,
        ThresholdResult,
        check_threshold,
        failures_within,
    )
    from core.judge.pricing import estimate_cost_usd
    from core.reporting import (
        LabelAgreement,
        LabelError,
        agreement_line,
        agreement_verdict,
        experiment_cost,
        label_agreement,
        label_values,
        scorer_verdict,
    )

_LAZY = {
    "SecretsError": "core.dashboard_access",
    "is_loopback": "core.dashboard_access",
    "login_problems": "core.dashboard_access",
    "read_secrets": "core.dashboard_access",
    "unprotected_address_message": "core.dashboard_access",
    "release_unused_memory": "core.datasets.upload",
    "MAX_CONCURRENCY": "core.experiments.engine",
    "Threshold": "core.experiments.thresholds",
    "ThresholdResult": "core.experiments.thresholds",
    "check_threshold": "core.experiments.thresholds",
    "failures_within": "core.experiments.thresholds",
    "estimate_cost_usd": "core.judge.pricing",
    "check_ray_address": "core.experiments.ray_backend",
    "experiment_json": "core.exchange.exports",
    "masked_export": "core.exchange.exports",
    "results_csv": "core.exchange.exports",
    "experiment_html": "core.exchange.html",
    "write_experiment_html": "core.exchange.html",
    "LabelAgreement": "core.reporting",
    "LabelError": "core.reporting",
    "agreement_line": "core.reporting",
    "agreement_verdict": "core.reporting",
    "experiment_cost": "core.reporting",
    "scorer_verdict": "core.reporting",
    "label_agreement": "core.reporting",
    "label_values": "core.reporting",
}
"""Every name, imported on first use: a command that writes no report (`scorelab experiments`)
starts without pandas and plotly, and one that writes files (`scorelab export`) without the
engine, the scorers and the dataset upload."""

__all__ = [
    "MAX_CONCURRENCY",
    "LabelAgreement",
    "LabelError",
    "SecretsError",
    "Threshold",
    "ThresholdResult",
    "agreement_line",
    "agreement_verdict",
    "check_ray_address",
    "check_threshold",
    "estimate_cost_usd",
    "experiment_cost",
    "experiment_html",
    "experiment_json",
    "failures_within",
    "is_loopback",
    "label_agreement",
    "label_values",
    "login_problems",
    "masked_export",
    "read_secrets",
    "release_unused_memory",
    "results_csv",
    "scorer_verdict",
    "unprotected_address_message",
    "write_experiment_html",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
