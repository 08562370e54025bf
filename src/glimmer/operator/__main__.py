"""``python -m glimmer.operator run ...``: the operator's process (what ``glimmer operator run``
starts, and what a Deployment's container runs). Bad input exits 2 with the reason; so does a
missing ``k8s`` extra, naming how to install it."""

from __future__ import annotations

import signal
import sys
from collections.abc import Sequence

from glimmer.operator.options import K8S_EXTRA, UsageError, missing_extra, parse

USAGE = (
    "usage: python -m glimmer.operator run [--kubeconfig K] [--namespace N | --all-namespaces] "
    "[--standalone | --peering NAME] [--liveness URL]"
)


def _exit_on_term(signum: int, frame: object) -> None:
    raise SystemExit(0)


def main(argv: Sequence[str] | None = None) -> int:
    # SIGTERM before kopf has installed its own handlers (while importing and connecting) is
    # a clean stop too; kopf replaces this handler once its loop runs.
    signal.signal(signal.SIGTERM, _exit_on_term)
    try:
        options = parse(sys.argv[1:] if argv is None else argv)
    except UsageError as e:
        print(f"error: {e}\n{USAGE}", file=sys.stderr)
        return 2
    missing = missing_extra()
    if missing:
        print(
            f"error: the operator needs {', '.join(missing)} (the k8s extra): {K8S_EXTRA}",
            file=sys.stderr,
        )
        return 2
    from glimmer.operator.fingerprints import NoNamespace
    from glimmer.operator.main import run

    try:
        run(options)
    except NoNamespace as e:  # §1.6: the operator refuses to start, saying why
        print(f"error: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
