"""The outbox shared by real processes: no process's compaction erases what another is owed.

Each test starts real Python processes on one state folder (a run and a flush side by side are
two processes), bounded in count and in time by a subprocess timeout.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from glimmer.sinks.outbox import Outbox

_TIMEOUT = 120  # seconds one child may take before the test fails (it takes well under 2)

# A child process: owes ``count`` envelopes to ``sink``, delivering ``delivered`` of them
# (enough to make it compact the log more than once), so what it still owes is known.
_CHILD = """
import sys
from pathlib import Path
from glimmer.sinks.outbox import Outbox
state, sink, count, delivered = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
box = Outbox(state)
for i in range(count):
    box.put(sink, {"deliveryId": f"{sink}-{i:05d}", "phase": "Running"})
    if i < delivered:
        box.done(sink, f"{sink}-{i:05d}")
"""


def _child(state: Path, sink: str, count: int, delivered: int) -> subprocess.Popen[bytes]:
    args = [sys.executable, "-c", _CHILD, str(state), sink, str(count), str(delivered)]
    return subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _finish(child: subprocess.Popen[bytes]) -> None:
    _, err = child.communicate(timeout=_TIMEOUT)
    assert child.returncode == 0, err.decode()


def _owed_ids(state: Path, sink: str) -> list[str]:
    return [str(e["deliveryId"]) for e in Outbox(state).owed(sink)]


def test_a_compaction_keeps_what_another_process_appended_after_this_one_loaded(
    tmp_path: Path,
) -> None:
    run = Outbox(tmp_path)  # loaded before the other process writes
    run.put("run-sink", {"deliveryId": "run-first", "phase": "Running"})
    _finish(_child(tmp_path, "flush-sink", 5, 0))  # another process owes 5 meanwhile
    for i in range(200):  # this process delivers enough to compact its log
        run.put("run-sink", {"deliveryId": f"run-{i}", "phase": "Running"})
        run.done("run-sink", f"run-{i}")
    assert _owed_ids(tmp_path, "flush-sink") == [f"flush-sink-{i:05d}" for i in range(5)]
    assert _owed_ids(tmp_path, "run-sink") == ["run-first"]


def test_processes_appending_and_compacting_side_by_side_lose_no_envelope(
    tmp_path: Path,
) -> None:
    count, delivered = 400, 300  # each child compacts its log at least twice
    sinks = [f"sink-{n}" for n in range(4)]
    children = [_child(tmp_path, sink, count, delivered) for sink in sinks]
    for child in children:
        _finish(child)
    for sink in sinks:
        expected = [f"{sink}-{i:05d}" for i in range(delivered, count)]
        assert _owed_ids(tmp_path, sink) == expected


def test_processes_that_only_start_on_the_folder_lose_no_envelope_of_a_writer(
    tmp_path: Path,
) -> None:
    # Starting an outbox compacts the log: starting several while another process writes
    # must not drop what that one appended between the start's read and its rewrite.
    writer = _child(tmp_path, "writer", 300, 0)
    starters = [_child(tmp_path, f"idle-{n}", 0, 0) for n in range(6)]
    for child in [writer, *starters]:
        _finish(child)
    assert _owed_ids(tmp_path, "writer") == [f"writer-{i:05d}" for i in range(300)]
