"""Labels, annotations and the finalizer of Appendix B, and the timing constants of Appendix A.

Every key the engine writes on a run, a node or an execution is named here once.
"""

from __future__ import annotations

DOMAIN = "burnin.glimmer.ai"

# Run annotations and finalizer.
PLAN_ANNOTATION = f"{DOMAIN}/plan"
PENDING_DELIVERY_ANNOTATION = f"{DOMAIN}/pending-terminal-delivery"
CANCELLING_ANNOTATION = f"{DOMAIN}/cancelling"
FINALIZER = f"{DOMAIN}/cordon-cleanup"
NO_CANCEL_REASON = "cancelled with no reason given"

# Node annotations (the stamp is written strictly before the cordon).
CORDON_OWNER = f"{DOMAIN}/cordon-owner"
PRIOR_UNSCHEDULABLE = f"{DOMAIN}/prior-unschedulable"
HEAT_EXPECTED = f"{DOMAIN}/heat-expected"

# Execution labels and annotation.
RUN_LABEL = f"{DOMAIN}/run"
TEST_LABEL = f"{DOMAIN}/test"
NODE_LABEL = f"{DOMAIN}/node"
ATTEMPT_LABEL = f"{DOMAIN}/attempt"
PAIR_ROLE_LABEL = f"{DOMAIN}/pair-role"
RANK_LABEL = f"{DOMAIN}/rank"

# Node labels the fingerprint keeps.
FINGERPRINT_LABELS = ("nvidia.com/gpu.product", "glimmer.ai/gpu-arch", "glimmer.ai/hw-class")

# Appendix A, in seconds.
SCHEDULING_GRACE = 300  # an execution may stay unscheduled this long; the Group root's extra
DEADLINE_PAD = 120  # activeDeadlineSeconds = execution duration + this
HEAT_PAD = 300  # heat expiry = now + window + this
WAITING_POLL = 30.0  # some execution not yet started
SETTLED_POLL = 300.0  # everything in flight has started
RENDEZVOUS_POLL = 5.0  # waiting for a Pair server / Group root to become Ready
TERMINAL_DELIVERY_RETRY = 300.0
DEFAULT_DURATION = 600
