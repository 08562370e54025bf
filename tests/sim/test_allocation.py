"""The allocation plan of specs/fleet.md §5 on the reference fixture (§8 items 33–38)."""

from __future__ import annotations

import numpy as np
from reference_fleet import SERVING, T0, TRAINING, Reference, build_reference, gpu, nvl, simulate

from glimmer.sim.allocation import Phase, bucket_of, plan
from glimmer.sim.faults import Fault, capture
from glimmer.sim.physics import HELD, UNAVAILABLE


def _phase(ref: Reference, t: float, key: str) -> Phase:
    allocation, _ = simulate(ref, t)
    status = allocation.status(key)
    assert status is not None
    return status.phase


def test_both_workloads_run_at_the_reference_instant(reference: Reference) -> None:
    allocation, _ = simulate(reference)
    training = allocation.status(TRAINING)
    assert training is not None and training.phase is Phase.RUNNING
    assert training.cycle_ordinal == 82912
    assert training.execution_id == "exec-875e956db3f5664bff70d0b4"
    assert _phase(reference, T0, SERVING) is Phase.RUNNING
    assert int(np.count_nonzero(allocation.holding.state == HELD)) == 9


def test_training_is_first_pending_145_minutes_later(reference: Reference) -> None:
    phases = [_phase(reference, T0 + 60 * m, TRAINING) for m in range(146)]
    assert phases[-1] is Phase.PENDING
    assert all(p is not Phase.PENDING for p in phases[:-1])
    assert Phase.COMPLETED in phases  # exactly one completed minute ends the run


def test_seed_a_first_both_running_minute_is_02_36() -> None:
    ref = build_reference("seed-a")
    assert _phase(ref, T0, TRAINING) is Phase.PENDING
    minute = next(
        m for m in range(1440)
        if _phase(ref, T0 + 60 * m, TRAINING) is Phase.RUNNING
        and _phase(ref, T0 + 60 * m, SERVING) is Phase.RUNNING
    )  # fmt: skip
    assert minute == 2 * 60 + 36


def test_bucket_is_floor_division() -> None:
    assert bucket_of(-1.0) == -1
    assert bucket_of(0.0) == 0
    assert bucket_of(59.999) == 0


def test_independent_builds_give_identical_plans() -> None:
    a, _ = simulate(build_reference(), T0 + 7 * 3600)
    b, _ = simulate(build_reference(), T0 + 7 * 3600)
    assert a.workloads == b.workloads
    assert np.array_equal(a.holding.state, b.holding.state)


def test_fallen_off_bus_fails_training_and_releases_all_its_gpus(reference: Reference) -> None:
    target = f"gpu:{nvl(0)}/2"
    allocation, ops = simulate(reference, faults=(Fault("gpu_fallen_off_bus", target),))
    training = allocation.status(TRAINING)
    assert training is not None
    assert training.phase is Phase.FAILED
    assert training.gpus == ()
    assert training.retry_pending
    assert len(training.victim_gpus) == 8
    assert training.cause_targets == (target,)
    assert allocation.holding.state[gpu(nvl(0), 2)] == UNAVAILABLE
    owners = allocation.holding.owner
    assert not np.any(owners == 1)  # workload index 1 is training-a
    assert owners[gpu(nvl(0), 0)] == -1
    g0 = gpu(nvl(0), 0)
    assert ops.utilization[g0] == 0 and ops.memory_used_bytes[g0] == 0 and ops.power_w[g0] > 0


def test_preemption_storm_preempts_training(reference: Reference) -> None:
    allocation, ops = simulate(reference, faults=(Fault("gpu_preemption_storm", TRAINING),))
    training = allocation.status(TRAINING)
    assert training is not None and training.phase is Phase.PREEMPTED
    assert training.cause_targets == (TRAINING,)
    g0 = gpu(nvl(0), 0)
    assert ops.utilization[g0] == 0 and ops.memory_used_bytes[g0] == 0 and ops.power_w[g0] > 0


def test_full_quota_exhaustion_leaves_training_pending_with_victims(reference: Reference) -> None:
    project = "project:scheduler-a/research"
    allocation, ops = simulate(reference, faults=(Fault("gpu_quota_exhaustion", project),))
    training = allocation.status(TRAINING)
    assert training is not None and training.phase is Phase.PENDING
    assert len(training.victim_gpus) == 8 and training.cause_targets == (project,)
    assert not training.retry_pending
    g0 = gpu(nvl(0), 0)
    assert ops.utilization[g0] == 0 and ops.memory_used_bytes[g0] == 0 and ops.power_w[g0] > 0


def test_xid_burst_leaves_every_workload_running(reference: Reference) -> None:
    allocation, _ = simulate(reference, faults=(Fault("gpu_xid_burst", f"node:{nvl(0)}"),))
    assert all(w.phase is Phase.RUNNING for w in allocation.workloads)


def test_each_mode_target_pair_is_evaluated_once(reference: Reference) -> None:
    """Overlapping declarations of one (mode, target) capture as one fault, the maximum."""
    faults = (
        Fault("gpu_xid_burst", f"node:{nvl(0)}", 0.3),
        Fault("gpu_xid_burst", f"node:{nvl(0)}", 0.7),
    )
    captured = capture(faults, T0)
    assert [(c.mode, c.target, c.intensity) for c in captured] == [
        ("gpu_xid_burst", f"node:{nvl(0)}", 0.7)
    ]
    allocation = plan(reference.schedule, T0, captured, reference.reach.gpus)
    assert allocation.faults == captured


def test_a_fault_that_ended_restores_the_baseline(reference: Reference) -> None:
    from glimmer.sim.faults import Window

    fault = Fault("gpu_fallen_off_bus", f"gpu:{nvl(0)}/2", window=Window(T0 - 600, T0))
    allocation, _ = simulate(reference, T0, faults=(fault,))
    training = allocation.status(TRAINING)
    assert training is not None and training.phase is Phase.RUNNING
    assert training.victim_gpus == () and not training.retry_pending
