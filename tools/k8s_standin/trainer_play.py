"""The process a simulated workload pod runs: ``python -m tools.k8s_standin.trainer_play PLAN
ROLE [REASON]``.

``PLAN`` is the JSON file the Trainer stand-in writes once every pod of the TrainJob is bound
(the job's log computed by the fleet simulator for the nodes they landed on); until it exists
the process waits, as a workload waits for its peers. The ``lead`` (the MPI launcher, or rank 0)
prints the log line by line over the plan's ``seconds`` — so what changes on the cluster while
it runs is seen while it runs — then leaves ``PLAN.done`` and exits with the job's exit code
(killed by SIGKILL, with ``OOMKilled`` written to ``REASON``, when the plan says the job runs
out of memory). A ``follow`` pod (an MPI worker, another rank) waits for ``PLAN.done`` and
exits with the plan's ``follower_exit``: workers end when the launcher ends.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

# A waiting pod looks for its file every POLL_S at first, backing off to POLL_MAX_S: hundreds of
# pods of a large cluster wait at once, and 50 looks a second each would be the machine's load.
POLL_S = 0.02
POLL_MAX_S = 0.25
OOM_KILLED = "OOMKilled"
ORPHANED = 143  # as a container killed with SIGTERM exits


class Orphaned(Exception):
    """The kubelet stand-in that started this pod is gone, or its plan's directory is: nobody
    will write the file waited for, nor read what this pod prints."""


def done_path(plan: Path) -> Path:
    return plan.with_name(plan.name + ".done")


def _wait_for(path: Path) -> None:
    """Until ``path`` exists; :class:`Orphaned` once the process that started this one has
    died (this one is re-parented) or ``path``'s directory was removed (the cluster was torn
    down): a pod left behind by a killed test or bench must not wait for ever."""
    parent = os.getppid()
    pause = POLL_S
    had_dir = False  # the stand-in makes the directory with the first plan it writes
    while not path.is_file():
        has_dir = path.parent.is_dir()
        if os.getppid() != parent or (had_dir and not has_dir):
            raise Orphaned(str(path))
        had_dir = has_dir
        time.sleep(pause)
        pause = min(pause * 1.5, POLL_MAX_S)


def _read(plan: Path) -> dict[str, Any]:
    _wait_for(plan)
    doc: dict[str, Any] = json.loads(plan.read_text())
    return doc


def lead(plan: Path, reason: Path | None) -> int:
    doc = _read(plan)
    lines = str(doc["text"]).splitlines(keepends=True)
    pause = float(doc.get("seconds", 0.0)) / max(len(lines), 1)
    for line in lines:
        sys.stdout.write(line)
        sys.stdout.flush()
        time.sleep(pause)
    code = int(doc["exit_code"])
    if doc.get("oom"):
        if reason is not None:
            reason.write_text(OOM_KILLED + "\n")
        done_path(plan).write_text("137\n")
        os.kill(os.getpid(), signal.SIGKILL)
    done_path(plan).write_text(f"{code}\n")
    return code


def follow(plan: Path) -> int:
    doc = _read(plan)
    sys.stdout.write(f"stand-in worker of {doc.get('job', 'the job')}: waiting for the lead\n")
    sys.stdout.flush()
    _wait_for(done_path(plan))
    return int(doc.get("follower_exit", 0))


def main(argv: list[str]) -> int:
    if len(argv) not in (2, 3) or argv[1] not in ("lead", "follow"):
        sys.stderr.write("usage: trainer_play PLAN lead|follow [REASON]\n")
        return 2
    plan = Path(argv[0])
    reason = Path(argv[2]) if len(argv) == 3 else None
    try:
        return lead(plan, reason) if argv[1] == "lead" else follow(plan)
    except Orphaned as e:
        sys.stderr.write(f"stand-in pod orphaned waiting for {e}: exiting\n")
        return ORPHANED


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
