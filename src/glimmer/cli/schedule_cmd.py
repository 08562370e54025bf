"""``glimmer schedule run -f FILE --backend sim``: BurnInSchedules fired on the simulated fleet.

The scheduler (glimmer.schedule) decides; this command applies its actions to the simulator
backend and drives each created run through the engine, on one virtual clock. Bounded by
``--until`` (virtual time) and ``--ticks`` (due ticks, fired or skipped): once either is
reached no tick fires any more, and the runs already started are driven to their verdicts.
Exit 0 when every run passed, 1 when any did not, 2 on bad input.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
from typing import TYPE_CHECKING, Annotated

import typer

from glimmer.api.cadence import load_zone
from glimmer.api.duration import DurationError, parse_seconds
from glimmer.api.load import Loaded, of_kind
from glimmer.api.profile import BurnInProfile
from glimmer.api.run import BurnInRun
from glimmer.api.schedule import BurnInSchedule, BurnInScheduleStatus
from glimmer.api.sink import BurnInSink
from glimmer.api.test import BurnInTest
from glimmer.backends.common.registry import SIM
from glimmer.cli.conventions import DEFAULT_SEED, SeedOpt
from glimmer.cli.run_inputs import load_kinds
from glimmer.contract.vocab import Phase
from glimmer.engine.reconciler import Engine
from glimmer.errors import InputError, Location
from glimmer.fleet.load import load_topology
from glimmer.fleet.topology import Topology
from glimmer.plan.given import check_profile, check_startable, check_targets, check_test_refs
from glimmer.plan.nodes import NodeInfo
from glimmer.schedule.actions import apply
from glimmer.schedule.decide import Decision, decide
from glimmer.schedule.stamp import rfc3339, stamp_run

if TYPE_CHECKING:  # annotation only: importing the simulator costs every command
    from glimmer.backends.common.registry import SimBackend

schedule_app = typer.Typer(
    name="schedule",
    help="BurnInSchedules: fire runs on a cron schedule.",
    no_args_is_help=True,
)

DEFAULT_TICKS = 3
# What ``schedule run -f`` reads: the schedules, and the profiles, tests and sinks their runs
# name.
SCHEDULE_KINDS = (BurnInSchedule, BurnInProfile, BurnInTest, BurnInSink)
MESSAGE_SHOWN = 300  # characters of a failing result's message printed under its verdict
MAX_RUN_RETRIES = 100  # consecutive failed passes of one run before giving up


class BackendName(StrEnum):
    SIM = "sim"


Say = Callable[[str], None]


@dataclass
class SimStore:
    """The scheduler's store on the simulator: runs live in the backend, the schedule here."""

    backend: SimBackend
    schedule: BurnInSchedule
    created: list[BurnInRun] = field(default_factory=list)

    def write_schedule_status(self, status: BurnInScheduleStatus) -> None:
        self.schedule = self.schedule.model_copy(update={"status": status})

    def create_run(self, run: BurnInRun) -> None:
        self.created.append(self.backend.submit(run))

    def delete_run(self, namespace: str, name: str) -> None:
        self.backend.delete_run(namespace, name)


@dataclass
class Tally:
    """What a drive did."""

    fired: int = 0
    skipped: int = 0
    missed: int = 0
    verdicts: dict[str, Phase] = field(default_factory=dict)

    @property
    def ticks(self) -> int:
        return self.fired + self.skipped


def virtual_seconds(text: str) -> int:
    """``--until``: a Go duration (``36h``, ``90m``) or whole days (``7d``)."""
    body = text.strip()
    if body.endswith("d") and body[:-1].isascii() and body[:-1].isdigit():
        return int(body[:-1]) * 86400
    try:
        return parse_seconds(body)
    except DurationError as e:
        raise InputError(f"--until: {e}") from None


def _at(backend: SimBackend) -> str:
    return f"[{rfc3339(backend.now())}]"


def _report(decision: Decision, store: SimStore, say: Say, tally: Tally) -> None:
    name = store.schedule.name
    when = _at(store.backend)
    if decision.resynced:
        say(f"{when} {name}: backlog of more than 1000 ticks, resynced to now")
    # A Forbid skip is counted in missedSchedules too; here it is reported as the skip it is.
    passed_by = decision.missed - (decision.skipped is not None)
    if passed_by:
        tally.missed += passed_by
        say(f"{when} {name}: {passed_by} tick(s) missed")
    if decision.skipped is not None:
        tally.skipped += 1
        status = store.schedule.status
        refs = (status.active if status is not None else None) or ()
        active = ", ".join(r.name or "?" for r in refs) or "?"
        say(f"{when} {name}: tick {rfc3339(decision.skipped)} skipped (Forbid; active: {active})")
    if decision.fired is not None:
        tally.fired += 1
        created = decision.created
        run_name = created.name if created is not None else "?"
        zone = store.schedule.spec.time_zone
        local = f" = {decision.fired.astimezone(load_zone(zone)):%H:%M} {zone}" if zone else ""
        say(
            f"{when} {name}: tick {rfc3339(decision.fired)}{local} fired "
            f"{run_name} (profile {store.schedule.spec.profile_ref})"
        )


def _verdict(run: BurnInRun, say: Say, backend: SimBackend, tally: Tally) -> None:
    status = run.status
    phase = status.phase if status is not None else Phase.PENDING
    tally.verdicts[run.name] = phase
    counts = ""
    if status is not None:
        counts = (
            f" (passed {status.passed}, failed {status.failed}, "
            f"error {status.errored}, skipped {status.skipped})"
        )
    say(f"{_at(backend)} {run.name}: {phase.value}{counts}")
    if phase is not Phase.PASSED and status is not None:
        first = next((r for r in status.results or () if r.phase is not Phase.PASSED), None)
        if first is not None and first.message:
            say(f"    {first.name}: {first.message[:MESSAGE_SHOWN]}")


def drive_schedules(
    backend: SimBackend,
    engine: Engine,
    stores: list[SimStore],
    *,
    until: float = math.inf,
    ticks: int | None = None,
    speed: float | None = None,
    say: Say = print,
) -> Tally:
    """Reconcile the schedules and their runs on the backend's virtual clock until the bound
    is reached and every started run has settled: the one virtual-clock driver, with the
    schedules' ticks beside the runs' passes."""
    end = backend.t + until
    tally = Tally()
    schedule_wake = [backend.t] * len(stores)
    runs = SIM.run_wakes(max_retries=MAX_RUN_RETRIES)

    def fire_due() -> float:
        """The schedules due now decide and fire; when the next one is due (inf: never)."""
        bounded = backend.t > end or (ticks is not None and tally.ticks >= ticks)
        for i, store in enumerate(stores):
            if schedule_wake[i] > backend.t:
                continue
            if bounded:
                schedule_wake[i] = math.inf
                continue
            decision = decide(store.schedule, backend.list_runs(), backend.now())
            apply(decision.actions, store)
            _report(decision, store, say, tally)
            for made in store.created:
                runs.add((made.metadata.namespace or "default", made.name), backend.t)
            store.created.clear()
            after = decision.requeue_after
            schedule_wake[i] = backend.t + after if after is not None else math.inf
            if ticks is not None and tally.ticks >= ticks:
                schedule_wake[:] = [math.inf] * len(stores)
        # Ticks past the bound never fire; runs already started still get their verdict.
        schedule_wake[:] = [w if w <= end else math.inf for w in schedule_wake]
        return min(schedule_wake, default=math.inf)

    def pace(seconds: float) -> None:
        if speed is not None:
            time.sleep(seconds / speed)

    SIM.drive_virtual(
        backend,
        engine,
        runs,
        side=fire_due,
        paced=pace,
        on_settled=lambda run: _verdict(run, say, backend, tally),
    )
    return tally


def _prepare(schedule: BurnInSchedule, backend: SimBackend) -> BurnInSchedule:
    """Fill what an API server would: namespace, uid, generation, creation time (now)."""
    meta = schedule.metadata
    update: dict[str, object] = {}
    if not meta.namespace:
        update["namespace"] = "default"
    if not meta.uid:
        update["uid"] = f"schedule-{schedule.name}"
    if meta.generation is None:
        update["generation"] = 1
    if meta.creation_timestamp is None:
        update["creation_timestamp"] = backend.now()
    return schedule.model_copy(update={"metadata": meta.model_copy(update=update)})


def _schedules(loaded: list[Loaded]) -> list[tuple[BurnInSchedule, Loaded]]:
    found = of_kind(loaded, BurnInSchedule)
    if not found:
        held = ", ".join(item.ref for item in loaded)
        raise InputError(
            f"-f: no BurnInSchedule in the files given (they hold {held}); nothing to fire",
            Location(file=loaded[0].source) if loaded else Location(),
        )
    # spec.schedule and spec.timeZone were parsed at load (glimmer.api.schedule).
    return found


def _check_fires(
    found: list[tuple[BurnInSchedule, Loaded]], loaded: list[Loaded], topo: Topology
) -> None:
    """Every run a schedule would fire can start: its profile exists (given or built in), every
    testRef of the profiles given names a test, and its target selects nodes of the fleet.
    Checked before the first tick, each at the line it was written on; a schedule that would
    fire only to have every run refused is bad input, not a verdict."""
    profiles = {item.name: p for p, item in of_kind(loaded, BurnInProfile)}
    tests = {item.name: t.spec for t, item in of_kind(loaded, BurnInTest)}
    nodes = [NodeInfo(name=n.name, labels=n.labels) for n in SIM.nodes(topo)]
    for schedule, item in found:
        where = item.locate("spec.profileRef")
        check_profile(schedule.spec.profile_ref, profiles, tests, where)
        check_targets(schedule.spec.target, nodes, topo.name, item)
    check_test_refs(of_kind(loaded, BurnInProfile), tests)
    now = datetime.now(UTC)
    for schedule, item in found:
        # The run a tick would stamp, judged by the planner as the engine will judge it.
        stamped = stamp_run(schedule, now)
        profile = profiles.get(schedule.spec.profile_ref)
        what = "every run this schedule fires would be refused"
        check_startable(stamped, profile, tests, nodes, item.locate(), now, what)


@schedule_app.command("run")
def run(
    files: Annotated[
        list[str],
        typer.Option(
            "--file", "-f", help="YAML/JSON with BurnInSchedules (and profiles and tests)."
        ),
    ],
    backend: Annotated[
        BackendName, typer.Option("--backend", help="Where runs execute (sim only).")
    ] = BackendName.SIM,
    fleet: Annotated[
        str, typer.Option("--fleet", help="Built-in fleet name or a Fleet file.")
    ] = "ai-factory",
    speed: Annotated[
        float | None,
        typer.Option(
            "--speed", min=0.001, help="Virtual seconds per wall second (default: no waiting)."
        ),
    ] = None,
    until: Annotated[
        str | None, typer.Option("--until", help="Stop firing after this much virtual time.")
    ] = None,
    ticks: Annotated[
        int | None, typer.Option("--ticks", min=1, help="Stop firing after N due ticks.")
    ] = None,
    seed: SeedOpt = DEFAULT_SEED,
) -> None:
    """Fire each schedule's runs on the simulated fleet and print every tick and verdict."""
    loaded = load_kinds("-f", files, SCHEDULE_KINDS)
    found = _schedules(loaded)
    schedules = [s for s, _ in found]
    profiles = {p.name: p for p, _ in of_kind(loaded, BurnInProfile)}
    tests = {t.name: t.spec for t, _ in of_kind(loaded, BurnInTest)}
    limit = virtual_seconds(until) if until is not None else math.inf
    if until is None and ticks is None:
        ticks = DEFAULT_TICKS  # always bounded
    topo = load_topology(fleet)
    _check_fires(found, loaded, topo)
    twin = SIM.twin(topo)
    sim = SIM.backend(twin, seed=seed, profiles=profiles, tests=tests)
    stores = [SimStore(sim, _prepare(s, sim)) for s in schedules]
    tally = drive_schedules(sim, Engine(sim), stores, until=limit, ticks=ticks, speed=speed)
    verdicts = tally.verdicts.values()
    passed = sum(p is Phase.PASSED for p in verdicts)
    print(
        f"{tally.ticks} tick(s): {tally.fired} fired, {tally.skipped} skipped, "
        f"{tally.missed} missed; {passed} of {len(tally.verdicts)} run(s) passed"
    )
    raise typer.Exit(0 if passed == len(tally.verdicts) else 1)


def register(app: typer.Typer) -> None:
    """Add ``glimmer schedule`` to the app."""
    app.add_typer(schedule_app)
