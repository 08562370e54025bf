"""gpu-burn (§9.4): wrong answers under load. The same soak as thermal-soak
(:mod:`glimmer.runners.thermal_soak_engine`), judged on correctness alone: temperature, clock
and throttling are reported, never judged. Not the upstream wilicc/gpu-burn, which would need
cuBLAS redistributed; this is torch's SGEMM compared bitwise with its first answer.

Exit rules, in order: Skip (``GPU_BURN_SKIP``) with no accelerator or MIG enabled; Error with
NVML missing or failing while a GPU is visible, an allocation or launch failure, zero
iterations, a malformed variable; Fail on miscompares > 0, then nonfinite > 0, then eccErrors
> 0 (only when a real delta exists); Error with no NVML sample or mean utilisation under 50 %.
"""

from __future__ import annotations

from glimmer.runners import devices as dv
from glimmer.runners.outcome import Outcome, failed, passed
from glimmer.runners.program import Context, main
from glimmer.runners.thermal_soak_engine import (
    Figures,
    common_errors,
    load_errors,
    run_soak,
    wrong_answers,
)

KIND = "gpu-burn"


def echo(out: dv.DeviceResult) -> None:
    """gpu-burn echoes no floor or ceiling: it judges none."""


def judge(f: Figures) -> Outcome:
    early = common_errors(f) or wrong_answers(f)
    if early is not None:
        return early
    if f.ecc_delta:
        return failed(f"eccErrors={f.ecc_delta}: uncorrected ECC errors during the burn")
    unloaded = load_errors(f)
    return unloaded if unloaded is not None else passed()


def burn(ctx: Context) -> Outcome:
    return run_soak(ctx, judge, echo)


if __name__ == "__main__":
    main(KIND, burn)
