"""A TEST DOUBLE of a container runtime's client (what ``docker``, ``podman`` or ``nerdctl``
is to glimmer), for the local substrate's container path. It implements only what glimmer asks
of a runtime, and isolates nothing:

* ``info``: answers (exit 0);
* ``run --rm --name N [flags…] IMAGE [CMD…]``: runs ``--entrypoint`` and CMD as the
  "container": a process in a session of its own — outside this client's process group, as a
  real container is outside its client's — given only the ``-e`` variables and a PATH, its
  output on ours. The client waits for it, passes SIGTERM on (``docker run`` proxies signals)
  and exits with its exit code (128+n for signal n). It pulls no image and ignores the other
  flags;
* ``rm -f N``: SIGKILLs that container's processes and appends N to ``$FAKECTR_STATE/removed``
  (exit 1 and "No such container" when N is not running, as docker does).

State: ``$FAKECTR_STATE/<name>`` holds the container's pid while it runs. Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

VALUED = {"--name", "--network", "--ulimit", "--gpus", "-v", "--device", "-e", "--entrypoint"}
VALUED |= {"--user"}
SWITCHES = {"--rm", "--privileged"}
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
KILL_MARK = ".kill"


def _state() -> Path:
    state = Path(os.environ["FAKECTR_STATE"])
    state.mkdir(parents=True, exist_ok=True)
    return state


def _parse(args: list[str]) -> tuple[dict[str, list[str]], list[str]]:
    """The flags given (each value in order) and what follows them: the image and the CMD."""
    flags: dict[str, list[str]] = {}
    i = 0
    while i < len(args) and args[i].startswith("-"):
        flag = args[i]
        if flag in SWITCHES:
            flags.setdefault(flag, []).append("")
            i += 1
        elif flag in VALUED:
            flags.setdefault(flag, []).append(args[i + 1])
            i += 2
        else:
            raise SystemExit(f"fakectr: unknown flag {flag}")
    return flags, args[i:]


def run(args: list[str]) -> int:
    child: subprocess.Popen[bytes] | None = None

    def forward(signum: int, frame: object) -> None:
        if child is not None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signum)

    signal.signal(signal.SIGTERM, forward)
    flags, rest = _parse(args)
    name = flags["--name"][0]
    command = flags.get("--entrypoint", []) + rest[1:]
    env = {"PATH": DEFAULT_PATH}
    for value in flags.get("-e", []):
        key, _, given = value.partition("=")
        env[key] = given
    pidfile = _state() / name
    if pidfile.exists():
        print(f"fakectr: the container name {name} is already in use", file=sys.stderr)
        return 125
    pidfile.write_text("")
    try:
        child = subprocess.Popen(command, env=env, start_new_session=True)
    except OSError as e:
        print(f"fakectr: {e}", file=sys.stderr)
        pidfile.unlink()
        return 127
    pidfile.write_text(str(child.pid))
    if pidfile.with_name(name + KILL_MARK).exists():  # removed while it was being created
        os.killpg(child.pid, signal.SIGKILL)
    code = child.wait()
    pidfile.unlink(missing_ok=True)  # --rm
    pidfile.with_name(name + KILL_MARK).unlink(missing_ok=True)
    return code if code >= 0 else 128 - code


def remove(name: str) -> int:
    state = _state()
    pidfile = state / name
    if not pidfile.exists():
        print(f"Error response from daemon: No such container: {name}", file=sys.stderr)
        return 1
    (state / (name + KILL_MARK)).write_text("")
    until = time.monotonic() + 2.0
    pid = ""
    while not pid and time.monotonic() < until:  # a container being created has no pid yet
        with contextlib.suppress(FileNotFoundError):
            pid = pidfile.read_text()
        time.sleep(0.01)
    if pid:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(int(pid), signal.SIGKILL)
    with open(state / "removed", "a") as f:
        f.write(name + "\n")
    print(name)
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["info"]:
        print("fakectr: a test double of a container engine")
        return 0
    if argv[:1] == ["run"] and argv[1:2] == ["--rm"]:
        return run(argv[2:])
    if argv[:2] == ["rm", "-f"] and len(argv) == 3:
        return remove(argv[2])
    print(f"fakectr: not implemented: {argv}", file=sys.stderr)
    return 125


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
