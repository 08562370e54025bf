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

POLL_S = 0.02
OOM_KILLED = "OOMKilled"


def done_path(plan: Path) -> Path:
    return plan.with_name(plan.name + ".done")


def _wait_for(path: Path) -> None:
    while not path.is_file():
        time.sleep(POLL_S)


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
    return lead(plan, reason) if argv[1] == "lead" else follow(plan)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
