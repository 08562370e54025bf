"""Simulated runners: what a real runner would print and exit with, from the fleet's state.

Entry point::

    from glimmer.sim.runners import RunnerCall, RunnerOutput, simulate_runner
    out = simulate_runner(twin, RunnerCall(kind="clockprobe", scope="Node", ...))
    parsed = glimmer.contract.parse.parse(call.kind, out.stdout, out.exit_code)

Every built-in kind of specs/burnin.md §9 has a runner here, one module per family
(GPU load, GEMM, memory, host, network). Each turns the fleet at the call's start time — SKU
nominal figures, the operating point under the test's own load, the faults reaching that
node's GPUs, NICs and links — plus seeded measurement noise into the runner's exact stdout
(raw keys with the kind's aliases, metrics before the final ``<PREFIX>_PASS|_FAIL|_SKIP|_ERROR``
marker) and exit code 0/1/2/3. The output is meant to go through :mod:`glimmer.contract.parse`
like a real runner's; nothing here decides a verdict.
"""

from glimmer.sim.runners.call import RunnerCall, RunnerOutput
from glimmer.sim.runners.dispatch import SIMULATED_KINDS, simulate_runner

__all__ = ["SIMULATED_KINDS", "RunnerCall", "RunnerOutput", "simulate_runner"]
