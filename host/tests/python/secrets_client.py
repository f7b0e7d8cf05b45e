"""The official Python client (`kubernetes` on PyPI) with Secrets: one created with
`string_data` comes back with `data` only (base64, `type` defaulted to `Opaque`); a TLS Secret
without its key is an `ApiException` 422 naming `data[tls.key]`; the `type` field selector;
a replace; a delete. Usage: secrets_client.py URL (not secrets.py: that name would shadow the standard
library's `secrets`, which the client imports). Exits non-zero with the failing step on stderr."""

import base64
import json
import sys

from kubernetes import client
from kubernetes.client.rest import ApiException

url = sys.argv[1]
cfg = client.Configuration()
cfg.host = url
timeout = 30
api = client.ApiClient(cfg)
core = client.CoreV1Api(api)


def b64(s):
    return base64.b64encode(s.encode()).decode()


core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="py")), _request_timeout=timeout)
created = core.create_namespaced_secret(
    "py",
    client.V1Secret(metadata=client.V1ObjectMeta(name="db"), string_data={"password": "s3cr3t"}),
    _request_timeout=timeout,
)
assert created.type == "Opaque", created
assert created.data == {"password": b64("s3cr3t")}, created
assert created.string_data is None, created

read = core.read_namespaced_secret("db", "py", _request_timeout=timeout)
assert base64.b64decode(read.data["password"]) == b"s3cr3t", read

try:
    core.create_namespaced_secret(
        "py",
        client.V1Secret(
            metadata=client.V1ObjectMeta(name="web"),
            type="kubernetes.io/tls",
            string_data={"tls.crt": "x"},
        ),
        _request_timeout=timeout,
    )
    raise SystemExit("a TLS Secret without tls.key was created")
except ApiException as e:
    assert e.status == 422, e
    body = json.loads(e.body)
    assert body["reason"] == "Invalid", body
    causes = [(c["reason"], c["field"]) for c in body["details"]["causes"]]
    assert causes == [("FieldValueRequired", "data[tls.key]")], causes

core.create_namespaced_secret(
    "py",
    client.V1Secret(
        metadata=client.V1ObjectMeta(name="login"),
        type="kubernetes.io/basic-auth",
        data={"username": b64("admin")},
    ),
    _request_timeout=timeout,
)
basic = core.list_namespaced_secret(
    "py", field_selector="type=kubernetes.io/basic-auth", _request_timeout=timeout
)
assert [s.metadata.name for s in basic.items] == ["login"], basic

read.data["password"] = b64("changed")
read.api_version = None
read.kind = None
replaced = core.replace_namespaced_secret("db", "py", read, _request_timeout=timeout)
assert replaced.data["password"] == b64("changed"), replaced

core.delete_namespaced_secret("db", "py", _request_timeout=timeout)
left = core.list_namespaced_secret("py", _request_timeout=timeout)
assert [s.metadata.name for s in left.items] == ["login"], left
print("ok")
