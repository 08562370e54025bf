"""Issue 15, Tests: a Group collective across real Slurm nodes. The nccl kind in its test mode
(gloo on cpu tensors) exchanges real data over TCP, rank 0 serving the rendezvous at
``BURNIN_ROOT_HOST``; the bus bandwidth carries all-reduce's 2(n−1)/n factor, and the factor is
checked against the bytes every rank put on the wire (the runner's ``wire`` lines). A rank whose
job is cancelled mid-collective is an Error naming that rank, with no rank Failed for it.

The runner path given to the nodes is a wrapper that keeps a copy of every rank's output in
the test's folder: the substrate deletes an execution's log with the execution.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from slurm_scenario import (
    RUNNER,
    Ran,
    glimmer_run,
    nccl_group,
    profile_file,
    start_glimmer,
    wait_for,
)

from glimmer.contract.vocab import Phase
from glimmer.runners.nccl_sweep import bus_factor
from tests.slurm_cluster import SlurmCluster

WIRE = re.compile(r"^wire size (\d+) B rank (\d+): sent (\d+) B per iteration")


def teeing_runner(folder: Path) -> Path:
    """A runner path that runs the real runner and keeps its stdout, exit code unchanged."""
    logs = folder / "rank-logs"
    logs.mkdir()
    wrapper = folder / "glimmer-runner"
    wrapper.write_text(
        "#!/bin/bash\nset -o pipefail\n"
        f'"{RUNNER}" "$@" | tee "{logs}/$(hostname).$SLURM_JOB_ID.log"\n'
    )
    wrapper.chmod(0o755)
    return wrapper


def wire_table(folder: Path) -> dict[tuple[int, int], int]:
    """(size, rank) -> bytes that rank sent per iteration, from rank 0's wire lines."""
    table = {}
    for log in (folder / "rank-logs").glob("*.log"):
        for line in log.read_text().splitlines():
            m = WIRE.match(line)
            if m:
                table[int(m[1]), int(m[2])] = int(m[3])
    return table


@pytest.mark.parametrize("n", [3, 4])
def test_a_group_collective_over_tcp_reports_a_bus_bandwidth_whose_factor_the_wire_confirms(
    slurm_cluster: SlurmCluster, tmp_path: Path, n: int
) -> None:
    nodes = slurm_cluster.nodes[:n]
    profile = profile_file(tmp_path / "group.yaml", f"group-{n}", [nccl_group()])
    runner = teeing_runner(tmp_path)
    ran = glimmer_run(slurm_cluster, tmp_path / "state", [profile], nodes, n, runner=runner)
    assert ran.code == 0, ran.stdout + ran.stderr
    [(key, result)] = ran.results().items()
    assert key == ("allreduce", tuple(nodes)) and result.phase is Phase.PASSED, result.message
    metrics = result.metrics or {}
    assert metrics["ranks"] == str(n) and metrics["miscompares"] == "0"
    factor = bus_factor("allreduce", n)
    bus, alg = float(metrics["busBandwidthGBs"]), float(metrics["algBandwidthGBs"])
    assert bus == pytest.approx(alg * factor, rel=0.01, abs=2e-4)
    table = wire_table(tmp_path)
    sizes = sorted({size for size, _ in table})
    assert sizes == [1 << 20, 8 << 20] and len(table) == 2 * n, table
    for (size, rank), sent in sorted(table.items()):
        # A ring all-reduce makes every rank send 2(n-1)/n of the buffer; TCP/IP framing
        # adds a little (measured: +0.1 to +1.2 %), nothing else on the fabric is sending.
        assert 0.98 * factor <= sent / size <= 1.05 * factor, (size, rank, sent / size)
    ratios = ", ".join(f"{sent / size:.4f}" for (size, _), sent in sorted(table.items()))
    print(f"group of {n}: busbw {bus:.4f} GB/s (algbw {alg:.4f}), wire factors {ratios}")


def test_a_rank_cancelled_mid_collective_is_an_error_naming_that_rank_and_no_rank_fails(
    slurm_cluster: SlurmCluster, tmp_path: Path
) -> None:
    nodes = slurm_cluster.nodes[:3]
    # One size, iterated long enough that the collective is surely under way when rank 2 goes.
    test = nccl_group(duration=30, BURNIN_NCCL_SIZES="1M", BURNIN_NCCL_ITERS="100000")
    profile = profile_file(tmp_path / "group.yaml", "group-cut", [test])
    runner = teeing_runner(tmp_path)
    engine = start_glimmer(slurm_cluster, tmp_path / "state", [profile], nodes, 3, runner=runner)
    try:

        def rank_2_running() -> str | None:
            out = slurm_cluster.slurm.run("squeue", "-h", "-t", "running", "-o", "%i|%j")
            jobs = dict(reversed(line.split("|", 1)) for line in out.splitlines() if "|" in line)
            ranks = [j for name, j in jobs.items() if "-rank-" in name]
            found = [j for name, j in jobs.items() if "-rank-2-" in name]
            return found[0] if len(ranks) == 3 and found else None

        job = wait_for("all three ranks running", rank_2_running, 60)
        wait_for("every rank in the collective", lambda: _joined(tmp_path) == 3, 60)
        slurm_cluster.slurm.run("scancel", job)
        out, err = engine.communicate(timeout=120)
    finally:
        if engine.poll() is None:
            engine.kill()
            engine.wait(timeout=30)
    ran = Ran(engine.returncode, out, err)
    [(key, result)] = ran.results().items()
    assert key == ("allreduce", tuple(nodes))
    assert result.phase is Phase.ERROR, (result.phase, result.message)
    message = result.message or ""
    assert "rank 2 (n3)" in message, message
    # A cut collective is no hardware finding about anyone: no rank is reported failed, and
    # the ranks that stayed say whom they lost (nccl_peer), the cancelled rank's node.
    assert not re.search(r"rank \d \(n\d\) failed", message), message
    assert "(n3) went away" in message, message
    assert engine.returncode != 0
    print(f"rank 2 cancelled: {message}")


def _joined(folder: Path) -> int:
    """Ranks whose log says they joined the process group (their sweep starts next)."""
    return sum("joined as rank" in p.read_text() for p in (folder / "rank-logs").glob("*.log"))
