"""nccl (§9.11): collective bus bandwidth through ``torch.distributed`` with the NCCL backend.

Scopes, told apart by the variables the dispatcher injects (§3.5):

* **Node** (no role, no rank): one rank per visible GPU on this node. This process is rank 0;
  it starts the other ranks as child processes of this same module on loopback. Fewer than two
  GPUs is a Skip (a DGX Spark has one).
* **Pair** (``BURNIN_ROLE`` server | client): the server is rank 0, the client rank 1 and
  reaches it at ``BURNIN_PEER_HOST``.
* **Group** (``BURNIN_RANK``, ``BURNIN_NRANKS``): rank 0 serves, the others reach it at
  ``BURNIN_ROOT_HOST``.

In every scope rank 0 hosts the rendezvous (a ``TCPStore`` on ``BURNIN_NCCL_PORT``, 29511;
ephemeral at Node scope) in the very process that then joins as rank 0, so NCCL's unique id,
which ProcessGroupNCCL creates on rank 0 (``ncclGetUniqueId``) and publishes through that store,
comes from the process that uses it. Before the rendezvous a Pair or Group rank checks its
memlock limit and pins NCCL to the route to its peer (:mod:`glimmer.runners.nccl_fabric`); it
never disables IB to get through, and a silent fallback to TCP sockets is an Error.

The sweep (:mod:`glimmer.runners.nccl_sweep`): ``BURNIN_VARIANT_COLLECTIVE`` (allreduce,
default | allgather | reducescatter | alltoall) over ``BURNIN_NCCL_SIZES`` (8 B … 256 MiB),
``BURNIN_NCCL_WARMUP`` (5) and ``BURNIN_NCCL_ITERS`` (20) per size within
``BURNIN_DURATION_SECONDS`` (120), every size checked element by element on every rank. Only
rank 0 prints metrics: ``busBandwidthGBs`` (the peak over the sweep), ``algBandwidthGBs`` (same
size), ``latencyUs`` (smallest size), ``miscompares`` (summed over ranks), ``ranks``, and at
Node scope ``ncclTransport``. On gloo at Pair and Group scope rank 0 also notes the bytes every
rank sent per iteration of every size (``wire`` lines, :mod:`glimmer.runners.nccl_wire`), the
measured counterpart of the bus factor.

Exit: 1 incorrect elements, or a sweep that moved no traffic; 2 (``NCCL_SKIP``) no GPU on this
host, or Node scope with fewer than two; 3 memlock too small, rendezvous failure, a rank that
died, silent TCP, bad configuration.

Test mode (``BURNIN_TEST_DEVICE=cpu``): the same processes, rendezvous, sweep, checks and bus
factors, with the gloo backend on cpu tensors over loopback. Self-test:
``BURNIN_NCCL_INJECT_MISCOMPARES=N`` changes N received elements on rank 0 before the check.
"""

from __future__ import annotations

import contextlib
import datetime
import importlib
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from glimmer.runners import devices as dv
from glimmer.runners import nccl_fabric as fabric
from glimmer.runners import nccl_peer
from glimmer.runners import nccl_sweep as sweep
from glimmer.runners import nccl_wire as wire
from glimmer.runners.deadline import Deadline
from glimmer.runners.gemm_sweep import first_line
from glimmer.runners.outcome import ConfigError, Outcome, Stop, errored, failed, passed, skipped
from glimmer.runners.program import Context, main
from glimmer.runners.report import Report
from glimmer.runners.settings import Settings

KIND = "nccl"
COLLECTIVE = "BURNIN_VARIANT_COLLECTIVE"
SIZES = "BURNIN_NCCL_SIZES"
PORT = "BURNIN_NCCL_PORT"
RENDEZVOUS_S = "BURNIN_NCCL_RENDEZVOUS_TIMEOUT_S"
ITERS = "BURNIN_NCCL_ITERS"
WARMUP = "BURNIN_NCCL_WARMUP"
INJECT = "BURNIN_NCCL_INJECT_MISCOMPARES"
# Internal: "<rank>,<world>,<port>", set by a Node-scope rank 0 for the ranks it starts.
WORKER = "BURNIN_NCCL_NODE_WORKER"
DEFAULT_PORT = 29511
DEFAULT_DURATION_S = 120
# Group pods get 300 s of rendezvous grace (§2.9): ranks wait for peers not yet created.
DEFAULT_RENDEZVOUS_S = 300


@dataclass(frozen=True)
class Scope:
    name: str  # node | pair | group
    rank: int
    world: int | None  # None at Node scope until the devices are counted
    root_host: str | None  # where rank 0 is; None on rank 0
    port: int
    peer: str | None  # the host whose route NCCL is pinned to
    worker: bool = False  # a Node-scope rank started by rank 0


@dataclass(frozen=True)
class Config:
    collective: str
    sizes: tuple[int, ...]
    warmup: int
    iters: int
    duration_s: int
    rendezvous_s: int
    inject: int
    min_memlock_mib: int | None


def read_config(settings: Settings) -> Config:
    collective = settings.text(COLLECTIVE, "allreduce")
    if collective not in sweep.COLLECTIVES:
        raise ConfigError(COLLECTIVE, f"unknown collective {collective!r}")
    raw = settings.raw(SIZES)
    sizes = sweep.DEFAULT_SIZES if raw is None else sweep.parse_sizes(raw)
    if isinstance(sizes, str):
        raise ConfigError(SIZES, sizes)
    memlock = settings.raw(fabric.MIN_MEMLOCK_MIB)
    return Config(
        collective, sizes,
        settings.integer(WARMUP, 5, minimum=0, maximum=1000),
        settings.integer(ITERS, 20, minimum=1, maximum=100000),
        settings.duration(DEFAULT_DURATION_S),
        settings.integer(RENDEZVOUS_S, DEFAULT_RENDEZVOUS_S, minimum=1),
        settings.integer(INJECT, 0, minimum=0),
        None if memlock is None else settings.integer(fabric.MIN_MEMLOCK_MIB, 0, minimum=0),
    )  # fmt: skip


def read_scope(settings: Settings) -> Scope:
    port = settings.integer(PORT, DEFAULT_PORT, minimum=1, maximum=65535)
    worker = settings.raw(WORKER)
    if worker is not None:
        rank, world, node_port = (int(x) for x in worker.split(","))
        return Scope("node", rank, world, "127.0.0.1", node_port, None, worker=True)
    role = settings.raw("BURNIN_ROLE")
    if role is not None:
        if role not in ("server", "client"):
            raise ConfigError("BURNIN_ROLE", f"{role!r} is neither server nor client")
        peer = settings.raw("BURNIN_PEER_HOST")
        if peer is None:
            raise ConfigError("BURNIN_PEER_HOST", "unset: a Pair rank needs its peer's address")
        if role == "server":
            return Scope("pair", 0, 2, None, port, peer)
        return Scope("pair", 1, 2, peer, port, peer)
    if settings.raw("BURNIN_RANK") is not None or settings.raw("BURNIN_NRANKS") is not None:
        world = settings.integer("BURNIN_NRANKS", 0, minimum=2)
        if world == 0:
            raise ConfigError("BURNIN_NRANKS", "unset: a Group rank needs the group's size")
        rank = settings.integer("BURNIN_RANK", -1, minimum=0, maximum=world - 1)
        if rank < 0:
            raise ConfigError("BURNIN_RANK", "unset: a Group rank needs its rank")
        root = settings.raw("BURNIN_ROOT_HOST")
        if root is None and rank > 0:
            raise ConfigError("BURNIN_ROOT_HOST", "unset: rank 0's address is needed")
        return Scope("group", rank, world, None if rank == 0 else root, port, root)
    return Scope("node", 0, None, None, 0, None)


def load_dist(torch: ModuleType) -> ModuleType:
    dist = importlib.import_module("torch.distributed")
    if not dist.is_available():
        raise Stop(errored(f"torch {torch.__version__} was built without torch.distributed"))
    return dist


def open_store(dist: ModuleType, scope: Scope, world: int, timeout_s: int) -> Any:
    """Rank 0 serves the rendezvous; the others reach it (a refusal is an Error, exit 3)."""
    timeout = datetime.timedelta(seconds=timeout_s)
    try:
        if scope.rank == 0:
            return dist.TCPStore(
                "127.0.0.1" if scope.name == "node" else "0.0.0.0", scope.port, world,
                is_master=True, timeout=timeout, wait_for_workers=False,
            )  # fmt: skip
        return dist.TCPStore(scope.root_host, scope.port, world, is_master=False, timeout=timeout)
    except (RuntimeError, OSError) as exc:
        where = f"{scope.root_host or 'this host'}:{scope.port}"
        raise Stop(errored(f"rendezvous at {where} failed: {first_line(exc)}")) from None


@dataclass
class RankResult:
    sizes: list[sweep.SizeResult]
    miscompares: int
    # Bytes each rank sent per iteration, by rank then size; empty where not measured.
    wire: list[list[float]] = field(default_factory=list)


def run_rank(
    torch: ModuleType, dist: ModuleType, scope: Scope, world: int, store: Any, device: str,
    cfg: Config, joined: Callable[[], None] | None = None,
) -> RankResult:  # fmt: skip
    """Join the collective and sweep; every rank runs exactly this. ``joined`` is called once
    the process group is formed (a breadcrumb: a rank killed later has its log say it got there)."""
    gloo = device == "cpu"
    timeout = datetime.timedelta(seconds=cfg.rendezvous_s)
    try:
        if gloo:
            dist.init_process_group("gloo", store=store, rank=scope.rank, world_size=world,
                                    timeout=timeout)  # fmt: skip
        else:
            torch.cuda.set_device(torch.device(device))
            dist.init_process_group("nccl", store=store, rank=scope.rank, world_size=world,
                                    timeout=timeout, device_id=torch.device(device))  # fmt: skip
    except (RuntimeError, ValueError) as exc:
        raise Stop(errored(f"joining the collective failed: {first_line(exc)}")) from None
    if joined is not None:
        joined()
    # Only gloo's traffic is TCP through the namespace's counters; Node-scope ranks share them.
    measured = gloo and scope.name != "node"
    loopback = wire.is_loopback(scope.root_host or scope.peer)
    try:
        return _sweep(torch, dist, device, cfg, scope.rank == 0, loopback if measured else None)
    except RuntimeError as exc:
        said = first_line(exc)
        lost = nccl_peer.lost_peer(said)
        why = f"{lost}: {said}" if lost else said
        raise Stop(errored(f"collective failed on rank {scope.rank}: {why}")) from None
    finally:
        with contextlib.suppress(RuntimeError, ValueError):
            dist.destroy_process_group()


def _sweep(
    torch: ModuleType, dist: ModuleType, device: str, cfg: Config, root: bool,
    loopback: bool | None,
) -> RankResult:  # fmt: skip
    """The sweep on this rank; ``loopback`` (None: not measured) says which interfaces'
    transmit counters hold the collective's traffic (:mod:`glimmer.runners.nccl_wire`)."""

    def sync() -> None:
        if device != "cpu":
            torch.cuda.synchronize()

    deadline = Deadline(cfg.duration_s)
    flag = torch.zeros(1, device=device)
    results: list[sweep.SizeResult] = []
    wrong_total = 0
    sent: list[float] = []
    to_inject = cfg.inject if root else 0
    for position, size in enumerate(cfg.sizes):
        # Rank 0 alone decides whether there is time for another size, so all ranks agree.
        flag.fill_(1.0 if (position == 0 or not deadline.expired()) else 0.0)
        dist.broadcast(flag, src=0)
        if float(flag.item()) == 0.0:
            break
        op = sweep.Collective(torch, dist, cfg.collective, size, device)
        before = wire.sent_bytes(loopback) if loopback is not None else 0
        seconds, _ = sweep.time_size(op, cfg.warmup, cfg.iters, sync)
        if loopback is not None:
            # Read once every rank is done with this size: a rank's collective can return while
            # its last chunk of the ring still sits in its socket buffer (counted late, in the
            # next size, or never); once all ranks reach the barrier, every byte this rank sent
            # was received, so it is on the counters. Measured without it: 1.46 against 1.50
            # for four ranks on a loaded machine.
            dist.barrier()
            sent.append((wire.sent_bytes(loopback) - before) / (cfg.warmup + cfg.iters))
        # The self-test corrupts the first size with room for every corrupted element.
        corrupt = to_inject if to_inject and op.output.numel() >= to_inject else 0
        to_inject -= corrupt
        wrong = op.wrong_elements(corrupt)
        wrong_total += wrong
        results.append(sweep.result_of(op, seconds, wrong))
    total = torch.tensor([float(wrong_total)], device=device)
    dist.all_reduce(total)
    return RankResult(results, int(total.item()), _pooled(torch, dist, device, sent, loopback))


def _pooled(
    torch: ModuleType, dist: ModuleType, device: str, sent: list[float], loopback: bool | None
) -> list[list[float]]:
    """Every rank's bytes sent per size, on every rank (each fills its own row; the sum of
    the rows is the table). Measured after the sweep, so this traffic is in no figure."""
    if loopback is None or not sent:
        return []
    table = torch.zeros(dist.get_world_size(), len(sent), dtype=torch.float64, device=device)
    table[dist.get_rank()] = torch.tensor(sent, dtype=torch.float64, device=device)
    dist.all_reduce(table)
    return [[float(x) for x in row] for row in table.tolist()]


def report_sweep(report: Report, cfg: Config, world: int, got: RankResult) -> Outcome:
    for s in got.sizes:
        report.note(
            f"size {s.size_bytes} B: {s.seconds * 1e6:.2f} us, algbw {s.algbw_gbs:.4f} GB/s, "
            f"busbw {s.busbw_gbs:.4f} GB/s, wrong {s.wrong}"
        )
    sizes = [s.size_bytes for s in got.sizes]
    factor = sweep.bus_factor(cfg.collective, world)
    for line in wire.wire_lines(cfg.collective, factor, sizes, got.wire):
        report.note(line)
    if not got.sizes:
        return errored("no size of the sweep completed")
    peak = max(got.sizes, key=lambda s: s.busbw_gbs)
    report.metric("busBandwidthGBs", peak.busbw_gbs, 4)
    report.metric("algBandwidthGBs", peak.algbw_gbs, 4)
    report.metric("latencyUs", got.sizes[0].seconds * 1e6, 2)
    report.metric("miscompares", got.miscompares)
    report.metric("ranks", world)
    if got.miscompares:
        return failed(f"{got.miscompares} incorrect elements in the {cfg.collective} results")
    if peak.busbw_gbs <= 0:
        return failed(f"the {cfg.collective} sweep completed with zero traffic")
    return passed()


@contextlib.contextmanager
def nccl_logs(backend_nccl: bool) -> Iterator[Path | None]:
    """A directory NCCL's INIT/NET log goes to for this run (NCCL only)."""
    if not backend_nccl:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="glimmer-nccl-") as tmp:
        log_dir = Path(tmp)
        fabric.environ_with(fabric.debug_env(os.environ, log_dir))
        yield log_dir


def start_workers(world: int, port: int, devices: tuple[dv.Device, ...]) -> list[Any]:
    procs = []
    for rank in range(1, world):
        env = {**os.environ, WORKER: f"{rank},{world},{port}"}
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "glimmer.runners.nccl"],
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        )
    return procs


def wait_workers(procs: list[Any], timeout_s: float) -> str | None:
    """Why a started rank did not end cleanly (exit 0 or 1), or None."""
    problems = []
    for rank, proc in enumerate(procs, start=1):
        try:
            out, err = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
            problems.append(f"rank {rank} did not finish")
            continue
        if proc.returncode not in (0, 1):
            last = (out or err or "").strip().splitlines()
            problems.append(f"rank {rank} exited {proc.returncode}: {last[-1] if last else ''}")
    return "; ".join(problems) or None


def node_scope(ctx: Context, torch: ModuleType, cfg: Config, scope: Scope) -> Outcome:
    found = dv.discover(ctx.settings, torch)
    if not found.visible:
        return dv.no_device_outcome(found, "no NVIDIA accelerator")
    devices = dv.allocate(ctx.settings, found)
    if len(devices) < 2:
        return skipped(f"Node scope needs at least 2 GPUs: {len(devices)} visible")
    dist = load_dist(torch)
    world = len(devices)
    with nccl_logs(not devices[0].test) as log_dir:
        store = open_store(dist, scope, world, cfg.rendezvous_s)
        procs = start_workers(world, int(store.port), devices)
        try:
            got = run_rank(torch, dist, scope, world, store, devices[0].torch_device, cfg)
        except BaseException:  # rank 0 is gone: the ranks it started would wait for it
            for proc in procs:
                proc.kill()
            wait_workers(procs, 5)
            raise
        problem = wait_workers(procs, cfg.rendezvous_s + cfg.duration_s)
        log = fabric.read_logs(log_dir) if log_dir is not None else ""
    outcome = report_sweep(ctx.report, cfg, world, got)
    ctx.report.metric("ncclTransport", fabric.transport(log))
    if problem and outcome.exit_code != 1:
        return errored(problem)
    return outcome


def worker_scope(ctx: Context, torch: ModuleType, cfg: Config, scope: Scope) -> Outcome:
    """A Node-scope rank started by rank 0: its device is the rank's, it prints no metrics."""
    assert scope.world is not None
    found = dv.discover(ctx.settings, torch)
    device = found.visible[scope.rank].torch_device
    dist = load_dist(torch)
    store = open_store(dist, scope, scope.world, cfg.rendezvous_s)
    got = run_rank(torch, dist, scope, scope.world, store, device, cfg)
    return failed("incorrect elements") if got.miscompares else passed()


def networked_scope(ctx: Context, torch: ModuleType, cfg: Config, scope: Scope) -> Outcome:
    """One rank of a Pair or Group, on this node's first GPU."""
    assert scope.world is not None
    found = dv.discover(ctx.settings, torch)
    if not found.visible:
        return dv.no_device_outcome(found, "no NVIDIA accelerator")
    device = found.visible[0]
    shortfall = fabric.memlock_shortfall(cfg.min_memlock_mib)
    if shortfall:
        return errored(f"{shortfall}: NCCL cannot shrink its registrations; checked before the "
                       "rendezvous, and IB is never disabled to get around it")  # fmt: skip
    fabric.environ_with(fabric.pinned_env(os.environ, scope.peer, ctx.paths.sysfs))
    dist = load_dist(torch)
    with nccl_logs(not device.test) as log_dir:
        store = open_store(dist, scope, scope.world, cfg.rendezvous_s)
        got = run_rank(
            torch, dist, scope, scope.world, store, device.torch_device, cfg,
            lambda: ctx.report.note(f"joined as rank {scope.rank} of {scope.world}"),
        )  # fmt: skip
        log = fabric.read_logs(log_dir) if log_dir is not None else ""
    tcp = fabric.silent_tcp(log, os.environ, ctx.paths.sysfs) if log else None
    if scope.rank != 0:
        if tcp:
            return errored(tcp)
        return failed("incorrect elements (reported by rank 0)") if got.miscompares else passed()
    outcome = report_sweep(ctx.report, cfg, scope.world, got)
    if tcp and outcome.exit_code == 0:
        return errored(tcp)
    return outcome


def measure(ctx: Context) -> Outcome:
    cfg = read_config(ctx.settings)
    scope = read_scope(ctx.settings)
    torch = dv.load_torch()
    if torch is None:
        return dv.no_device_outcome(dv.discover(ctx.settings, None), "no NVIDIA accelerator")
    if scope.worker:
        return worker_scope(ctx, torch, cfg, scope)
    if scope.name == "node":
        return node_scope(ctx, torch, cfg, scope)
    return networked_scope(ctx, torch, cfg, scope)


if __name__ == "__main__":
    main(KIND, measure)
