"""What ``glimmer run`` runs, assembled from its flags and files.

The BurnInRun (from ``-f`` as written, or made from the flags), the profiles and tests the
backend serves, the fleet and the faults to plant. Every check here is about what the user
typed — a profile, node or fault that does not exist, a flag that does not parse — and ends in
one InputError (exit 2). Whether the run may start is the planner's decision, made by the
engine when it reconciles the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from pydantic import BaseModel

from glimmer.api.load import Loaded, collect_paths, expand_paths, of_kind
from glimmer.api.profile import BurnInProfile
from glimmer.api.run import BurnInRun
from glimmer.api.sink import BurnInSink
from glimmer.api.target import TargetSelector
from glimmer.api.test import BurnInTest, BurnInTestSpec
from glimmer.backends.common.registry import SIM
from glimmer.cli.conventions import DEFAULT_SEED
from glimmer.errors import InputError, InputErrors, Location
from glimmer.fleet.faultspec import FaultSpec, from_declared, parse_faults
from glimmer.fleet.load import load_topology
from glimmer.fleet.topology import Topology
from glimmer.plan.given import (
    check_profile,
    check_sink_refs,
    check_startable,
    check_targets,
    check_test_refs,
)
from glimmer.plan.lint import Finding, lint_loaded
from glimmer.plan.nodes import NodeInfo
from glimmer.plan.sweep import Pair, PairShape, SweepError, pair_runs, pairs_of
from glimmer.sinks.config import sinks_from_specs
from glimmer.sinks.sender import CLI_POLICY, VirtualWaits
from glimmer.sinks.signing import secret_from
from glimmer.sinks.sinkset import SinkSet
from glimmer.verdict.lint import Severity
from glimmer.verdict.text import name_some

if TYPE_CHECKING:
    # Annotation only: the name would import the simulator for every command reading inputs.
    from glimmer.backends.common.registry import FleetSim

API_VERSION = "burnin.glimmer.ai/v1alpha1"
NAMESPACE = "default"
DEFAULT_PROFILE = "acceptance"
DEFAULT_FLEET = "ai-factory"
# The demo's planted faults, on the built-in ai-factory only: a GPU pinned in a low P-state
# and a degraded fabric NIC port.
PLANTED_FAULTS = (
    "gpu_low_pstate@gpu:hgx-node-0001/3",
    "nic_degraded@nic:nvl-node-0004/eth1",
)
MAX_NAMED = 5
# Without a cap of the user's, up to this many targets are under load at once (all of them on a
# small fleet); the simulator has no facility to protect, but a thousand concurrent units cost
# the engine more passes than waves of 64 do.
DEFAULT_MAX_CONCURRENT = 64
DEFAULT_SINK_STATE = ".glimmer/outbox"
# On the simulator a run's hours pass in seconds, so the CLI policy's waits between attempts
# (2 s doubling, about a minute in all) pass on a virtual clock; and a receiver that never
# answers may cost each sink at most this many wall seconds of failed attempts per command.
SINK_WALL_ALLOWANCE = 5.0
# What ``glimmer run -f`` reads. A file holding none of these (empty, or another command's
# kind) would otherwise fall through to the default acceptance run on every node.
RUN_KINDS: tuple[type[BaseModel], ...] = (BurnInTest, BurnInProfile, BurnInRun, BurnInSink)
# Where a kind glimmer knows, but a flag does not take, is read instead: said in the refusal.
READ_BY = {
    "BurnInTest": "glimmer run -f",
    "BurnInProfile": "glimmer run -f",
    "BurnInRun": "glimmer run -f",
    "BurnInSink": "glimmer run -f",
    "BurnInSchedule": "glimmer schedule run -f",
    "NodeFingerprint": "glimmer fingerprint --against",
    "Fleet": "--fleet",
    "Certification": "glimmer certify run -f",
    "WorkloadRun": "glimmer certify render -f",
    "LogProfile": "glimmer certify render -f",
}

MAX_INT32 = 2**31 - 1  # the widest integer a saved BurnInRun's spec holds


@dataclass(frozen=True)
class RunFlags:
    """The flags of ``glimmer run`` as typed."""

    files: tuple[str, ...] = ()
    profile: str | None = None
    fleet: str = DEFAULT_FLEET
    nodes: str | None = None
    max_concurrent: int | None = None
    faults: tuple[str, ...] = ()
    no_faults: bool = False
    seed: int = DEFAULT_SEED
    pairs: PairShape | None = None  # a link sweep: one run per pair of the targets


@dataclass(frozen=True)
class SinkFlags:
    """The sink flags of ``glimmer run`` (and ``glimmer sink flush``) as typed."""

    specs: tuple[str, ...] = ()
    state: str | None = None
    secret_file: str | None = None
    secret_env: str | None = None
    ca: str | None = None


@dataclass(frozen=True)
class RunInputs:
    """Everything a run on the simulator needs, checked."""

    run: BurnInRun
    profile_source: str  # "built-in" or the file the profile came from
    profiles: dict[str, BurnInProfile]
    tests: dict[str, BurnInTestSpec]
    topo: Topology
    fleet: str
    planted: tuple[FaultSpec, ...]
    declared: tuple[FaultSpec, ...]
    nodes: tuple[NodeInfo, ...]
    targets: tuple[str, ...]
    twin: FleetSim
    seed: int
    sinks: tuple[BurnInSink, ...] = ()  # BurnInSink objects from -f, named by spec.sinks
    # Unsound gates in the files given: the run goes on (specs/burnin.md §4.3), and the
    # CLI says so before anything runs, so a gate that cannot pass is not read as hardware.
    unsound: tuple[Finding, ...] = ()
    pairs: tuple[Pair, ...] = ()  # a link sweep's pairs (empty: one run)

    @property
    def namespace(self) -> str:
        return self.run.metadata.namespace or NAMESPACE


def _kind_names(kinds: tuple[type[BaseModel], ...]) -> str:
    names = [str(getattr(kind, "KIND", kind.__name__)) for kind in kinds]
    return ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else names[0]


def _foreign(error: InputError, flag: str, wanted: str) -> InputError:
    # A Fleet is glimmer's own kind, but not one the resource loader reads (its apiVersion is
    # "unknown" there): say what it is and where it goes rather than blame its apiVersion.
    kind = (error.location.obj or "").split("/", 1)[0]
    if error.location.field != "apiVersion" or kind not in READ_BY or kind in wanted:
        return error
    where = Location(error.location.file, error.location.document, error.location.obj)
    where.line = error.location.line
    return InputError(f"{flag} takes {wanted}, not a {kind}; {READ_BY[kind]} reads it", where)


def load_kinds(
    flag: str, paths: tuple[str, ...] | list[str], kinds: tuple[type[BaseModel], ...]
) -> list[Loaded]:
    """Every object of the files ``flag`` names; each file (or folder) given must hold one of
    ``kinds`` at least.

    A file that holds no object (empty, comments only) or only objects of other kinds is bad
    input naming that file and what it holds: a command never falls back to a default because
    the file it was given said nothing it reads. A bundle (a profile, its tests, its sinks and
    a schedule in one file, or in the files of one folder) still loads; what the command does
    not read in it stays unused.
    """
    wanted = _kind_names(kinds)
    loaded, errors = collect_paths(list(paths))
    if errors:
        raise InputErrors([_foreign(error, flag, wanted) for error in errors])
    for given in paths:
        # A folder counts as one input: its bundle of files must hold a kind read here.
        names = {"<stdin>" if name == "-" else name for name in expand_paths([given])}
        held = [item for item in loaded if item.source in names]
        if not held:
            raise InputError(
                f"{flag}: holds no {wanted} (no document at all: empty or comments only)",
                Location(file="<stdin>" if given == "-" else given),
            )
        if not any(isinstance(item.obj, kinds) for item in held):
            first = held[0]
            elsewhere = READ_BY.get(first.kind)
            hint = f"; {elsewhere} reads it" if elsewhere else ""
            others = f" (and {len(held) - 1} more not of those kinds)" if len(held) > 1 else ""
            raise InputError(
                f"{flag} takes {wanted}, not a {first.kind}{hint}{others}", first.locate()
            )
    return loaded


def _one_run(runs: list[tuple[BurnInRun, Loaded]]) -> tuple[BurnInRun, Loaded] | None:
    if len(runs) > 1:
        names = ", ".join(item.ref for _, item in runs)
        raise InputError(f"-f: several BurnInRuns given ({names}); glimmer run runs one")
    return (runs[0][0].model_copy(deep=True), runs[0][1]) if runs else None


def _profile_ref(flags: RunFlags, run: BurnInRun | None, loaded: dict[str, BurnInProfile]) -> str:
    if flags.profile:
        return flags.profile
    if run is not None:
        return run.spec.profile_ref
    if len(loaded) == 1:
        return next(iter(loaded))
    return DEFAULT_PROFILE


def _node_list(text: str) -> list[str]:
    names = [n.strip() for n in text.split(",")]
    if not names or any(not n for n in names):
        raise InputError(f"--nodes {text!r}: expected node names separated by commas")
    twice = [name for name in dict.fromkeys(names) if names.count(name) > 1]
    if twice:
        raise InputError(
            f"--nodes: {name_some(twice, MAX_NAMED)} named more than once; name each node once"
        )
    return names


def _target(flags: RunFlags, run: BurnInRun | None, topo: Topology) -> TargetSelector:
    if flags.nodes is not None:
        names = _node_list(flags.nodes)
        if run is not None and run.spec.target.tolerations:
            return TargetSelector(node_names=names, tolerations=run.spec.target.tolerations)
        return TargetSelector(node_names=names)
    if run is not None:
        return run.spec.target
    return TargetSelector(node_names=[n.hostname for n in topo.nodes])


def _faults(flags: RunFlags) -> list[FaultSpec]:
    if flags.no_faults and flags.faults:
        raise InputError("--fault and --no-faults contradict each other; give one")
    if flags.faults:
        return parse_faults(list(flags.faults))
    if flags.no_faults or flags.fleet != DEFAULT_FLEET:
        return []
    return parse_faults(list(PLANTED_FAULTS))


def _new_run(profile_ref: str, targets: list[str]) -> BurnInRun:
    return BurnInRun.model_validate(
        {
            "apiVersion": API_VERSION,
            "kind": "BurnInRun",
            "metadata": {"name": profile_ref, "namespace": NAMESPACE},
            "spec": {"profileRef": profile_ref, "target": {"nodeNames": targets}},
        }
    )


def assemble(flags: RunFlags) -> RunInputs:
    """The checked inputs of one run; InputError naming the first thing that is wrong."""
    if flags.max_concurrent is not None and flags.max_concurrent < 1:
        raise InputError(f"--max-concurrent {flags.max_concurrent}: must be 1 or more")
    if flags.max_concurrent is not None and flags.max_concurrent > MAX_INT32:
        # spec.maxConcurrentNodes is an int32: a run saved with more could not be read back.
        raise InputError(f"--max-concurrent {flags.max_concurrent}: must be at most {MAX_INT32}")
    loaded = load_kinds("-f", flags.files, RUN_KINDS) if flags.files else []
    profiles = {item.name: obj for obj, item in of_kind(loaded, BurnInProfile)}
    sources = {item.name: item.source for _, item in of_kind(loaded, BurnInProfile)}
    tests = {item.name: obj.spec for obj, item in of_kind(loaded, BurnInTest)}
    found = _one_run(of_kind(loaded, BurnInRun))
    given, written = found if found is not None else (None, None)
    ref = _profile_ref(flags, given, profiles)
    from_file = written is not None and not flags.profile
    where = written.locate("spec.profileRef") if from_file and written else Location()
    check_profile(ref, profiles, tests, where)
    check_test_refs(of_kind(loaded, BurnInProfile), tests)
    check_sink_refs(ref, of_kind(loaded, BurnInProfile), of_kind(loaded, BurnInSink))

    topo = load_topology(flags.fleet)
    nodes = [NodeInfo(name=n.name, labels=n.labels) for n in SIM.nodes(topo)]
    target = _target(flags, given, topo)
    targets = check_targets(target, nodes, topo.name, written if flags.nodes is None else None)
    planted = _faults(flags)
    twin = SIM.twin(topo, planted)

    run = given if given is not None else _new_run(ref, targets)
    cap = flags.max_concurrent or (
        None if given is not None else max(min(len(targets), DEFAULT_MAX_CONCURRENT), 1)
    )
    update: dict[str, object] = {"profile_ref": ref, "target": target}
    if cap is not None:
        update["max_concurrent_nodes"] = cap
    run = run.model_copy(update={"spec": run.spec.model_copy(update=update)})
    if not run.metadata.namespace:
        run = run.model_copy(
            update={"metadata": run.metadata.model_copy(update={"namespace": NAMESPACE})}
        )
    started = written.locate() if written is not None else Location()
    pairs = _sweep(flags.pairs, targets)
    # A sweep starts one run per pair: the planner judges the first as it will judge each.
    judged = pair_runs(run, pairs[:1])[0] if pairs else run
    check_startable(judged, profiles.get(ref), tests, nodes, started, datetime.now(UTC))
    return RunInputs(
        run=run,
        profile_source=sources.get(ref, "built-in"),
        profiles=profiles,
        tests=tests,
        topo=topo,
        fleet=flags.fleet,
        planted=tuple(planted),
        declared=tuple(from_declared(f) for f in topo.fleet.spec.faults),
        nodes=tuple(nodes),
        targets=tuple(targets),
        twin=twin,
        seed=flags.seed,
        sinks=tuple(obj for obj, _ in of_kind(loaded, BurnInSink)),
        unsound=tuple(f for f in lint_loaded(loaded) if f.severity is Severity.UNSOUND),
        pairs=tuple(pairs),
    )


def _sweep(shape: PairShape | None, targets: list[str]) -> list[Pair]:
    if shape is None:
        return []
    try:
        return pairs_of(targets, shape)
    except SweepError as e:
        raise InputError(f"--pairs {shape.value}: {e}") from None


def sink_set_for(
    flags: SinkFlags, objects: tuple[BurnInSink, ...] = (), *, simulated: bool
) -> SinkSet | None:
    """The sinks of one command under the CLI policy (None: nothing to deliver to); InputError
    for a flag, secret or CA bundle that cannot make a sink. ``simulated``: the waits between
    attempts pass on a virtual clock and each sink's failed attempts get a wall allowance."""
    secret = secret_from(
        Path(flags.secret_file) if flags.secret_file is not None else None, flags.secret_env
    )
    if not flags.specs and not objects:
        return None
    return sinks_from_specs(
        list(flags.specs),
        objects=objects,
        state_dir=Path(flags.state or DEFAULT_SINK_STATE),
        secret=secret,
        ca_bundle=Path(flags.ca) if flags.ca is not None else None,
        policy=CLI_POLICY,
        clock=VirtualWaits() if simulated else None,
        wall_allowance=SINK_WALL_ALLOWANCE if simulated else None,
    )
