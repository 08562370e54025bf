"""Adaptive fault isolation at scale: rounds and jobs to isolate k bad nodes among N.

Over 200 seeded trials each, for k in (1, 2, 4) and N in (64, 256, 1,024), plants k bad nodes
at random and isolates them with a pure oracle (a group fails iff it holds a bad node), then
prints the mean and worst number of rounds (concurrent jobs on disjoint nodes, the spec's
``diagnose.round``) and of jobs, beside the information-theoretic bound ⌈log2 C(N, k)⌉ — the
fewest yes/no answers that can tell which k of N are bad — with each ratio (target: rounds
within 2× the bound), plus misses and false accusations (must both be 0).

It prints; it never asserts on time. ``--trials`` and ``--sizes`` make a small run for tests.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from glimmer.certify.grouping import NodeInfo
from glimmer.certify.isolate import isolate
from glimmer.certify.isolate_types import Outcome, Probe

SIZES = (64, 256, 1024)
BAD_COUNTS = (1, 2, 4)
TRIALS = 200
RATIO_TARGET = 2.0


@dataclass(frozen=True)
class Trial:
    rounds: int
    tests: int
    missed: int  # planted bad nodes not accused
    false: int  # healthy nodes accused


def bound(n: int, k: int) -> int:
    """⌈log2 C(n, k)⌉: yes/no answers needed to single out one k-subset of n."""
    return math.ceil(math.log2(math.comb(n, k)))


KEY = "nvidia.com/gpu.clique"
# How the nodes screen: √N chunks when no topology key is set, or one shared domain — what the
# catalog's clique key gives a fleet of HGX boards, which carry no clique label.
SCREENS = ("chunks", "one-domain")


def trial(n: int, k: int, seed: int, screen: str = "chunks") -> Trial:
    """One seeded trial: plant k bad nodes among n and isolate them."""
    rng = random.Random(f"isolation|{n}|{k}|{seed}")
    names = [f"node-{i:04d}" for i in range(n)]
    bad = set(rng.sample(names, k))

    def oracle(probe: Probe) -> Outcome:
        hit = sorted(bad.intersection(probe.nodes))
        if hit:
            return Outcome(False, 0.5, f"busbw 50% of expected ({', '.join(hit)} in the group)")
        return Outcome(True, 1.0)

    key = KEY if screen == "one-domain" else None
    d = isolate([NodeInfo(x) for x in names], oracle, topology_key=key, nvlink=False)
    accused = set(d.faulty_nodes)
    return Trial(d.rounds, d.tests, len(bad - accused), len(accused - bad))


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=TRIALS)
    ap.add_argument("--sizes", type=int, nargs="*", default=list(SIZES))
    args = ap.parse_args(argv)
    for screen in SCREENS:
        _table(args.trials, args.sizes, screen)
    return 0


def _table(trials: int, sizes: Sequence[int], screen: str) -> None:
    head = (
        f"{'N':>5} {'k':>2} {'bound':>5} | {'rounds':>6} {'max':>4} {'ratio':>6} | "
        f"{'jobs':>6} {'max':>4} {'ratio':>6} | {'missed':>6} {'false':>5}"
    )
    print(f"adaptive isolation, screening by {screen}, {trials} seeded trials per row")
    print(head)
    print("-" * len(head))
    worst = 0.0
    for n in sizes:
        for k in BAD_COUNTS:
            if k >= n:
                continue
            got = [trial(n, k, s, screen) for s in range(trials)]
            b = bound(n, k)
            rounds = sum(t.rounds for t in got) / len(got)
            tests = sum(t.tests for t in got) / len(got)
            missed = sum(t.missed for t in got)
            false = sum(t.false for t in got)
            worst = max(worst, max(t.rounds for t in got) / b)
            print(
                f"{n:>5} {k:>2} {b:>5} | {rounds:>6.1f} {max(t.rounds for t in got):>4} "
                f"{rounds / b:>6.2f} | {tests:>6.1f} {max(t.tests for t in got):>4} "
                f"{tests / b:>6.2f} | {missed:>6} {false:>5}"
            )
    print(f"worst rounds/bound over every trial: {worst:.2f} (target <= {RATIO_TARGET:.0f})\n")


if __name__ == "__main__":
    sys.exit(main())
