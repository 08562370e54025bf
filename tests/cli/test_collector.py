"""The console script sets the collector for a long-lived heap; a caller's process keeps its own."""

from __future__ import annotations

import gc
import subprocess
import sys

from glimmer.cli.app import main
from glimmer.cli.collector import OLDER_THRESHOLDS, YOUNG_THRESHOLD


def test_the_console_script_sets_the_young_generation_threshold() -> None:
    code = (
        "import gc, sys\n"
        "from glimmer.cli import app\n"
        "sys.argv = ['glimmer', 'profiles', 'smoke']\n"
        "try:\n"
        "    app.main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(gc.get_threshold())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip().splitlines()[-1] == str((YOUNG_THRESHOLD, *OLDER_THRESHOLDS))


def test_a_caller_that_passes_its_own_arguments_keeps_its_thresholds() -> None:
    before = gc.get_threshold()
    assert main(["--version"]) == 0
    assert main(["profiles", "smoke"]) == 0
    assert gc.get_threshold() == before
