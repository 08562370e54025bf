"""``glimmer-runner <kind>``: one console script for every runner program.

``glimmer-runner disk-io`` is exactly ``python -m glimmer.runners.disk_io``: the kind's module
is run as ``__main__``, so a kind needs nothing beyond its module to be reachable both ways, and
one kind's optional library never burdens another. A kind is runnable when the contract knows
it and its module exists; anything else is a usage error, exit 2, with the kinds on stderr.
"""

from __future__ import annotations

import importlib.util
import runpy
import sys

from glimmer.contract.kinds import BUILT_IN

PACKAGE = "glimmer.runners"


def module_of(kind: str) -> str:
    return f"{PACKAGE}.{kind.replace('-', '_')}"


def runnable_kinds() -> list[str]:
    """The built-in kinds that have a runner module here, sorted."""
    return sorted(k for k in BUILT_IN if importlib.util.find_spec(module_of(k)) is not None)


def usage() -> str:
    return "usage: glimmer-runner <kind>\nkinds: " + ", ".join(runnable_kinds())


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) == 1 and args[0] in ("-h", "--help"):
        print(usage())
        return 0
    if len(args) != 1 or args[0] not in runnable_kinds():
        given = " ".join(args) or "nothing"
        print(f"glimmer-runner: unknown kind: {given}\n{usage()}", file=sys.stderr)
        return 2
    try:
        runpy.run_module(module_of(args[0]), run_name="__main__", alter_sys=True)
    except SystemExit as done:  # the runner's own exit code
        code = done.code
        return code if isinstance(code, int) else 3
    return 3  # a runner module that returned without exiting printed no verdict


if __name__ == "__main__":
    sys.exit(main())
