"""A GPU under a runner's load: clock, temperature, power and whether it throttled.

The runner's own load replaces the workload the twin schedules, so these are the operating-
point equations of specs/fleet.md §6.2 at full demand, with the readiness modes' terms (a pinned
low P-state caps the clock; degraded thermal paste adds heat in proportion to power), plus the
one thing a burn-in observes that telemetry does not: a part that reaches its slowdown
temperature, or whose rack cooling has failed, clocks itself down and latches a thermal reason.
"""

from __future__ import annotations

from dataclasses import dataclass

from glimmer.sim.physics import LOW_PSTATE_CLOCK_FRACTION, THERMAL_PASTE_RISE_C
from glimmer.sim.runners.figures import DEFAULT_SLOWDOWN_C
from glimmer.sim.runners.node import Device, NodeView


@dataclass(frozen=True)
class LoadPoint:
    clock_fraction: float  # of the healthy clock under this load
    temp_c: float
    power_w: float
    thermal: bool  # a thermal slowdown reason latched
    pinned: bool  # held in a low P-state (no throttle reason: the wedge signature)


def under_load(view: NodeView, dev: Device, load: float = 1.0) -> LoadPoint:
    op = view.op
    idle = op["idle_fraction"]
    pin = dev.level("gpu_low_pstate")
    clock = 1.0 - pin * (1.0 - LOW_PSTATE_CLOCK_FRACTION)
    paste = dev.level("gpu_thermal_paste_degraded")
    ic = view.cooling
    thermal = False
    if ic > 0.0:
        # Failed rack cooling holds the part at its thermal limit: it sheds work by clocking
        # down by the pool's cooling derate (§6.2), and says so with a thermal reason.
        clock *= 1.0 - op["cooling_loss"] * ic
        thermal = True

    def temperature(pf: float) -> float:
        return (
            op["ambient_c"]
            + op["rise_c"] * pf
            + op["cooling_rise_c"] * ic
            + THERMAL_PASTE_RISE_C * paste * pf
        )

    pf = idle + (1.0 - idle) * load * clock
    temp = temperature(pf)
    part = dev.part  # looked up once: a property that asks the figures table
    slowdown = part.slowdown_c if part is not None else DEFAULT_SLOWDOWN_C
    if ic > 0.0:
        # It sheds work because it sits at its limit: the sensor reads the onset.
        temp = max(temp, slowdown - 0.5)
    if temp > slowdown:
        # Clock down until the heat balances at the slowdown temperature.
        heat_per_pf = op["rise_c"] + THERMAL_PASTE_RISE_C * paste
        pf_max = (slowdown - op["ambient_c"] - op["cooling_rise_c"] * ic) / heat_per_pf
        clock = min(clock, max(0.05, (pf_max - idle) / ((1.0 - idle) * load)))
        pf = idle + (1.0 - idle) * load * clock
        temp = slowdown + 0.5  # it hovers just over the onset
        thermal = True
    return LoadPoint(clock, temp, dev.limit_w * pf, thermal, pin > 0.0)
