"""Adaptive fault isolation (``testScale: diagnose``, specs/certify.md §7.4).

Group testing over a test oracle: screen every domain, retest each domain with NVLink off (a NIC
fault hides behind MNNVL), test one representative per domain across racks, bisect every failed
group down to ``min_group_size``, probe the boundary when both halves of a failed group pass
alone, and confirm each suspect beside a known-healthy node. A node is accused only by a failed
confirmation (or, with no healthy reference at all, by its failed group), and the accusation
carries the evidence.

Jobs of one round run side by side and never share a node; :attr:`Diagnosis.rounds` counts the
rounds, :attr:`Diagnosis.tests` the jobs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from glimmer.certify.grouping import NodeInfo
from glimmer.certify.isolate_split import (
    Cell,
    confirmation_groups,
    domains_of,
    mixes,
    screen_groups,
    split,
)
from glimmer.certify.isolate_types import (
    Accusation,
    Diagnosis,
    InfrastructureFault,
    Oracle,
    Outcome,
    Probe,
    Stage,
    Tested,
)

# §7.4: a cross-boundary probe narrows at most this many times before it names the pair.
MAX_PROBE_ROUNDS = 4
DEFAULT_MIN_GROUP_SIZE = 2  # §2.2 minGroupSize default


@dataclass(frozen=True)
class _Failed:
    cell: Cell
    trail: tuple[str, ...]  # "probe: reason" of each failure leading here
    reason: str


class _Rounds:
    """Runs probes in rounds of node-disjoint jobs and records every outcome."""

    def __init__(self, oracle: Oracle, diagnosis: Diagnosis) -> None:
        self.oracle = oracle
        self.d = diagnosis

    def run(self, probes: Sequence[Probe]) -> list[Outcome]:
        results: dict[int, Outcome] = {}
        waiting = list(range(len(probes)))
        while waiting:
            busy: set[str] = set()
            wave: list[int] = []
            later: list[int] = []
            for i in waiting:
                if busy.isdisjoint(probes[i].nodes):
                    wave.append(i)
                    busy.update(probes[i].nodes)
                else:
                    later.append(i)
            self.d.rounds += 1
            for i in wave:
                out = self.oracle(probes[i])
                results[i] = out
                self.d.history.append(Tested(self.d.rounds, probes[i], out))
            waiting = later
        return [results[i] for i in range(len(probes))]


def isolate(
    nodes: Sequence[NodeInfo],
    oracle: Oracle,
    *,
    topology_key: str | None = None,
    min_group_size: int = DEFAULT_MIN_GROUP_SIZE,
    nvlink: bool = True,
) -> Diagnosis:
    """Find every faulty node among ``nodes`` with ``oracle`` (§7.4 stages 1–7)."""
    return _Isolation(nodes, oracle, topology_key, max(min_group_size, 1), nvlink).run()


class _Isolation:
    def __init__(
        self,
        nodes: Sequence[NodeInfo],
        oracle: Oracle,
        key: str | None,
        min_size: int,
        nvlink: bool,
    ) -> None:
        self.nodes = nodes
        self.key = key
        self.min_size = min_size
        self.nvlink = nvlink
        self.d = Diagnosis()
        self.rounds = _Rounds(oracle, self.d)
        self.domain_of = domains_of(nodes, key)
        self.healthy: dict[str, None] = {}  # insertion-ordered set
        self.suspects: dict[str, _Failed] = {}
        self.no_nvl: set[str] = set()

    # -- helpers ----------------------------------------------------------------------------

    def _nvlink_for(self, nodes: Sequence[str]) -> bool:
        # §7.4: a group holding any node that failed only with NVLink off runs with it off.
        return self.nvlink and self.no_nvl.isdisjoint(nodes)

    def _pass(self, nodes: Sequence[str]) -> None:
        for n in nodes:
            self.healthy[n] = None

    def _unpass(self, nodes: Sequence[str]) -> None:
        for n in nodes:
            self.healthy.pop(n, None)

    @staticmethod
    def _why(probe: Probe, out: Outcome) -> str:
        return f"{probe.name} [{', '.join(probe.nodes)}]: {out.reason or 'failed'}"

    # -- stages -----------------------------------------------------------------------------

    def run(self) -> Diagnosis:
        screens = screen_groups(self.nodes, self.key)
        failed = self._screen(screens)
        failed = self._retest(screens, failed)
        failed = self._cross_rack(screens, failed)
        self._bisect(failed)
        self._confirm()
        self.d.healthy = sorted(self.healthy)
        return self.d

    def _screen(self, screens: list[Cell]) -> dict[tuple[str, ...], _Failed]:
        probes = [Probe(c.name, c.nodes, Stage.SCREEN, self.nvlink) for c in screens]
        failed: dict[tuple[str, ...], _Failed] = {}
        for c, p, out in zip(screens, probes, self.rounds.run(probes), strict=True):
            if out.passed:
                self._pass(c.nodes)
            else:
                failed[c.nodes] = _Failed(c, (self._why(p, out),), out.reason)
        return failed

    def _retest(
        self, screens: list[Cell], failed: dict[tuple[str, ...], _Failed]
    ) -> dict[tuple[str, ...], _Failed]:
        if not self.nvlink:
            return failed  # the template already runs without MNNVL: nothing hides behind it
        cells = [c for c in screens if len(c.nodes) > 1]
        probes = [
            Probe(
                f"screen-no-nvl-{c.domains[0] if c.domains else c.name}",
                c.nodes,
                Stage.RETEST,
                nvlink=False,
            )
            for c in cells
        ]
        for c, p, out in zip(cells, probes, self.rounds.run(probes), strict=True):
            if out.passed:
                continue
            self.no_nvl.update(c.nodes)
            self._unpass(c.nodes)
            why = self._why(p, out)
            prior = failed.get(c.nodes)
            trail = (*prior.trail, why) if prior else (why,)
            failed[c.nodes] = _Failed(Cell(p.name, c.nodes, c.domains), trail, out.reason)
        return failed

    def _cross_rack(
        self, screens: list[Cell], failed: dict[tuple[str, ...], _Failed]
    ) -> dict[tuple[str, ...], _Failed]:
        reps = [
            next(n for n in c.nodes if n in self.healthy)
            for c in screens
            if any(n in self.healthy for n in c.nodes)
        ]
        if len(reps) < 2:
            return failed
        nodes = tuple(sorted(reps))
        probe = Probe("inter-domain", nodes, Stage.CROSS_RACK, self.nvlink)
        (out,) = self.rounds.run([probe])
        if not out.passed:
            self._unpass(nodes)
            doms = tuple(sorted({self.domain_of.get(n, "") for n in nodes} - {""}))
            failed[nodes] = _Failed(
                Cell(probe.name, nodes, doms), (self._why(probe, out),), out.reason
            )
        return failed

    def _bisect(self, failed: dict[tuple[str, ...], _Failed]) -> None:
        pending = list(failed.values())
        round_no = 0
        while pending:
            round_no += 1
            pairs: list[tuple[_Failed, Cell, Cell]] = []
            for f in pending:
                # A group splits only when both halves keep min_size nodes: §7.4 splits anything
                # above min_size, but a one-node half of a multi-node collective runs inside
                # the node and never touches the fabric it is meant to test.
                if len(f.cell.nodes) < 2 * self.min_size:
                    for n in f.cell.nodes:
                        self.suspects.setdefault(n, f)  # converged: every member is a suspect
                else:
                    a, b = split(f.cell, self.domain_of, round_no, len(pairs))
                    pairs.append((f, a, b))
            if not pairs:
                return
            probes = [
                Probe(h.name, h.nodes, Stage.BISECT, self._nvlink_for(h.nodes))
                for _, a, b in pairs
                for h in (a, b)
            ]
            outs = self.rounds.run(probes)
            pending = []
            both_pass: list[tuple[_Failed, Cell, Cell]] = []
            for i, (f, a, b) in enumerate(pairs):
                oa, ob = outs[2 * i], outs[2 * i + 1]
                for half, p, out in ((a, probes[2 * i], oa), (b, probes[2 * i + 1], ob)):
                    if out.passed:
                        self._pass(half.nodes)
                    else:
                        pending.append(_Failed(half, (*f.trail, self._why(p, out)), out.reason))
                if oa.passed and ob.passed:
                    both_pass.append((f, a, b))
            self._probe_boundaries(both_pass)

    def _probe_boundaries(self, pairs: list[tuple[_Failed, Cell, Cell]]) -> None:
        """Halves that pass alone under a failed parent: mix their halves to find whether the
        fault lies between them (an infrastructure fault) or was transient."""
        active = [(f, a.nodes, b.nodes, 0, i) for i, (f, a, b) in enumerate(pairs)]
        for _, a, b, _, _ in active:
            self._unpass((*a, *b))
        while active:
            cells = [(item, mixes(item[1], item[2], item[4])) for item in active]
            probes = [
                Probe(c.name, c.nodes, Stage.PROBE, self._nvlink_for(c.nodes))
                for _, cs in cells
                for c in cs
            ]
            outs = iter(self.rounds.run(probes))
            nxt = []
            for (f, a, b, probe_round, index), cs in cells:
                results = [(c, next(outs)) for c in cs]
                bad = [c for c, o in results if not o.passed]
                for c, o in results:
                    if o.passed:
                        self._pass(c.nodes)
                if not bad:
                    self._pass((*a, *b))  # transient: the parent's failure did not reproduce
                    continue
                domain = ",".join(f.cell.domains) or f.cell.name
                if len(bad) == len(results) and len(results) > 1:
                    self.d.infrastructure.append(InfrastructureFault(domain, a, b, Stage.PROBE))
                    continue
                ha, hb = max(len(a) // 2, 1), max(len(b) // 2, 1)
                first = bad[0].name.endswith("mix0")
                na = a[:ha] if first else a[ha:]
                nb = b[:hb] if first else b[hb:]
                if probe_round + 1 > MAX_PROBE_ROUNDS or (len(na) <= 2 and len(nb) <= 2):
                    self.d.infrastructure.append(InfrastructureFault(domain, na, nb, Stage.PROBE))
                    continue
                nxt.append((f, na, nb, probe_round + 1, index))
            active = nxt

    def _confirm(self) -> None:
        suspects = sorted(self.suspects)
        healthy = sorted(n for n in self.healthy if n not in self.suspects)
        if not suspects:
            return
        if not healthy:
            for s in suspects:
                f = self.suspects[s]
                reason = f"no healthy node to confirm against; {f.reason or 'its group failed'}"
                self.d.faulty.append(Accusation(s, reason, f.trail))
            return
        cells = confirmation_groups(suspects, healthy)
        probes = [Probe(c.name, c.nodes, Stage.CONFIRM, self._nvlink_for(c.nodes)) for c in cells]
        for c, p, out in zip(cells, probes, self.rounds.run(probes), strict=True):
            suspect = c.nodes[0]
            if out.passed:
                self._pass([suspect])
            else:
                self._unpass([suspect])
                trail = (*self.suspects[suspect].trail, self._why(p, out))
                why = f"{out.reason or 'failed'} (confirmed beside healthy {c.nodes[1]})"
                self.d.faulty.append(Accusation(suspect, why, trail))
