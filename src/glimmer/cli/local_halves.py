"""This host's half of a link or a collective, from the flags of ``glimmer run --backend
local`` (§8.1): ``--role server|client`` with ``--peer`` and ``--peer-node`` for every Pair test,
``--rank/--nranks/--root`` for every Group test. The flags are checked against each other and
against the plan before anything starts: a contradiction is bad input naming the flag."""

from __future__ import annotations

from typing import TYPE_CHECKING

from glimmer.contract.vocab import Scope
from glimmer.errors import InputError
from glimmer.plan.env import PairRole
from glimmer.plan.halves import GroupHalf, Half, Halved, PairHalf, half_variables

if TYPE_CHECKING:  # the flags are local_run's, which imports this module
    from glimmer.cli.local_run import LocalFlags


def _pair_half(flags: LocalFlags, halved: Halved, ref: str) -> PairHalf:
    if flags.rank is not None:
        raise InputError(
            "--rank: refused with --role; a host is one end of a link or one rank of a "
            "collective, never both in one run"
        )
    if flags.role not in ("server", "client"):
        raise InputError(f"--role {flags.role}: neither server nor client")
    if not halved.of_scope(Scope.PAIR):
        raise InputError(f"--role: profile {ref} has no Pair test, so there is no link to join")
    if flags.role == "server" and flags.peer is not None:
        raise InputError(
            "--peer: only a Pair client is given the server's address (--role client); the "
            "server listens"
        )
    if flags.role == "client" and not flags.peer:
        raise InputError("--peer: --role client needs the server's address")
    role: PairRole = "server" if flags.role == "server" else "client"
    return PairHalf(role, flags.peer, flags.peer_node or (flags.peer or ""))


def _group_half(flags: LocalFlags, halved: Halved, ref: str, node: str) -> GroupHalf:
    rank, nranks = flags.rank, flags.nranks
    assert rank is not None
    if not halved.of_scope(Scope.GROUP):
        raise InputError(f"--rank: profile {ref} has no Group test, so there is no collective")
    if nranks is None:
        raise InputError("--nranks: required with --rank (how many ranks the collective has)")
    if nranks < 2:
        raise InputError(f"--nranks {nranks}: a collective needs at least 2 ranks")
    if not 0 <= rank < nranks:
        raise InputError(f"--rank {rank}: outside [0, {nranks}) for --nranks {nranks}")
    if rank > 0 and not flags.root:
        raise InputError(
            f"--root: required on rank {rank} (every rank but 0 needs rank 0's address)"
        )
    return GroupHalf(rank, nranks, flags.root or None, node if rank == 0 else (flags.root or ""))


def half_of(flags: LocalFlags, halved: Halved, ref: str, node: str) -> Half | None:
    """This host's half as the flags give it, refused (InputError naming the flag, §8.1)
    when the flags contradict each other or the plan."""
    for flag, given in (("--peer", flags.peer), ("--peer-node", flags.peer_node)):
        if given is not None and flags.role is None:
            raise InputError(f"{flag}: only with --role (the end of a link this host is)")
    for flag, number in (("--nranks", flags.nranks), ("--root", flags.root)):
        if number is not None and flags.rank is None:
            raise InputError(f"{flag}: only with --rank (the rank this host is)")
    if flags.role is not None:
        return _pair_half(flags, halved, ref)
    if flags.rank is not None:
        return _group_half(flags, halved, ref, node)
    return None


def describe_half(half: Half) -> str:
    """One line: which half this host runs."""
    if isinstance(half, PairHalf):
        peer = f", server at {half.peer_host}" if half.peer_host else ""
        named = f", peer {half.peer_node}" if half.peer_node else ""
        return f"Pair {half.role}{peer}{named}"
    root = f", root at {half.root_host}" if half.root_host else ""
    return f"Group rank {half.rank} of {half.nranks}{root}"


def half_lines(halved: Halved, half: Half | None) -> list[str]:
    """One line per half the plan holds: its scope as written and what it is given here (the
    plan shown has it as a Node test on this host)."""
    lines = []
    for name, scope in halved.scopes.items():
        given = ", ".join(f"{k}={v}" for k, v in half_variables(scope, half))
        lines.append(f"{name}: this host's half of a {scope.value} test; {given or 'no variables'}")
    return lines


def half_warnings(halved: Halved, half: Half | None) -> list[str]:
    """One line per half that runs without its flags: its runner sees no role or rank and
    Skips (§8.1)."""
    lines = []
    if not isinstance(half, PairHalf):
        for name in halved.of_scope(Scope.PAIR):
            lines.append(
                f"Pair test {name} runs without --role: BURNIN_ROLE and BURNIN_PEER_HOST are "
                "left unset, so its runner will skip"
            )
    if not isinstance(half, GroupHalf):
        for name in halved.of_scope(Scope.GROUP):
            lines.append(
                f"Group test {name} runs without --rank: BURNIN_RANK and BURNIN_NRANKS are "
                "left unset, so its runner will skip"
            )
    return lines
