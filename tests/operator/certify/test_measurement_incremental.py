"""Incremental measurement reads equal one whole read (specs/certify.md §6, ADR-005, ADR-072).

Generated nccl-tests and Megatron logs are sampled at random cut points — a sample may end
mid-line, several lines may share one nanosecond, the server answers ``sinceTime`` at whole
seconds as the API does, a training run restarts in its own log, in a new pod, or its container
restarts — and every sample goes through the controller's own pieces (``read_pod`` with its
cursor, ``MeasurementReconciler.figures``), with the status round-tripped through JSON between
samples as the API stores it. The last sample, at the Job's terminal time, must give exactly the
status of one read of the whole logs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lightkube import Client

from glimmer.api.certify.logprofile import LogProfile
from glimmer.certify.catalog.entries import builtin_log_profiles
from glimmer.certify.measure.bandwidth import bandwidth_parser, merge
from glimmer.certify.measure.log_cursor import Cursor, line_stamp, stamp_ns
from glimmer.operator.certify import measurement_reads
from glimmer.operator.certify.measurement_reads import (
    LIFECYCLE,
    LOG,
    STEPS,
    PodRead,
    cursors_of,
    read_pod,
)
from glimmer.operator.certify.measurements import LOG_SETTLE_SECONDS, MeasurementReconciler

BASE = datetime(2026, 12, 2, 3, 0, 0, tzinfo=UTC)
ANCHOR = BASE + timedelta(hours=2)  # the Job's terminal time, after every generated line
CONTAINER = "node"


def kubelet(ns: int) -> str:
    """The kubelet prefix of a line written ``ns`` nanoseconds after BASE."""
    at = BASE + timedelta(microseconds=ns // 1000)
    return f"{at:%Y-%m-%dT%H:%M:%S}.{ns % 1_000_000_000:09d}Z "


def inner(ns: int) -> str:
    at = BASE + timedelta(microseconds=ns // 1000)
    return f"[{at:%Y-%m-%d %H:%M:%S.%f}]"


# ---- generated logs ------------------------------------------------------------------------

gaps = st.one_of(st.just(0), st.integers(1, 3_000_000_000))  # 0: the same nanosecond


@st.composite
def training_events(draw: st.DrawFn) -> list[tuple[str, int, float]]:
    """(kind, gap before it in ns, value) with kind start|step|save|noise; starts after the
    first are restarts of the training run."""
    events: list[tuple[str, int, float]] = [("start", 0, 0.0)]
    for _ in range(draw(st.integers(1, 40))):
        kind = draw(st.sampled_from(("step", "step", "step", "save", "noise", "start")))
        value = draw(st.floats(0.1, 5000.0, allow_nan=False)) if kind in ("step", "save") else 0
        events.append((kind, draw(gaps), float(value)))
    return events


@dataclass
class Lines:
    """A log as its lines (each with its kubelet prefix and a newline)."""

    lines: list[str]

    @property
    def text(self) -> str:
        return "".join(self.lines)


def megatron(events: Sequence[tuple[str, int, float]]) -> tuple[Lines, Lines]:
    """The lifecycle and step lines of ``events`` (one Single log is both, merged by time)."""
    life, steps = Lines([]), Lines([])
    t, step = 0, 0
    for kind, gap, value in events:
        t += gap
        if kind == "start":
            life.lines.append(f"{kubelet(t)} {inner(t)} training ...\n")
        elif kind == "step":
            step += 1
            steps.lines.append(
                f"{kubelet(t)} {inner(t)} iteration {step:>8}/    1000 | consumed samples: 1 | "
                f"elapsed time per iteration (ms): {value:.1f} | "
                f"throughput per GPU (TFLOP/s/GPU): {value / 10:.1f} |\n"
            )
        elif kind == "save":
            life.lines.append(
                f"{kubelet(t)} {inner(t)} saving checkpoint at iteration {step} to /c\n"
            )
            t += int(value * 1_000_000)
            life.lines.append(
                f"{kubelet(t)} {inner(t)}   successfully saved checkpoint from iteration {step} "
                "to /c\n"
            )
        else:
            life.lines.append(f"{kubelet(t)} NCCL INFO nothing to see\n")
    return life, steps


def by_time(*logs: Lines) -> Lines:
    """One log of several, in kubelet time order (ties: the earlier log's line first)."""
    tagged = [
        (stamp_ns(line_stamp(line) or ""), i, j, line)
        for i, log in enumerate(logs)
        for j, line in enumerate(log.lines)
    ]
    return Lines([line for *_, line in sorted(tagged, key=lambda x: (x[0] or 0, x[1], x[2]))])


@st.composite
def nccl_log(draw: st.DrawFn) -> Lines:
    out, t = [], 0
    out.append(f"{kubelet(t)} #       size    count   type   redop    root     time   algbw\n")
    for _ in range(draw(st.integers(1, 30))):
        t += draw(gaps)
        size = draw(st.sampled_from((8, 1024, 1048576, 16777216)))
        alg = draw(st.floats(0.0, 400.0, allow_nan=False))
        bus = draw(st.floats(0.0, 800.0, allow_nan=False))
        out.append(
            f"{kubelet(t)} {size:>12} {size // 4:>12}  float  sum  -1  25.10  {alg:.3f}  "
            f"{bus:.3f}  0  24.90  {alg:.3f}  {bus:.3f}  0\n"
        )
        if draw(st.booleans()):
            out.append(f"{kubelet(t)} gpu-01:12:12 [0] NCCL INFO Channel 00/02 : 0 1\n")
    return Lines(out)


# ---- a server of logs as they grow ---------------------------------------------------------


@dataclass
class Container:
    """One pod's container as the API shows it: its instances' logs, the current one growing."""

    uid: str
    instances: list[str]  # every instance's text so far; the last is the running one
    finished: bool = False

    def pod(self, name: str) -> dict[str, Any]:
        return {
            "metadata": {"name": name, "namespace": "ns", "uid": self.uid},
            "status": {
                "phase": "Succeeded" if self.finished else "Running",
                "containerStatuses": [
                    {"name": CONTAINER, "restartCount": len(self.instances) - 1, "state": {}}
                ],
            },
        }


def since(text: str, since_time: str | None) -> str:
    """What the API answers for ``sinceTime``: the lines stamped at or after that second."""
    if since_time is None:
        return text
    floor = stamp_ns(since_time)
    assert floor is not None and floor % 1_000_000_000 == 0  # the API takes whole seconds
    kept = [
        line
        for line in text.split("\n")
        if (stamp_ns(line_stamp(line) or "") or floor) >= floor  # a cut-off prefix is sent
    ]
    return "\n".join(kept)


class Server:
    """``logs.read_log`` answered from ``pods`` (name -> Container)."""

    def __init__(self) -> None:
        self.pods: dict[str, Container] = {}
        self.asked: list[str | None] = []

    def reset(self) -> None:
        self.pods.clear()
        self.asked.clear()

    def read_log(
        self,
        _client: Any,
        _namespace: str,
        pod: str,
        container: str,
        *,
        timestamps: bool = True,
        since_time: str | None = None,
        previous: bool = False,
    ) -> str | None:
        assert container == CONTAINER and timestamps
        self.asked.append(since_time)
        instances = self.pods[pod].instances
        text = instances[-2] if previous else instances[-1]
        return since(text, since_time)


def profile_of(name: str, multi: bool = False) -> LogProfile:
    body = builtin_log_profiles()[name].model_dump(by_alias=True, exclude_none=True)
    if multi:
        body["spec"]["workerStrategy"] = {
            "type": "Multi", "lifecyclePod": "first", "trainingStepPod": "last",
            "replicatedJobName": "node",
        }  # fmt: skip
    return LogProfile.model_validate(body)


def sample(
    reconciler: MeasurementReconciler,
    profile: LogProfile,
    server: Server,
    roles: dict[str, str],
    status: dict[str, Any],
    anchor: datetime | None = None,
    read_at: datetime | None = None,
) -> dict[str, Any]:
    """One sample (at ``read_at``): each role's pod read from its cursor, folded into
    ``status``, the result stored and read back as JSON."""
    cursors = cursors_of(status)
    reads: list[PodRead] = []
    for role, name in roles.items():
        got = read_pod(cast(Client, None), server.pods[name].pod(name), CONTAINER, role,
                       cursors.get(role))  # fmt: skip
        if got is not None:
            reads.append(got)
    out, _ = reconciler.figures(status, reads, profile, anchor, read_at)
    loaded: dict[str, Any] = json.loads(json.dumps(out))
    return loaded


def cuts_of(text: str, draw: Callable[[Any], Any]) -> list[int]:
    return sorted(draw(st.lists(st.integers(0, len(text)), max_size=8)))


def whole_status(
    server: Server,
    plural: str,
    profile: LogProfile,
    logs: dict[str, tuple[str, str]],
    roles: dict[str, str],
) -> dict[str, Any]:
    """The status of one read of whole, finished logs (pod name -> (uid, text)), served by
    ``server`` (reset for it)."""
    server.reset()
    for name, (uid, text) in logs.items():
        server.pods[name] = Container(uid, [text], finished=True)
    reconciler = MeasurementReconciler(cast(Client, None), lambda: BASE, plural)
    return sample(reconciler, profile, server, roles, {}, ANCHOR)


def without_cursors(status: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in status.items() if k != "logCursors"}


@pytest.fixture
def served() -> Any:
    with pytest.MonkeyPatch.context() as mp:
        server = Server()
        mp.setattr(measurement_reads.logs, "read_log", server.read_log)
        yield server


# ---- the properties ------------------------------------------------------------------------

# ``served`` is function-scoped: each example starts with ``served.reset()``.
SETTINGS = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


def replay(
    server: Server,
    reconciler: MeasurementReconciler,
    profile: LogProfile,
    name: str,
    text: str,
    cuts: list[int],
    status: dict[str, Any],
    role: str = LOG,
) -> dict[str, Any]:
    """Sample pod ``name``'s log at each cut while it grows, then once it finished."""
    pod = server.pods[name]
    for cut in cuts:
        pod.instances[-1] = text[:cut]
        status = sample(reconciler, profile, server, {role: name}, status)
    pod.instances[-1], pod.finished = text, True
    return sample(reconciler, profile, server, {role: name}, status)


@SETTINGS
@given(events=training_events(), data=st.data())
def test_goodput_sampled_anywhere_equals_one_whole_read(
    served: Server, events: list[tuple[str, int, float]], data: st.DataObject
) -> None:
    served.reset()
    profile = profile_of("megatron-training")
    text = by_time(*megatron(events)).text
    reconciler = MeasurementReconciler(cast(Client, None), lambda: BASE, "goodputmeasurements")
    served.pods["w-0"] = Container("uid-a", [""])
    status = replay(served, reconciler, profile, "w-0", text, cuts_of(text, data.draw), {})
    final = sample(reconciler, profile, served, {LOG: "w-0"}, status, ANCHOR)
    whole = whole_status(
        served, "goodputmeasurements", profile, {"w-0": ("uid-a", text)}, {LOG: "w-0"}
    )
    assert final == whole


@SETTINGS
@given(first=training_events(), second=training_events(), data=st.data())
def test_goodput_across_a_checkpoint_restarts_new_pod_equals_one_whole_read(
    served: Server,
    first: list[tuple[str, int, float]],
    second: list[tuple[str, int, float]],
    data: st.DataObject,
) -> None:
    """The restarted workload's pod (a new UID, same name) is read from its start; the old
    attempt was folded in while its pod lived."""
    served.reset()
    profile = profile_of("megatron-training")
    a = by_time(*megatron(first)).text
    shift = 3_600_000_000_000  # the second attempt starts an hour on
    b = by_time(*megatron([(k, g + (shift if i == 0 else 0), v)
                           for i, (k, g, v) in enumerate(second)])).text  # fmt: skip
    reconciler = MeasurementReconciler(cast(Client, None), lambda: BASE, "goodputmeasurements")
    served.pods["w-0"] = Container("uid-a", [""])
    status = replay(served, reconciler, profile, "w-0", a, cuts_of(a, data.draw), {})
    served.pods["w-0"] = Container("uid-b", [""])
    status = replay(served, reconciler, profile, "w-0", b, cuts_of(b, data.draw), status)
    final = sample(reconciler, profile, served, {LOG: "w-0"}, status, ANCHOR)
    whole = whole_status(
        served, "goodputmeasurements", profile, {"w-0": ("uid-a", a + b)}, {LOG: "w-0"}
    )
    assert without_cursors(final) == without_cursors(whole)
    # With a step in each attempt the restart is an interruption; an attempt without one
    # gives no figures to count it in (hypothesis found start-and-noise-only attempts).
    if all(any(kind == "step" for kind, _, _ in attempt) for attempt in (first, second)):
        assert final["interruptionCount"] == whole["interruptionCount"] >= 1


@SETTINGS
@given(events=training_events(), data=st.data())
def test_multi_worker_goodput_sampled_anywhere_equals_one_whole_read(
    served: Server, events: list[tuple[str, int, float]], data: st.DataObject
) -> None:
    """Lifecycle lines from the first pod, steps from the last (§2.8 Multi), each sampled at its
    own cut points; a line waits until the other pod's log has passed its time."""
    served.reset()
    profile = profile_of("megatron-training", multi=True)
    life, steps = megatron(events)
    roles = {LIFECYCLE: "w-0", STEPS: "w-1"}
    reconciler = MeasurementReconciler(cast(Client, None), lambda: BASE, "goodputmeasurements")
    served.pods["w-0"] = Container("uid-0", [""])
    served.pods["w-1"] = Container("uid-1", [""])
    status: dict[str, Any] = {}
    life_cuts, step_cuts = cuts_of(life.text, data.draw), cuts_of(steps.text, data.draw)
    for i in range(max(len(life_cuts), len(step_cuts))):
        if i < len(life_cuts):
            served.pods["w-0"].instances[-1] = life.text[: life_cuts[i]]
        if i < len(step_cuts):
            served.pods["w-1"].instances[-1] = steps.text[: step_cuts[i]]
        status = sample(reconciler, profile, served, roles, status)
    for name, log in (("w-0", life), ("w-1", steps)):
        served.pods[name].instances[-1], served.pods[name].finished = log.text, True
    final = sample(reconciler, profile, served, roles, status, ANCHOR)
    whole = whole_status(
        served, "goodputmeasurements", profile,
        {"w-0": ("uid-0", life.text), "w-1": ("uid-1", steps.text)}, roles,
    )  # fmt: skip
    assert final == whole


@SETTINGS
@given(events=training_events(), data=st.data())
def test_multi_worker_goodput_sampled_at_common_instants_equals_one_whole_read(
    served: Server, events: list[tuple[str, int, float]], data: st.DataObject
) -> None:
    """Both pods read at the same instants, as a controller does: each log holds every line
    stamped more than LOG_SETTLE_SECONDS before the read and some of the ones after (in
    flight); a quiet pod holds the other's lines back no longer than that."""
    served.reset()
    profile = profile_of("megatron-training", multi=True)
    life, steps = megatron(events)
    roles = {LIFECYCLE: "w-0", STEPS: "w-1"}
    reconciler = MeasurementReconciler(cast(Client, None), lambda: BASE, "goodputmeasurements")
    served.pods["w-0"] = Container("uid-0", [""])
    served.pods["w-1"] = Container("uid-1", [""])
    settle = int(LOG_SETTLE_SECONDS * 1e9)
    end = max(stamp_ns(line_stamp(x) or "") or 0 for x in life.lines + steps.lines)
    instants = sorted(
        data.draw(
            st.lists(st.integers(0, end - stamp_ns(kubelet(0).strip()) + 2 * settle), max_size=8)
        )
    )
    status: dict[str, Any] = {}
    for offset in instants:
        read_ns = (stamp_ns(kubelet(0).strip()) or 0) + offset
        for name, log in (("w-0", life), ("w-1", steps)):
            settled = [
                x for x in log.lines if (stamp_ns(line_stamp(x) or "") or 0) <= read_ns - settle
            ]
            flying = log.lines[len(settled) :]
            late = [x for x in flying if (stamp_ns(line_stamp(x) or "") or 0) <= read_ns]
            served.pods[name].instances[-1] = "".join(
                settled + late[: data.draw(st.integers(0, len(late)))]
            )
        at = datetime.fromtimestamp(read_ns // 1000 / 1e6, UTC)
        status = sample(reconciler, profile, served, roles, status, read_at=at)
    for name, log in (("w-0", life), ("w-1", steps)):
        served.pods[name].instances[-1], served.pods[name].finished = log.text, True
    final = sample(reconciler, profile, served, roles, status, ANCHOR)
    whole = whole_status(
        served, "goodputmeasurements", profile,
        {"w-0": ("uid-0", life.text), "w-1": ("uid-1", steps.text)}, roles,
    )  # fmt: skip
    assert final == whole


@SETTINGS
@given(log=nccl_log(), restart=st.booleans(), data=st.data())
def test_bandwidth_sampled_anywhere_equals_one_whole_read(
    served: Server, log: Lines, restart: bool, data: st.DataObject
) -> None:
    """Including a container restart mid-log: the instance before is read to its end
    (``previous``), the new one from its start."""
    served.reset()
    profile = profile_of("nccl-bandwidth")
    text = log.text
    split = data.draw(st.integers(0, len(log.lines))) if restart else len(log.lines)
    before, after = "".join(log.lines[:split]), "".join(log.lines[split:])
    reconciler = MeasurementReconciler(cast(Client, None), lambda: BASE, "bandwidthmeasurements")
    served.pods["l-0"] = Container("uid-l", [""])
    status: dict[str, Any] = {}
    for cut in cuts_of(before, data.draw):
        served.pods["l-0"].instances[-1] = before[:cut]
        status = sample(reconciler, profile, served, {LOG: "l-0"}, status)
    if restart:
        served.pods["l-0"].instances = [before, ""]
    status = replay(served, reconciler, profile, "l-0", after if restart else before,
                    cuts_of(after, data.draw) if restart else [], status)  # fmt: skip
    whole = whole_status(
        served, "bandwidthmeasurements", profile, {"l-0": ("uid-l", text)}, {LOG: "l-0"}
    )
    assert without_cursors(status) == without_cursors(whole)
    rows = bandwidth_parser(profile).parse(text)
    shown = [(r.size, f"{r.alg_bw:.6f}", r.samples) for r in merge([], rows)]
    assert [(r["sizeBytes"], r["algBW"], r["samples"]) for r in status.get("results", [])] == shown


def test_lines_of_one_nanosecond_split_by_a_sample_are_counted_once(served: Server) -> None:
    served.reset()
    profile = profile_of("nccl-bandwidth")
    same = kubelet(1_500_000_000)
    rows = [f"{same}  1024  256  float  sum  -1  25.1  {v}.0  {v}.0  0  24.9  1.0  1.0  0\n"
            for v in (10, 20, 30)]  # fmt: skip
    reconciler = MeasurementReconciler(cast(Client, None), lambda: BASE, "bandwidthmeasurements")
    served.pods["l-0"] = Container("uid-l", ["".join(rows[:2])])
    status = sample(reconciler, profile, served, {LOG: "l-0"}, {})
    assert status["logCursors"] == [
        {"role": "log", "podUID": "uid-l", "restarts": 0, "time": same.strip(), "linesAtTime": 2}
    ]
    served.pods["l-0"].instances[-1] = "".join(rows)
    status = sample(reconciler, profile, served, {LOG: "l-0"}, status)
    assert status["results"] == [
        {"sizeBytes": 1024, "algBW": "20.000000", "busBW": "20.000000", "samples": 3}
    ]
    assert served.asked == [None, "2026-12-02T03:00:01Z"]  # the cursor's whole second


def test_an_unterminated_last_line_waits_for_its_end(served: Server) -> None:
    served.reset()
    profile = profile_of("nccl-bandwidth")
    line = f"{kubelet(0)}  1024  256  float  sum  -1  25.1  10.0  10.0  0  24.9  1.0  1.0  0\n"
    reconciler = MeasurementReconciler(cast(Client, None), lambda: BASE, "bandwidthmeasurements")
    served.pods["l-0"] = Container("uid-l", [line[:-3]])
    status = sample(reconciler, profile, served, {LOG: "l-0"}, {})
    assert "results" not in status and status["logCursors"][0]["linesAtTime"] == 0
    served.pods["l-0"].instances[-1] = line
    status = sample(reconciler, profile, served, {LOG: "l-0"}, status)
    assert status["results"][0]["samples"] == 1


def test_a_new_container_instance_with_nothing_printed_keeps_the_cursor(served: Server) -> None:
    """§6.1: no rows and restarts > 0 do not advance the anchor."""
    served.reset()
    profile = profile_of("nccl-bandwidth")
    line = f"{kubelet(0)}  1024  256  float  sum  -1  25.1  10.0  10.0  0  24.9  1.0  1.0  0\n"
    reconciler = MeasurementReconciler(cast(Client, None), lambda: BASE, "bandwidthmeasurements")
    served.pods["l-0"] = Container("uid-l", [line])
    status = sample(reconciler, profile, served, {LOG: "l-0"}, {})
    served.pods["l-0"].instances.append("")  # restarted, silent so far
    again = sample(reconciler, profile, served, {LOG: "l-0"}, status)
    assert again == status
    assert Cursor("uid-l", 0, kubelet(0).strip(), 1).to_status(LOG) == again["logCursors"][0]
