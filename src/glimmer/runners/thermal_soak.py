"""thermal-soak (§9.3): sustained load, sustained correctness, throttling. The soak of
:mod:`glimmer.runners.thermal_soak_engine` on every allocated device at once, judged on
correctness first and then on how the part held its clock and temperature.

Config: ``BURNIN_DURATION_SECONDS`` (900, floor 15), ``THERMAL_SOAK_MIN_CLOCK_PCT`` (60),
``THERMAL_SOAK_MAX_TEMP_C`` (0 = off), and the engine's ``BURNIN_SOAK_*`` variables.

Exit rules, in order: Skip (``THERMAL_SOAK_SKIP``) with no accelerator or MIG enabled; Error
with NVML missing or failing while a GPU is visible, an allocation or launch failure, zero
iterations, a malformed variable; Fail on miscompares > 0, then nonfinite > 0; Error with no
NVML sample or mean utilisation under 50 % (the clock figures would not describe a load); Fail
on throttleEvents > 0 (entering hwSlowdown, sw/hwThermalSlowdown or hwPowerBrake; not
swPowerCap), then sustainedClockPct under the floor, then a peak temperature over the ceiling
(only when one is set). The Xid watch never changes the exit code.
"""

from __future__ import annotations

from glimmer.runners import devices as dv
from glimmer.runners.outcome import Outcome, failed, passed
from glimmer.runners.program import Context, main
from glimmer.runners.thermal_soak_engine import (
    Figures,
    Judge,
    common_errors,
    load_errors,
    run_soak,
    wrong_answers,
)

KIND = "thermal-soak"
MIN_CLOCK = "THERMAL_SOAK_MIN_CLOCK_PCT"
MAX_TEMP = "THERMAL_SOAK_MAX_TEMP_C"


def judge_with(floor: int, ceiling: int) -> Judge:
    """§9.3's rules in order, for a clock floor and a temperature ceiling (0: none)."""

    def judge(f: Figures) -> Outcome:
        early = common_errors(f) or wrong_answers(f)
        if early is not None:
            return early
        unloaded = load_errors(f)
        if unloaded is not None:
            return unloaded
        if f.throttle_events:
            return failed(f"throttleEvents={f.throttle_events}: entered a protective throttle")
        if f.sustained_clock_pct is not None and f.sustained_clock_pct < floor:
            return failed(f"sustainedClockPct {f.sustained_clock_pct:.2f} < floor {floor} %")
        if ceiling and f.peak_temp_c is not None and f.peak_temp_c > ceiling:
            return failed(f"gpuTempC {f.peak_temp_c:.1f} > ceiling {ceiling} C")
        return passed()

    return judge


def soak(ctx: Context) -> Outcome:
    floor = ctx.settings.integer(MIN_CLOCK, 60, minimum=0, maximum=100)
    ceiling = ctx.settings.integer(MAX_TEMP, 0, minimum=0, maximum=200)

    def echo(out: dv.DeviceResult) -> None:
        out.put("clockFloorPct", floor)
        if ceiling:
            out.put("tempCeilingC", ceiling)

    return run_soak(ctx, judge_with(floor, ceiling), echo)


if __name__ == "__main__":
    main(KIND, soak)
