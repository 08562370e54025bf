"""Kubernetes stand-ins for the operator's tests and ``make demo-k8s`` (issue 16): an API
server (``api``: resourceVersion, conflicts, watches, selectors, status subresource, CRD schema
validation, Table output, pod logs) and a kubelet that runs each scheduled pod's command as a
local process. Repository test support, not part of the wheel."""
