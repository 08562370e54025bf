"""``glimmer run --pairs ring|all-pairs``: a link sweep, one BurnInRun per pair of nodes.

A Pair unit takes exactly two nodes, so sweeping the links of many nodes is many runs. They are
submitted to one simulated fleet and driven by the one virtual-clock loop, under one node cap
(``--max-concurrent``, as for a single run): a pair starts when both its nodes are free and the
cap has room for two more, in the rounds :mod:`glimmer.plan.sweep` orders them in. The engine
judges each run alone, as it would one typed by hand; this module only starts them, reads their
verdicts and says which node or link the failures point at:

* a node-scope result that failed names its node;
* a pair-scope failure blames a node when every pair that node was in failed (and it was in
  two or more), and the link itself when each of its nodes passed with another peer;
  otherwise it is inconclusive (a node seen in one pair only cannot be told from its link).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from glimmer.api.dump import dump_json
from glimmer.api.run import BurnInRun
from glimmer.backends.common.registry import SIM
from glimmer.cli.output import console
from glimmer.contract.vocab import Phase, Scope
from glimmer.engine.reconciler import Engine
from glimmer.plan.sweep import Pair
from glimmer.verdict.text import name_some

if TYPE_CHECKING:  # annotation only: importing the simulator costs every command
    from glimmer.backends.common.registry import SimBackend

RunKey = tuple[str, str]
MAX_RUN_RETRIES = 100  # consecutive failed passes of one run before the sweep gives up
LOOKAHEAD_PER_SLOT = 4  # queued pairs looked at per free slot when one is blocked by a busy node
MAX_LISTED = 20  # failed pairs listed in the summary (all of them are in -o json)
# The sweep's exit code: a failure measured anywhere outranks an unjudged pair.
SEVERITY = (Phase.FAILED, Phase.ERROR, Phase.CANCELLED)


@dataclass
class Sweep:
    """The pairs still to start and the nodes under load, on one backend."""

    backend: SimBackend
    runs: deque[BurnInRun]
    slots: int  # pairs at once
    busy: set[str] = field(default_factory=set)
    finals: dict[str, BurnInRun] = field(default_factory=dict)
    started: int = 0

    def admit(self, start: Callable[[RunKey, float], None]) -> float:
        """Start every queued pair whose nodes are free while slots remain; looks at a bounded
        window of the queue, so a blocked pair costs nothing once its round is under way."""
        window = max(self.slots * LOOKAHEAD_PER_SLOT, 1)
        blocked: list[BurnInRun] = []
        while self.runs and self.started - len(self.finals) < self.slots and window > 0:
            run = self.runs.popleft()
            a, b = _pair(run)
            if a in self.busy or b in self.busy:
                blocked.append(run)
                window -= 1
                continue
            stored = self.backend.submit(run)
            self.busy |= {a, b}
            self.started += 1
            start((stored.metadata.namespace or "default", stored.name), self.backend.t)
        self.runs.extendleft(reversed(blocked))
        return float("inf")  # woken by settled runs, never by the clock

    def settled(self, run: BurnInRun) -> None:
        self.finals[run.name] = run
        self.busy -= set(_pair(run))


def _pair(run: BurnInRun) -> Pair:
    names = run.spec.target.node_names or []
    return (names[0], names[1])


def drive_sweep(backend: SimBackend, runs: Sequence[BurnInRun], max_nodes: int) -> list[BurnInRun]:
    """Every run to its verdict, at most ``max_nodes`` nodes under load at once; the final
    runs in the order given."""
    sweep = Sweep(backend, deque(runs), slots=max(max_nodes // 2, 1))
    wakes = SIM.run_wakes(max_retries=MAX_RUN_RETRIES)
    SIM.drive_virtual(
        backend,
        Engine(backend),
        wakes,
        side=lambda: sweep.admit(wakes.add),
        on_settled=sweep.settled,
    )
    # A run that never settled (nothing more could happen) is reported as it was left.
    return [sweep.finals.get(r.name) or backend.get_run("default", r.name) or r for r in runs]


def _phase(run: BurnInRun) -> Phase:
    return run.status.phase if run.status else Phase.PENDING


@dataclass(frozen=True)
class Blame:
    """What the failed pairs point at."""

    nodes: dict[str, str]  # node -> why it is blamed
    links: list[Pair]
    inconclusive: list[Pair]


def blame(runs: Sequence[BurnInRun]) -> Blame:
    """Attribute the failures of a sweep to nodes and links (see the module docstring)."""
    in_pairs: Counter[str] = Counter()
    failed_pairs: Counter[str] = Counter()
    nodes: dict[str, str] = {}
    pair_failed: list[Pair] = []
    for run in runs:
        pair = _pair(run)
        in_pairs.update(pair)
        results = (run.status.results if run.status else None) or []
        bad = [r for r in results if r.phase is Phase.FAILED]
        for result in bad:
            if result.scope is Scope.NODE and result.nodes:
                nodes.setdefault(result.nodes[0], f"{result.name} failed on it")
        if any(r.scope is Scope.PAIR for r in bad):
            failed_pairs.update(pair)
            pair_failed.append(pair)
    for node, count in failed_pairs.items():
        if count >= 2 and count == in_pairs[node] and node not in nodes:
            nodes[node] = f"every one of its {count} pairs failed"
    links: list[Pair] = []
    unsure: list[Pair] = []
    for a, b in pair_failed:
        if a in nodes or b in nodes:
            continue
        alone = in_pairs[a] == 1 or in_pairs[b] == 1
        (unsure if alone else links).append((a, b))
    return Blame(nodes, links, unsure)


def sweep_exit(runs: Sequence[BurnInRun]) -> int:
    """1 when any pair failed, else 3 when any is Error (or never settled), 4 when any was
    Cancelled, 0 when every pair passed."""
    phases = {_phase(r) for r in runs}
    if Phase.FAILED in phases:
        return 1
    if phases - {Phase.PASSED, Phase.CANCELLED}:
        return 3
    return 4 if Phase.CANCELLED in phases else 0


def _first_problem(run: BurnInRun) -> str:
    results = (run.status.results if run.status else None) or []
    bad = next((r for r in results if r.phase is not Phase.PASSED), None)
    if bad is None:
        return ""
    return f"{bad.name}: {bad.phase.value}" + (f": {bad.message}" if bad.message else "")


def render_sweep(runs: Sequence[BurnInRun], shape: str, profile: str, cap: int) -> None:
    """The sweep's summary: counts, the failed pairs, and what they point at."""
    say = console.print
    counts = Counter(_phase(r).value for r in runs)
    tally = ", ".join(f"{n} {p}" for p, n in sorted(counts.items()))
    say(
        f"[bold]glimmer run --pairs {shape}[/bold]: {len(runs)} pair(s), profile {profile}, "
        f"at most {cap} nodes at once: {tally}",
        soft_wrap=True,
    )
    bad = [r for r in runs if _phase(r) is not Phase.PASSED]
    for run in bad[:MAX_LISTED]:
        a, b = _pair(run)
        say(f"  {run.name}  {a} <-> {b}  {_first_problem(run)}", markup=False, soft_wrap=True)
    if len(bad) > MAX_LISTED:
        say(f"  … and {len(bad) - MAX_LISTED} more (-o json lists every run)", markup=False)
    found = blame(runs)
    for node, why in found.nodes.items():
        say(f"node {node}: {why}", markup=False, soft_wrap=True)
    if found.links:
        links = [f"{a} <-> {b}" for a, b in found.links]
        say(f"link(s): {name_some(links, MAX_LISTED)} (both nodes passed with other peers)")
    if found.inconclusive:
        pairs = [f"{a} <-> {b}" for a, b in found.inconclusive]
        say(
            f"inconclusive: {name_some(pairs, MAX_LISTED)} (a node in one pair only: "
            "its node and its link cannot be told apart; sweep a ring to tell)",
            soft_wrap=True,
        )


def write_sweep_reports(
    runs: Sequence[BurnInRun], out_dir: Path, write: Callable[[BurnInRun, Path], object]
) -> str:
    """Each pair's reports in ``out_dir/<run name>/``; the line that says where they went."""
    for run in runs:
        write(run, out_dir / run.name)
    return f"{out_dir}/ ({len(runs)} folders, one per pair)"


def dry_sweep(runs: Sequence[BurnInRun], json_out: bool) -> None:
    """The runs a sweep would start, created nowhere."""
    if json_out:
        print(dump_json(list(runs)), end="")
        return
    console.print(f"[bold]glimmer run --pairs[/bold]: would start {len(runs)} run(s), one per pair")
    for run in runs:
        a, b = _pair(run)
        console.print(f"  {run.name}  {a} <-> {b}", markup=False)
