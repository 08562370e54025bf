"""kopf's settings for the operator: what kopf may write, and what it watches.

* **Progress and diff-base in annotations** under glimmer's own prefix: kopf's default keeps
  handler progress in ``status.kopf``, a field the BurnInRun schema does not declare (the API
  server prunes or refuses it). The operator registers no change-detecting handler today, so
  kopf writes neither — this only makes sure a later one cannot break the schema.
* **No kopf finalizer**: kopf adds its finalizer only for a handler that needs one, and none
  here does (:mod:`.runs`); the run's finalizer is the engine's, ``cordon-cleanup``.
* **No Events posted from kopf's log**: the operator's writes are the engine's alone (the
  RBAC names exactly those verbs).
* **Runner pods only**: the pod watch asks the server for pods with the run label, so a
  cluster's other pods never reach the operator.
"""

from __future__ import annotations

import kopf

from glimmer.engine.keys import DOMAIN, RUN_LABEL

KOPF_PREFIX = f"kopf.{DOMAIN}"


def is_pods(resource: kopf.Resource) -> bool:
    return resource.group == "" and resource.plural == "pods"


def operator_settings() -> kopf.OperatorSettings:
    settings = kopf.OperatorSettings()
    settings.persistence.progress_storage = kopf.AnnotationsProgressStorage(prefix=KOPF_PREFIX)
    settings.persistence.diffbase_storage = kopf.AnnotationsDiffBaseStorage(prefix=KOPF_PREFIX)
    settings.posting.enabled = False
    settings.watching.label_selectors[is_pods] = RUN_LABEL
    return settings
