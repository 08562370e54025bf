"""Names and limits of NodeFingerprints (specs/burnin.md §1.6, §7.2, Appendices A and B)."""

from __future__ import annotations

DOMAIN = "burnin.glimmer.ai"
NODE_LABEL = f"{DOMAIN}/node"
# A human's acknowledgement of drift: the digest they accept as the node's new identity.
ACKNOWLEDGED_DIGEST = f"{DOMAIN}/acknowledged-digest"

SCHEME = "v1"
MAX_GPUS = 64  # maxGPUsPerFingerprint

DRIFTED = "Drifted"
BASELINE_CAPTURED = "BaselineCaptured"
DIGEST_STABLE = "DigestStable"
DIGEST_SCHEME_CHANGED = "DigestSchemeChanged"
DIGEST_CHANGED = "DigestChanged"
DRIFT_ACKNOWLEDGED = "DriftAcknowledged"
HARDWARE_DRIFT = "HardwareDrift"
CONDITION_MESSAGE_MAX = 1024
