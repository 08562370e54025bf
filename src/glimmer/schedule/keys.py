"""Keys a schedule writes on the runs it creates (specs/burnin.md Appendix B) and Appendix A's
schedule constants."""

from __future__ import annotations

DOMAIN = "burnin.glimmer.ai"
SCHEDULE_LABEL = f"{DOMAIN}/schedule"
SCHEDULED_AT_ANNOTATION = f"{DOMAIN}/scheduled-at"

MAX_TICK_SCAN = 1000  # ticks walked per reconcile; beyond this the cursor resyncs to now
DEFAULT_SUCCESSFUL_HISTORY = 3
DEFAULT_FAILED_HISTORY = 10
MIN_REQUEUE_SECONDS = 1.0
INT32_MAX = 2**31 - 1
RUN_NAME_PREFIX_MAX = 200

SCHEDULE_VALID = "ScheduleValid"
REASON_PARSED = "Parsed"
REASON_INVALID = "InvalidSchedule"
