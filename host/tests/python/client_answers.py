"""The official Python client (`kubernetes` on PyPI) against a running server: the requests
it sends as it sends them — `/version/` and `/apis/` with a trailing slash, typed models
serialized without apiVersion/kind, a watch with a timeout. Usage: client_answers.py URL.
Exits non-zero with the failing step on stderr."""

import sys

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
print("ok")
