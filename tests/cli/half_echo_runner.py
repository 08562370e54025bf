"""A test runner that says which half it was given: it prints the rendezvous variables it sees
as metrics (``role``, ``peer_host``, ``peer_node``, ``rank``, ``nranks``, ``root_host``) and
passes, or Skips with its declared marker when it is given no role and no rank."""

from __future__ import annotations

import os
import sys

NAMES = {
    "BURNIN_ROLE": "role",
    "BURNIN_PEER_HOST": "peer_host",
    "BURNIN_PEER_NODE": "peer_node",
    "BURNIN_RANK": "rank",
    "BURNIN_NRANKS": "nranks",
    "BURNIN_ROOT_HOST": "root_host",
    "BURNIN_ROOT_NODE": "root_node",
}


def main() -> int:
    env = os.environ
    if "BURNIN_ROLE" not in env and "BURNIN_RANK" not in env:
        print("HALF_ECHO_SKIP: no BURNIN_ROLE and no BURNIN_RANK: not a half of anything")
        return 2
    for name, key in NAMES.items():
        if name in env:
            print(f"{key}={env[name]}")
    print("echoed=1")
    print("HALF_ECHO_PASS")
    return 0


if __name__ == "__main__":
    sys.exit(main())
