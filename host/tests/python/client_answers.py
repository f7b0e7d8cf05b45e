"""The official Python client (`kubernetes` on PyPI) against a running server: the requests
it sends as it sends them — `/version/` and `/apis/` with a trailing slash, typed models
serialized without apiVersion/kind, a watch with a timeout, a pod's delete decoded as the
Pod, events published through both Event APIs and found by field selector. Usage:
client_answers.py URL. Exits non-zero with the failing step on stderr."""

import json
import sys
import urllib.error
import urllib.request
from datetime import datetime, timezone

from kubernetes import client, watch

url = sys.argv[1]
cfg = client.Configuration()
cfg.host = url
# Every request bounded, so a server that does not answer fails the script instead of hanging.
timeout = 30
api = client.ApiClient(cfg)

version = client.VersionApi(api).get_code(_request_timeout=timeout)
assert version.major == "1", version

groups = client.ApisApi(api).get_api_versions(_request_timeout=timeout)
assert any(g.name == "example.dev" for g in groups.groups), groups

core = client.CoreV1Api(api)
# Typed models leave apiVersion/kind unset unless the caller sets them.
ns = core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="py")))
assert ns.kind == "Namespace", ns
cm = core.create_namespaced_config_map(
    "py", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="c"), data={"a": "b"})
)
assert cm.data == {"a": "b"}, cm
cm.data["a"] = "c"
cm.api_version = None
cm.kind = None
cm = core.replace_namespaced_config_map("c", "py", cm)
assert cm.data == {"a": "c"}, cm

names = [i.metadata.name for i in core.list_namespaced_config_map("py").items]
assert names == ["c"], names

events = list(
    watch.Watch().stream(
        core.list_namespaced_config_map, "py", timeout_seconds=2, _request_timeout=30
    )
)
assert [e["type"] for e in events] == ["ADDED"], events

# DELETE of a pod answers the Pod (kube's ReturnDeletedObject), decoded as a V1Pod.
pod = client.V1Pod(
    metadata=client.V1ObjectMeta(name="p"),
    spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="nginx")]),
)
core.create_namespaced_pod("py", pod)
gone = core.delete_namespaced_pod("p", "py")
assert isinstance(gone, client.V1Pod) and gone.metadata.name == "p", gone

# Events: a legacy recorder's core/v1 Event and an events.k8s.io/v1 Event.
now = datetime.now(timezone.utc)
about = client.V1ObjectReference(kind="ConfigMap", name="c", namespace="py")
legacy = core.create_namespaced_event(
    "py",
    client.CoreV1Event(
        metadata=client.V1ObjectMeta(name="e1"),
        involved_object=about,
        reason="Changed",
        message="data changed",
        type="Normal",
        count=1,
        first_timestamp=now,
        last_timestamp=now,
        source=client.V1EventSource(component="py-test"),
    ),
)
assert legacy.reason == "Changed", legacy
events_api = client.EventsV1Api(api)
new = events_api.create_namespaced_event(
    "py",
    client.EventsV1Event(
        metadata=client.V1ObjectMeta(name="e2"),
        event_time=now,
        regarding=about,
        reason="Reconciled",
        note="ok",
        action="Reconcile",
        type="Normal",
        reporting_controller="example.dev/py",
        reporting_instance="py-0",
    ),
)
assert new.event_time is not None and new.regarding.name == "c", new
found = core.list_namespaced_event("py", field_selector="involvedObject.name=c")
assert [e.metadata.name for e in found.items] == ["e1"], found
found = events_api.list_namespaced_event("py", field_selector="regarding.name=c")
assert [e.metadata.name for e in found.items] == ["e2"], found
# The strict API refuses what the legacy one accepts: no eventTime (sent raw: the typed
# model will not leave out a required field).
req = urllib.request.Request(
    url + "/apis/events.k8s.io/v1/namespaces/py/events",
    data=json.dumps(
        {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": "e3"},
            "regarding": {"kind": "ConfigMap", "name": "c", "namespace": "py"},
            "reason": "X",
            "type": "Normal",
        }
    ).encode(),
    headers={"Content-Type": "application/json"},
    method="POST",
)
try:
    urllib.request.urlopen(req, timeout=timeout)
    raise AssertionError("an events.k8s.io/v1 Event without eventTime was accepted")
except urllib.error.HTTPError as e:
    body = json.loads(e.read())
    assert e.code == 422 and body["details"]["causes"][0]["field"] == "eventTime", body
print("ok")
