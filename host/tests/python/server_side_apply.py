"""Server-side apply through the official Python client's dynamic client (`kubernetes` on
PyPI): two managers apply the same widget field; the second gets kube's 409 as an ApiException
whose body names the field and its manager, then takes it with force. Usage:
server_side_apply.py URL. Exits non-zero with the failing step on stderr."""

import json
import sys

from kubernetes import client, dynamic
from kubernetes.client.rest import ApiException

url = sys.argv[1]
cfg = client.Configuration()
cfg.host = url
api = client.ApiClient(cfg)
dyn = dynamic.DynamicClient(api)
widgets = dyn.resources.get(api_version="example.dev/v1", kind="Widget")


def widget(replicas):
    return {
        "apiVersion": "example.dev/v1",
        "kind": "Widget",
        "metadata": {"name": "py", "namespace": "default"},
        "spec": {"size": "medium", "replicas": replicas},
    }


created = dyn.server_side_apply(
    widgets,
    
    body=widget(3), name="py", namespace="default", field_manager="alice", _request_timeout=30
)
assert created.spec.replicas == 3, created
assert created.metadata.managedFields[0].manager == "alice", created

try:
    dyn.server_side_apply(
    widgets,
    
        body=widget(5), name="py", namespace="default", field_manager="bob", _request_timeout=30
    )
    raise AssertionError("bob's apply should conflict")
except ApiException as e:
    assert e.status == 409, e
    status = json.loads(e.body)
    assert status["reason"] == "Conflict", status
    causes = status["details"]["causes"]
    assert causes == [
        {"type": "FieldManagerConflict", "message": 'conflict with "alice"', "field": ".spec.replicas"}
    ], causes

forced = dyn.server_side_apply(
    widgets,
    
    body=widget(5),
    name="py",
    namespace="default",
    field_manager="bob",
    force_conflicts=True,
    _request_timeout=30,
)
assert forced.spec.replicas == 5, forced
owners = {e["manager"]: e["fieldsV1"] for e in forced.to_dict()["metadata"]["managedFields"]}
# Both applied size with the same value: they share it.
assert owners["bob"] == {"f:spec": {"f:replicas": {}, "f:size": {}}}, owners
assert owners["alice"] == {"f:spec": {"f:size": {}}}, owners
print("ok")
