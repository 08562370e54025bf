"""A variant cell's overlay on its entry's spec (§2.3), in the API layer so that everything that
expands a profile (the plan, the linter, the simulator's coverage harness) applies one rule.

A field the cell leaves unset inherits the entry's value; a set field replaces it wholesale
(thresholds and env are replaced, never merged; an empty threshold list means "no gates").
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from glimmer.api.k8s import EnvVar
from glimmer.api.profile import TestVariant
from glimmer.api.test import BurnInTestSpec, RunnerSpec

# A variant axis becomes BURNIN_VARIANT_<AXIS>; an axis that cannot be an environment variable
# name would silently run the default config under the cell's label, so the plan refuses it.
_ENV_SAFE_AXIS = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def is_env_safe_axis(axis: str) -> bool:
    """True when ``axis`` can be part of an environment variable name."""
    return _ENV_SAFE_AXIS.match(axis) is not None


def variant_env(axes: Mapping[str, str]) -> list[EnvVar]:
    """``BURNIN_VARIANT_<AXIS>`` per env-safe axis, sorted by axis (the plan refuses the rest)."""
    return [
        EnvVar(name=f"BURNIN_VARIANT_{axis.upper()}", value=axes[axis])
        for axis in sorted(axes)
        if is_env_safe_axis(axis)
    ]


def apply_overlay(spec: BurnInTestSpec, cell: TestVariant) -> BurnInTestSpec:
    """The entry's spec with the cell's set fields replacing the entry's, as a new object."""
    cell_spec = spec.model_copy(deep=True)
    if cell.duration_seconds is not None:
        cell_spec.duration_seconds = cell.duration_seconds
    if cell.repeat_count is not None:
        cell_spec.repeat_count = cell.repeat_count
    if cell.thresholds is not None:
        cell_spec.thresholds = [t.model_copy() for t in cell.thresholds]
    if cell.args is not None or cell.env is not None:
        # A test without a runner block still takes an args/env overlay (this once crashed the
        # original controller for every run).
        runner = cell_spec.runner or RunnerSpec()
        if cell.args is not None:
            runner.args = list(cell.args)
        if cell.env is not None:
            runner.env = [e.model_copy() for e in cell.env]
        cell_spec.runner = runner
    return cell_spec
