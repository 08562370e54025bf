"""``python -m tools.coverage --write docs/fault-coverage.md`` (from the repository root):
regenerate the fault-coverage document through the engine on the simulator backend."""

from __future__ import annotations

import sys

from tools.coverage.doc import main
from tools.coverage.engine import ENGINE

if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:], ENGINE))
