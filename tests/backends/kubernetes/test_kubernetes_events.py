"""Events about an object (backends/kubernetes/events.py), over HTTP against the API stand-in:
a core/v1 Event naming the object it is about, posted once however often the same notice is
posted."""

from __future__ import annotations

from datetime import UTC, datetime

from lightkube import Client

from glimmer.backends.kubernetes.events import WARNING, Involved, event_name, post_event
from glimmer.backends.kubernetes.resources import EVENTS, as_dict

NODE = Involved("burnin.glimmer.ai/v1alpha1", "NodeFingerprint", "default", "n1", "uid-1")
AT = datetime(2026, 12, 2, 1, 2, 3, tzinfo=UTC)


def test_an_event_names_its_object_and_the_same_notice_is_posted_once(client: Client) -> None:
    post_event(client, NODE, "HardwareDrift", "kernel 6.8 -> 6.9", kind=WARNING, at=AT)
    post_event(client, NODE, "HardwareDrift", "kernel 6.8 -> 6.9", kind=WARNING, at=AT)
    (event,) = [as_dict(e) for e in client.list(EVENTS, namespace="default")]
    assert event["involvedObject"] == {
        "apiVersion": NODE.api_version,
        "kind": "NodeFingerprint",
        "namespace": "default",
        "name": "n1",
        "uid": "uid-1",
    }
    assert (event["reason"], event["type"], event["message"]) == (
        "HardwareDrift",
        "Warning",
        "kernel 6.8 -> 6.9",
    )
    assert event["lastTimestamp"] == "2026-12-02T01:02:03Z"


def test_a_different_notice_is_a_different_event(client: Client) -> None:
    post_event(client, NODE, "HardwareDrift", "kernel 6.8 -> 6.9", at=AT)
    post_event(client, NODE, "HardwareDrift", "osImage a -> b", at=AT)
    assert len(list(client.list(EVENTS, namespace="default"))) == 2
    assert event_name(NODE, "r", "a") != event_name(NODE, "r", "b")
    assert event_name(NODE, "r", "a").startswith("n1.")
