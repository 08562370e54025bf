"""The subset of the core/v1 Pod schema the stand-in checks every Pod write against.

Depth: every field a runner pod, its kubelet and a controller write — metadata is checked by
``validation``; here the spec (containers with command, args, env, ports, resources, probes,
mounts, security context; volumes; placement: nodeName, nodeSelector, tolerations, affinity as
an object; hostname/subdomain; restart policy; deadlines) and the status (phase, conditions,
container statuses, IPs). Types are exact and ``null`` is refused everywhere; enums are the
API's. Fields outside the subset are accepted untyped (a real server would drop unknown ones).
"""

from __future__ import annotations

from typing import Any

_DNS_LABEL = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$"
_QUANTITY = r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+|[KMGTPE]i|[mkMGTPE])?$"


def _obj(props: dict[str, Any] | None = None, required: list[str] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"type": "object"}
    if props:
        out["properties"] = props
    if required:
        out["required"] = required
    return out


def _arr(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


_STR: dict[str, Any] = {"type": "string"}
_INT: dict[str, Any] = {"type": "integer"}
_BOOL: dict[str, Any] = {"type": "boolean"}
_STRMAP: dict[str, Any] = {"type": "object", "additionalProperties": _STR}
_QTY: dict[str, Any] = {
    "anyOf": [{"type": "integer"}, {"type": "number"}, {"type": "string", "pattern": _QUANTITY}]
}
_PORT: dict[str, Any] = {"type": "integer", "minimum": 1, "maximum": 65535}
_INT_OR_STR: dict[str, Any] = {"anyOf": [_INT, _STR]}

_ENV_VAR = _obj(
    {
        "name": {"type": "string", "pattern": r"^[-._a-zA-Z][-._a-zA-Z0-9]*$"},
        "value": _STR,
        "valueFrom": _obj(
            {
                "fieldRef": _obj({"fieldPath": _STR, "apiVersion": _STR}, ["fieldPath"]),
                "configMapKeyRef": _obj({"name": _STR, "key": _STR, "optional": _BOOL}, ["key"]),
                "secretKeyRef": _obj({"name": _STR, "key": _STR, "optional": _BOOL}, ["key"]),
                "resourceFieldRef": _obj({"resource": _STR, "containerName": _STR}, ["resource"]),
            }
        ),
    },
    ["name"],
)

_PROBE = _obj(
    {
        "exec": _obj({"command": _arr(_STR)}),
        "tcpSocket": _obj({"port": _INT_OR_STR, "host": _STR}, ["port"]),
        "httpGet": _obj(
            {"port": _INT_OR_STR, "path": _STR, "host": _STR, "scheme": _STR}, ["port"]
        ),
        "initialDelaySeconds": _INT,
        "periodSeconds": {"type": "integer", "minimum": 1},
        "timeoutSeconds": {"type": "integer", "minimum": 1},
        "successThreshold": {"type": "integer", "minimum": 1},
        "failureThreshold": {"type": "integer", "minimum": 1},
    }
)

_SECURITY = _obj(
    {
        "runAsUser": _INT,
        "runAsGroup": _INT,
        "runAsNonRoot": _BOOL,
        "privileged": _BOOL,
        "readOnlyRootFilesystem": _BOOL,
        "allowPrivilegeEscalation": _BOOL,
        "capabilities": _obj({"add": _arr(_STR), "drop": _arr(_STR)}),
    }
)

_CONTAINER = _obj(
    {
        "name": {"type": "string", "pattern": _DNS_LABEL, "maxLength": 63},
        "image": {"type": "string", "minLength": 1},
        "command": _arr(_STR),
        "args": _arr(_STR),
        "workingDir": _STR,
        "env": _arr(_ENV_VAR),
        "envFrom": _arr(_obj()),
        "ports": _arr(
            _obj(
                {
                    "containerPort": _PORT,
                    "hostPort": _PORT,
                    "name": {"type": "string", "maxLength": 15},
                    "protocol": {"enum": ["TCP", "UDP", "SCTP"]},
                },
                ["containerPort"],
            )
        ),
        "resources": _obj(
            {
                "limits": {"type": "object", "additionalProperties": _QTY},
                "requests": {"type": "object", "additionalProperties": _QTY},
            }
        ),
        "volumeMounts": _arr(
            _obj(
                {"name": _STR, "mountPath": _STR, "readOnly": _BOOL, "subPath": _STR},
                ["name", "mountPath"],
            )
        ),
        "readinessProbe": _PROBE,
        "livenessProbe": _PROBE,
        "startupProbe": _PROBE,
        "securityContext": _SECURITY,
        "imagePullPolicy": {"enum": ["Always", "Never", "IfNotPresent"]},
        "terminationMessagePath": _STR,
        "terminationMessagePolicy": {"enum": ["File", "FallbackToLogsOnError"]},
        "stdin": _BOOL,
        "tty": _BOOL,
    },
    ["name", "image"],
)

_TOLERATION = _obj(
    {
        "key": _STR,
        "operator": {"enum": ["Exists", "Equal"]},
        "value": _STR,
        "effect": {"enum": ["NoSchedule", "PreferNoSchedule", "NoExecute", ""]},
        "tolerationSeconds": _INT,
    }
)

_VOLUME = _obj(
    {
        "name": {"type": "string", "pattern": _DNS_LABEL, "maxLength": 63},
        "hostPath": _obj({"path": _STR, "type": _STR}, ["path"]),
        "emptyDir": _obj({"medium": _STR, "sizeLimit": _QTY}),
        "configMap": _obj({"name": _STR, "optional": _BOOL, "items": _arr(_obj())}),
        "secret": _obj({"secretName": _STR, "optional": _BOOL}),
    },
    ["name"],
)

_CONDITION = _obj(
    {
        "type": _STR,
        "status": {"enum": ["True", "False", "Unknown"]},
        "reason": _STR,
        "message": _STR,
        "lastTransitionTime": {"type": "string", "format": "date-time"},
        "lastProbeTime": {"type": "string", "format": "date-time"},
    },
    ["type", "status"],
)

_STATE_TIMES = {
    "startedAt": {"type": "string", "format": "date-time"},
    "finishedAt": {"type": "string", "format": "date-time"},
}
_CONTAINER_STATE = _obj(
    {
        "waiting": _obj({"reason": _STR, "message": _STR}),
        "running": _obj({"startedAt": _STATE_TIMES["startedAt"]}),
        "terminated": _obj(
            {"exitCode": _INT, "signal": _INT, "reason": _STR, "message": _STR, **_STATE_TIMES},
            ["exitCode"],
        ),
    }
)

_CONTAINER_STATUS = _obj(
    {
        "name": _STR,
        "ready": _BOOL,
        "started": _BOOL,
        "restartCount": _INT,
        "image": _STR,
        "imageID": _STR,
        "containerID": _STR,
        "state": _CONTAINER_STATE,
        "lastState": _CONTAINER_STATE,
    },
    ["name", "ready", "restartCount"],
)

POD_SCHEMA: dict[str, Any] = _obj(
    {
        "apiVersion": {"enum": ["v1"]},
        "kind": {"enum": ["Pod"]},
        "metadata": _obj(),
        "spec": _obj(
            {
                "containers": {**_arr(_CONTAINER), "minItems": 1},
                "initContainers": _arr(_CONTAINER),
                "volumes": _arr(_VOLUME),
                "restartPolicy": {"enum": ["Always", "OnFailure", "Never"]},
                "nodeName": _STR,
                "nodeSelector": _STRMAP,
                "tolerations": _arr(_TOLERATION),
                "affinity": _obj(),
                "hostname": {"type": "string", "pattern": _DNS_LABEL, "maxLength": 63},
                "subdomain": {"type": "string", "pattern": _DNS_LABEL, "maxLength": 63},
                "serviceAccountName": _STR,
                "automountServiceAccountToken": _BOOL,
                "terminationGracePeriodSeconds": {"type": "integer", "minimum": 0},
                "activeDeadlineSeconds": {"type": "integer", "minimum": 1},
                "priorityClassName": _STR,
                "schedulerName": _STR,
                "dnsPolicy": {
                    "enum": ["ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"]
                },
                "hostNetwork": _BOOL,
                "hostPID": _BOOL,
                "hostIPC": _BOOL,
                "securityContext": _obj(
                    {"runAsUser": _INT, "runAsGroup": _INT, "fsGroup": _INT, "runAsNonRoot": _BOOL}
                ),
                "enableServiceLinks": _BOOL,
            },
            ["containers"],
        ),
        "status": _obj(
            {
                "phase": {"enum": ["Pending", "Running", "Succeeded", "Failed", "Unknown"]},
                "conditions": _arr(_CONDITION),
                "containerStatuses": _arr(_CONTAINER_STATUS),
                "initContainerStatuses": _arr(_CONTAINER_STATUS),
                "podIP": _STR,
                "podIPs": _arr(_obj({"ip": _STR}, ["ip"])),
                "hostIP": _STR,
                "startTime": {"type": "string", "format": "date-time"},
                "reason": _STR,
                "message": _STR,
                "qosClass": _STR,
            }
        ),
    },
    ["spec"],
)
