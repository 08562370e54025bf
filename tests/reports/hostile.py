"""A run whose every free-text field tries to break out of the format it is written into."""

from __future__ import annotations

from conftest import load_run
from glimmer.api.result import ArtifactRef
from glimmer.api.run import BurnInRun

EVIL = "<script>alert(1)</script> | `tick` & \"q\" 'a' <img src=https://evil.example/x.png>"


def hostile_run() -> BurnInRun:
    """pair-failed, with script, markup, pipes and URLs in names, messages, metrics and
    evidence."""
    run = load_run("pair-failed")
    assert run.status is not None and run.status.results
    first = run.status.results[0]
    first.message = EVIL
    first.metrics = {**(first.metrics or {}), "note": EVIL}
    first.artifacts = [ArtifactRef(name=EVIL, dropped=EVIL)]
    node = run.status.results[1]
    node.nodes = [EVIL, "nvl-node-0004"]
    if first.violations:
        first.violations[0].reason = EVIL
    return run
