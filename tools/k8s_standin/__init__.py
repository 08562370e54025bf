"""Kubernetes stand-ins for the operator's tests and ``make demo-k8s`` (issue 16): an API
server and a kubelet that runs each scheduled pod's command as a local process. Repository
test support, not part of the wheel.

The API side: ``api`` (HTTP: ``StandInAPI``, ``running_api``, ``serve``), ``background`` (the
API in a thread of its own), ``emulator`` (what each verb does), ``store`` (objects, the
resourceVersion counter, watch history), ``watches``, ``kinds`` (per-kind defaults and
immutable fields), ``resources`` (served types, CRDs), ``discovery``, ``openapi``,
``selectors``, ``patching``, ``validation`` with ``schema_check``, ``cel`` and ``pod_schema``,
``tables`` (kubectl's Table output), ``logs``, ``faults`` (``conflict_every``), ``journal``,
``kubeconfig``, ``errors``.
"""
