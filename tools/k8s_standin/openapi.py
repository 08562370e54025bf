"""``/openapi/v2``: an OpenAPI document with no definitions, so that ``kubectl apply`` and
``kubectl create`` run with their default ``--validate=true``.

kubectl 1.20 fetches it as gnostic protobuf and validates each object against the schema of its
kind only when the document has one; with none, validation is left to the server — which is
how the stand-in validates (CRD schemas, the Pod subset), as a real API server does for custom
resources. The protobuf is written by hand: three fields, no protobuf library needed.
"""

from __future__ import annotations

import json

from tools.k8s_standin.discovery import SERVER_VERSION

PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"
TITLE = "glimmer Kubernetes API stand-in"


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited protobuf field (wire type 2)."""
    size, length = bytearray(), len(payload)
    while True:
        byte = length & 0x7F
        length >>= 7
        size.append(byte | (0x80 if length else 0))
        if not length:
            break
    return bytes([(number << 3) | 2]) + bytes(size) + payload


def document_protobuf() -> bytes:
    """openapi_v2.Document{swagger: "2.0", info: {title, version}, paths: {}}."""
    info = _field(1, TITLE.encode()) + _field(2, SERVER_VERSION["gitVersion"].encode())
    return _field(1, b"2.0") + _field(2, info) + _field(8, b"")


def document_json() -> bytes:
    doc = {
        "swagger": "2.0",
        "info": {"title": TITLE, "version": SERVER_VERSION["gitVersion"]},
        "paths": {},
        "definitions": {},
    }
    return json.dumps(doc).encode()
