"""Engine passes, one at a time, on one worker thread of their own.

The engine is synchronous and its memory (busy sets, node infos, rivals) is shared across runs
and not written for concurrent passes, so every pass of this process — a run's daemon, a
deletion — goes through one single-threaded executor: two passes never interleave, and kopf's
event loop never blocks on the API calls a pass makes. Passes are short (one read of the
world, a few writes), so one thread is not a bottleneck until a pass takes longer than the
gap between wakes; the bench (bench/operator_pass.py) measures that.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

from glimmer.engine.reconciler import Engine
from glimmer.engine.wake import Outcome

log = logging.getLogger("glimmer.operator.passes")

RETRY_FIRST = 0.5  # seconds after a failed pass (a 409 is usually gone at once)
RETRY_MAX = 30.0


def retry_after(failures: int) -> float:
    """The wait after ``failures`` failed passes in a row: doubling from RETRY_FIRST, capped."""
    return float(min(RETRY_MAX, RETRY_FIRST * 2 ** max(0, failures - 1)))


class Passes:
    """Runs ``engine``'s passes on its own thread; awaited from kopf's loop."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="glimmer-pass")
        self._draining = threading.Event()

    async def reconcile(self, namespace: str, name: str) -> Outcome:
        """One pass over ``namespace/name``; what the engine raises is raised here."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._executor, self._pass, namespace, name)

    def _pass(self, namespace: str, name: str) -> Outcome:
        if self._draining.is_set():
            return Outcome(None)  # stopping: the next leader makes this pass
        return self.engine.reconcile(namespace, name)

    def drain(self, timeout: float) -> bool:
        """Make no new pass, and wait up to ``timeout`` seconds for the one in flight: called
        before this replica gives up the lead, so that its last pass never overlaps the next
        leader's first. True when nothing is in flight any more."""
        self._draining.set()
        try:
            self._executor.submit(lambda: None).result(timeout=timeout)
        except FutureTimeout:
            return False
        return True

    async def attempt(self, namespace: str, name: str, failures: int) -> tuple[Outcome, int]:
        """One pass whose failure is logged, not raised: the outcome (a retry after a failure)
        and the count of failures in a row."""
        try:
            outcome = await self.reconcile(namespace, name)
        except Exception:  # any failure: the status is the checkpoint, the next pass resumes
            failures += 1
            wait = retry_after(failures)
            log.warning(
                "pass over %s/%s failed; retry in %.1f s", namespace, name, wait, exc_info=True
            )
            return Outcome(wait), failures
        return outcome, 0

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)
