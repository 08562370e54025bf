"""Linear at any scale (issue 12, "Done when"): one table of CPU time and peak memory, each case
in a process of its own, beside its target.

Cases: the ``acceptance`` profile at 1,024, 4,096 and 16,384 nodes (cap 64) with the CPU ratio
per 4x nodes (target <= 4.4), the 16,384-node run's CPU (<= 90 s) and peak RSS (<= 1.5 GB);
4,096 nodes at cap 1,024 against cap 64 (<= 1.3x); a ``pair-network`` sweep of 512 and 2,048
pairs (<= 4.4x for 4x the pairs); ``glimmer certify run`` with ``testScale: diagnose`` and one
planted NIC fault at 4,096 and 16,384 nodes (<= 4.4x); ``glimmer --version`` (<= 0.3 s). A
fixed pure-Python loop comes first: its CPU says how fast the machine is (machines here have
differed by 2x between sessions), and the 16,384-node CPU is also given in multiples of it.

Fleets are HGX H100 (8 GPUs a node) as ``glimmer fleet generate`` makes them; the engine runs are
built as ``bench/run_scale.py`` builds its own. CPU is the child's user + system time and RSS its
peak (``os.wait4``), so a case pays for its imports and its fleet as a user's command does.

Every case runs ``--repeat`` times (3 unless told), round by round, and its run of least CPU
is the one shown, with every try's CPU beside it: the speed of the machines here moves by a
third from minute to minute under no load of ours, and ratios of single runs moved with it
(the 16,384-node step measured 4.19x and 5.24x in two runs an hour apart, with no change).

It only prints: a slow machine is a finding, not a crash. ``--max-nodes N`` leaves out the cases
over N nodes (the 16k-node engine runs take minutes); ``--timeout S`` gives up on a case after
S seconds of its CPU time and says so in its row.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from glimmer.backends.sim.backend import SimBackend

RATIO_TARGET = 4.4  # CPU per 4x the work
CAP_RATIO_TARGET = 1.3  # cap 1,024 over cap 64
BIG_CPU_TARGET = 90.0  # seconds, 16,384-node acceptance
BIG_RSS_TARGET = 1.5e9  # bytes
VERSION_TARGET = 0.3  # seconds of wall time
ACCEPTANCE_NODES = (1024, 4096, 16384)
PAIRS = (512, 2048)
CERTIFY_NODES = (4096, 16384)
GPUS_PER_NODE = 8
TIMEOUT = 3600.0
REPEAT = 3  # rounds of every case; each case's least CPU is kept (see run_rounds)
REFERENCE_LOOPS = 3_000_000  # about 2 s of CPU on the machines these figures were taken on
HERE = Path(__file__).resolve().parent

DIAGNOSE = """\
apiVersion: certify.glimmer.ai/v1alpha1
kind: Certification
metadata: {name: diagnose, namespace: default}
spec:
  target: {}
  categories:
    - domain: communication
      variant: nccl-all-reduce
      options: {testScale: diagnose}
"""


# -- the cases, as run in their own process -----------------------------------------------------


def _backend(nodes: int) -> SimBackend:
    """A simulator backend over a generated HGX fleet of ``nodes`` nodes."""
    from glimmer.backends.sim.fleet import fleet_backend
    from glimmer.fleet.build import build
    from glimmer.fleet.generate import generate_fleet
    from glimmer.sim.twin import FleetSim

    return fleet_backend(FleetSim(build(generate_fleet(nodes * GPUS_PER_NODE, "hgx"))), seed=1)


def child_acceptance(nodes: int, cap: int) -> str:
    """One ``acceptance`` run over ``nodes`` nodes at ``cap``, driven to its verdict."""
    sys.path.insert(0, str(HERE))
    from glimmer.backends.sim.driver import drive
    from glimmer.engine.reconciler import Engine
    from run_scale import _run

    backend = _backend(nodes)
    targets = list(backend.nodes)[:nodes]
    name = f"acceptance-{nodes}"
    backend.submit(_run(name, "acceptance", targets, cap))
    result = drive(backend, Engine(backend), "default", name)
    status = result.run.status
    phase = status.phase.value if status else "?"
    units = len(status.results or ()) if status else 0
    per_unit = f" ({result.passes / units:.2f} a unit)" if units else ""
    return f"{phase}, {result.passes:,} passes{per_unit}"


def child_pairs(pairs: int) -> str:
    """A ``pair-network`` sweep: one run per pair of neighbours, driven together."""
    sys.path.insert(0, str(HERE))
    from glimmer.backends.sim.driver import drive_many
    from glimmer.engine.reconciler import Engine
    from run_scale import _run

    backend = _backend(2 * pairs)
    nodes = list(backend.nodes)[: 2 * pairs]
    keys = []
    for i in range(pairs):
        run = backend.submit(_run(f"pair-{i:04d}", "pair-network", nodes[2 * i : 2 * i + 2], 2))
        keys.append(("default", run.name))
    result = drive_many(backend, Engine(backend), keys)
    phases: dict[str, int] = {}
    for key in keys:
        got = backend.get_run(*key)
        phase = got.status.phase.value if got and got.status else "?"
        phases[phase] = phases.get(phase, 0) + 1
    shown = ", ".join(f"{n} {p}" for p, n in sorted(phases.items()))
    return f"{shown}, {result.passes:,} passes"


def child_reference() -> str:
    """A fixed pure-Python workload of the engine's kind (small dicts, strings, integer
    arithmetic): its CPU moves with the machine, never with glimmer's code, so the table can say
    how fast the machine it ran on was. Two sessions' machines have differed by 2x."""
    total = 0
    for i in range(REFERENCE_LOOPS):
        d = {"n": i, "text": f"node-{i:05d}"}
        total += len(d["text"]) + d["n"] % 7
    return f"checksum {total}"


def child_main(argv: Sequence[str]) -> int:
    from glimmer.cli.collector import tune

    tune()  # as the console script does: a case pays what a user's command pays
    kind, *args = argv
    if kind == "acceptance":
        note = child_acceptance(int(args[0]), int(args[1]))
    elif kind == "pairs":
        note = child_pairs(int(args[0]))
    elif kind == "reference":
        note = child_reference()
    elif kind == "fleet":
        note = child_fleet(int(args[0]), Path(args[1]))
    else:
        raise SystemExit(f"unknown case {kind!r}")
    print(note)
    return 0


# -- measuring a child ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Measured:
    cpu_s: float
    wall_s: float
    rss_bytes: int
    rc: int
    out: str
    timed_out: bool = False


def _cpu_so_far(pid: int, start: float) -> float:
    """CPU seconds ``pid`` has used (from /proc); wall seconds since ``start`` where there is no
    /proc. A loaded machine stretches wall time, so a limit on CPU stops the same work."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return time.perf_counter() - start


def measure(argv: Sequence[str], timeout: float) -> Measured:
    """Run ``argv`` to its end (or ``timeout`` seconds of its CPU); its CPU time and peak RSS."""
    with tempfile.TemporaryFile("w+") as out:
        start = time.perf_counter()
        child = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, text=True)
        timed_out = False
        while True:
            pid, status, usage = os.wait4(child.pid, os.WNOHANG)
            if pid:
                break
            if _cpu_so_far(child.pid, start) > timeout:
                os.kill(child.pid, signal.SIGKILL)  # the child this function started
                _, status, usage = os.wait4(child.pid, 0)
                timed_out = True
                break
            time.sleep(0.05)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
        out.seek(0)
        text = out.read()
    return Measured(
        usage.ru_utime + usage.ru_stime,
        wall,
        usage.ru_maxrss * 1024,  # kilobytes on Linux
        child.returncode,
        text,
        timed_out,
    )


# -- the table ------------------------------------------------------------------------------------


@dataclass
class Row:
    case: str
    got: Measured | None = None  # None: left out (--max-nodes)
    note: str = ""
    figure: str = ""
    target: str = ""
    met: str = ""
    derived: bool = False  # a check on the case above, no run of its own


def mark(value: float, target: float) -> str:
    return "yes" if value <= target else "NO"


def cpu_of(row: Row) -> float | None:
    """The row's CPU seconds when its case ran to its end."""
    got = row.got
    if got is None or got.timed_out or row.note.startswith("failed"):
        return None
    return got.cpu_s


def ratio_check(row: Row, base: Row, label: str, target: float) -> None:
    """Fill ``row``'s figure with its CPU over ``base``'s, against ``target``."""
    big, small = cpu_of(row), cpu_of(base)
    row.target = f"<= {target:g}x"
    if big is None or small is None or small <= 0:
        row.figure, row.met = f"{label}: -", "-"
        return
    ratio = big / small
    row.figure, row.met = f"{label}: {ratio:.3f}x", mark(ratio, target)


def outcome(got: Measured, note: Callable[[Measured], str]) -> str:
    if got.timed_out:
        return f"failed: stopped after {got.cpu_s:.0f} s CPU ({got.wall_s:.0f} s wall)"
    try:
        return note(got)
    except (ValueError, KeyError, IndexError) as e:
        tail = got.out.strip().splitlines()[-1:] or [""]
        return f"failed: rc {got.rc} ({type(e).__name__}: {tail[0][:60]})"


def _engine_note(got: Measured) -> str:
    if got.rc != 0:
        raise ValueError("non-zero exit")
    return got.out.strip().splitlines()[-1]


def _certify_note(expect: str) -> Callable[[Measured], str]:
    def note(got: Measured) -> str:
        doc = json.loads(got.out)
        failed = doc["failedNodes"]
        # The planted fault must be found: exit 1 (not certified), naming that node alone.
        if got.rc != 1 or failed != [expect]:
            raise ValueError(f"failed nodes {failed}")
        return f"{doc['result']}, {failed[0]} named"

    return note


def _version_note(got: Measured) -> str:
    if got.rc != 0:
        raise ValueError("non-zero exit")
    return got.out.strip()


def human_bytes(n: int) -> str:
    return f"{n / 1e9:.2f} GB" if n >= 1e9 else f"{n / 1e6:.0f} MB"


def print_table(rows: Sequence[Row]) -> None:
    head = ("case", "CPU s", "wall s", "max RSS", "figure", "target", "met", "outcome")
    cells = []
    for r in rows:
        g = r.got
        cells.append(
            (
                r.case,
                f"{g.cpu_s:.2f}" if g else "-",
                f"{g.wall_s:.2f}" if g else "-",
                human_bytes(g.rss_bytes) if g else "-",
                r.figure or "-",
                r.target or "-",
                r.met or "-",
                r.note if g or r.derived else f"left out ({r.note})",
            )
        )
    widths = [max(len(c[i]) for c in [head, *cells]) for i in range(len(head))]
    right = {1, 2, 3}

    def line(c: Sequence[str]) -> str:
        return "  ".join(
            x.rjust(w) if i in right else x.ljust(w)
            for i, (x, w) in enumerate(zip(c, widths, strict=True))
        ).rstrip()

    print(line(head))
    print("  ".join("-" * w for w in widths))
    for c in cells:
        print(line(c))


# -- the whole run --------------------------------------------------------------------------------


def _fault_host(doc: dict[str, Any]) -> str:
    """A node a third of the way into the generated fleet, midway through its pool."""
    pools = doc["spec"]["pools"]
    pool = pools[len(pools) // 3]
    return f"{pool['hostnamePrefix']}-{pool['nodeCount'] // 2:04d}"


def child_fleet(nodes: int, fleet: Path) -> str:
    """Write the generated fleet of ``nodes`` nodes to ``fleet``; the host to plant a fault on."""
    from glimmer.fleet.generate import generate, to_yaml

    doc = generate(nodes * GPUS_PER_NODE, "hgx")
    fleet.write_text(to_yaml(doc), encoding="utf-8")
    return _fault_host(doc)


def certify_case(folder: Path, nodes: int, glimmer: str) -> tuple[list[str], str]:
    """The ``glimmer certify run`` command of the diagnose case over a generated fleet of
    ``nodes`` nodes written into ``folder``, and the host its one NIC fault is planted on. The
    fleet is written by a process of its own: a child's peak RSS counts the pages of the parent
    it was forked from, so this process stays small."""
    cert = folder / "diagnose.yaml"
    cert.write_text(DIAGNOSE, encoding="utf-8")
    fleet = folder / f"hgx-{nodes}.yaml"
    me = [sys.executable, str(Path(__file__).resolve()), "--child", "fleet"]
    made = subprocess.run([*me, str(nodes), str(fleet)], capture_output=True, text=True, check=True)
    host = made.stdout.strip().splitlines()[-1]
    argv = [glimmer, "certify", "run", "-f", str(cert), "--fleet", str(fleet),
            "--fault", f"nic_degraded@nic:{host}/ib2", "-o", "json"]  # fmt: skip
    return argv, host


@dataclass(frozen=True)
class Case:
    """One case of the table: the command it runs and how its output reads."""

    name: str
    nodes: int  # what --max-nodes compares (0: always run)
    argv: list[str]
    note: Callable[[Measured], str]


def best_of(case: Case, tries: Sequence[Measured]) -> Row:
    """The case's row from its tries: the one of least CPU among those that ran to a good end
    (the machine at its least disturbed); when none did, the last try, whose note says why."""
    rows = [Row(case.name, got, outcome(got, case.note)) for got in tries]
    good = [r for r in rows if cpu_of(r) is not None]
    if not good:
        return rows[-1]
    row = min(good, key=lambda r: r.got.cpu_s if r.got else math.inf)
    if len(tries) > 1:
        spread = ", ".join(f"{got.cpu_s:.2f}" for got in tries)
        row.note = f"{row.note}; best of {len(tries)} ({spread} s)"
    return row


def run_rounds(cases: Sequence[Case], repeat: int, timeout: float, limit: float) -> dict[str, Row]:
    """Every case ``repeat`` times, round by round (each case once per round), so that each
    case's tries fall in different minutes: this machine's speed has been seen to move by a
    third from one minute to the next, under no load of ours, and a case measured in a slow
    minute against its smaller case in a fast one made a ratio of nothing but that."""
    tries: dict[str, list[Measured]] = {c.name: [] for c in cases}
    for round_ in range(1, repeat + 1):
        for case in cases:
            if case.nodes > limit:
                continue
            print(f"... {case.name} (round {round_} of {repeat})", file=sys.stderr, flush=True)
            got = measure(case.argv, timeout)
            # As each case ends, so that a run stopped before the table still leaves figures.
            print(f"    CPU {got.cpu_s:.2f} s, wall {got.wall_s:.2f} s, max RSS "
                  f"{human_bytes(got.rss_bytes)}: {outcome(got, case.note)}",
                  file=sys.stderr, flush=True)  # fmt: skip
            tries[case.name].append(got)
    return {
        c.name: best_of(c, tries[c.name])
        if tries[c.name]
        else Row(c.name, None, f"over --max-nodes {limit:,.0f}")
        for c in cases
    }


# Each case's name, which is also its key from the rounds to the table.
REFERENCE = "reference: pure-Python loop"


def acceptance_case(nodes: int, cap: int) -> str:
    return f"acceptance {nodes:,} nodes, cap {cap:,}"


def pairs_case(pairs: int) -> str:
    return f"pair-network {pairs:,} pairs"


def certify_case_name(nodes: int) -> str:
    return f"certify diagnose {nodes:,} nodes, 1 fault"


def _cases(me: list[str], glimmer: str, folder: Path, limit: float) -> list[Case]:
    cases = [Case(REFERENCE, 0, [*me, "reference"], _engine_note)]
    cases += [
        Case(acceptance_case(n, cap), n, [*me, "acceptance", str(n), str(cap)], _engine_note)
        for n, cap in [(n, 64) for n in ACCEPTANCE_NODES] + [(4096, 1024)]
    ]
    cases += [Case(pairs_case(p), 2 * p, [*me, "pairs", str(p)], _engine_note) for p in PAIRS]
    for n in CERTIFY_NODES:
        name = certify_case_name(n)
        if n > limit:
            cases.append(Case(name, n, [], _engine_note))  # left out: never run
            continue
        argv, host = certify_case(folder, n, glimmer)
        cases.append(Case(name, n, argv, _certify_note(host)))
    return cases


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--max-nodes", type=int, default=None, help="leave out bigger cases")
    ap.add_argument("--timeout", type=float, default=TIMEOUT, help="CPU seconds per case")
    ap.add_argument(
        "--repeat", type=int, default=REPEAT, help="rounds of every case (best of them is kept)"
    )
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        return child_main(args.child)
    if args.repeat < 1:
        ap.error("--repeat must be at least 1")
    limit = args.max_nodes if args.max_nodes is not None else math.inf
    me = [sys.executable, str(Path(__file__).resolve()), "--child"]
    glimmer = str(Path(sys.executable).with_name("glimmer"))
    with tempfile.TemporaryDirectory(prefix="glimmer-scale-") as tmp:
        cases = _cases(me, glimmer, Path(tmp), limit)
        got = run_rounds(cases, args.repeat, args.timeout, limit)
    rows = table_rows(got)
    # The fastest of three (or of the rounds): a start-up figure is what an idle machine gives.
    tries = [measure([glimmer, "--version"], args.timeout) for _ in range(max(3, args.repeat))]
    version = min(
        (Row("glimmer --version", t, outcome(t, _version_note)) for t in tries),
        key=lambda r: r.got.wall_s if r.got else math.inf,
    )
    if version.got and not version.note.startswith("failed"):
        wall = version.got.wall_s
        version.figure = f"wall {wall:.2f} s (best of {len(tries)})"
        version.target = f"<= {VERSION_TARGET} s"
        version.met = mark(wall, VERSION_TARGET)
    rows.append(version)
    print_table(rows)
    return 0


def table_rows(got: dict[str, Row]) -> list[Row]:
    """The table's rows, in order, with their ratios and the checks on the 16k-node run."""
    reference = got[REFERENCE]
    acc = [got[acceptance_case(n, 64)] for n in ACCEPTANCE_NODES]
    rows = [reference, *acc]
    for small, big in itertools.pairwise(acc):
        ratio_check(big, small, "per 4x nodes", RATIO_TARGET)
    huge = acc[-1]
    n = ACCEPTANCE_NODES[-1]
    cpu = cpu_of(huge)
    rss = huge.got.rss_bytes if huge.got and cpu is not None else None
    rows.append(
        Row(
            f"  {n:,} nodes: CPU",
            None,
            "the run above",
            f"{cpu:.1f} s" if cpu is not None else "-",
            f"<= {BIG_CPU_TARGET:.0f} s",
            mark(cpu, BIG_CPU_TARGET) if cpu is not None else "-",
            derived=True,
        )
    )
    rows.append(
        Row(
            f"  {n:,} nodes: max RSS",
            None,
            "the run above",
            human_bytes(rss) if rss is not None else "-",
            f"<= {human_bytes(int(BIG_RSS_TARGET))}",
            mark(rss, BIG_RSS_TARGET) if rss is not None else "-",
            derived=True,
        )
    )
    ref_cpu = cpu_of(reference)
    rows.append(
        Row(
            f"  {n:,} nodes: CPU in reference loops",
            None,
            "machine-neutral: compare across machines",
            f"{cpu / ref_cpu:.1f}" if cpu is not None and ref_cpu else "-",
            derived=True,
        )
    )
    cap = got[acceptance_case(4096, 1024)]
    ratio_check(cap, acc[1], "over cap 64", CAP_RATIO_TARGET)
    rows.append(cap)
    pairs = [got[pairs_case(p)] for p in PAIRS]
    ratio_check(pairs[1], pairs[0], "per 4x pairs", RATIO_TARGET)
    rows += pairs
    certs = [got[certify_case_name(n)] for n in CERTIFY_NODES]
    ratio_check(certs[1], certs[0], "per 4x nodes", RATIO_TARGET)
    rows += certs
    return rows


if __name__ == "__main__":
    raise SystemExit(main())
