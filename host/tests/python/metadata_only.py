"""The official Python client (`kubernetes` on PyPI) asking for metadata only, as client-go's
metadata client does: `_preload_content=False` with `Accept:
application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1` (`_headers`) on
`list_namespaced_secret`, and `as=PartialObjectMetadata` on `read_namespaced_secret` and on a
watch. The raw JSON must be kube's
PartialObjectMetadata(List) shape with no `data` or `type` (a client would decode a full list
too, so the shape is checked on the bytes). Usage: metadata_only.py ADMIN_KUBECONFIG. Exits
non-zero with the failing step on stderr."""

import json
import sys

from kubernetes import client, config
from kubernetes.watch.watch import iter_resp_lines

kubeconfig = sys.argv[1]
timeout = 30
POM_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
POM = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"

cfg = client.Configuration()
config.load_kube_config(config_file=kubeconfig, client_configuration=cfg)
api = client.ApiClient(cfg)
core = client.CoreV1Api(api)

ns = "py-metadata"
core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)), _request_timeout=timeout)
for i in range(3):
    core.create_namespaced_secret(
        ns,
        client.V1Secret(
            metadata=client.V1ObjectMeta(name=f"s{i}", labels={"app": "py"}),
            string_data={"password": "hunter2"},
        ),
        _request_timeout=timeout,
    )


listed = json.loads(
    core.list_namespaced_secret(ns, _preload_content=False, _headers={"Accept": POM_LIST}, _request_timeout=timeout).data
)
assert listed["kind"] == "PartialObjectMetadataList", listed
assert listed["apiVersion"] == "meta.k8s.io/v1", listed
assert listed["metadata"]["resourceVersion"], listed
assert sorted(i["metadata"]["name"] for i in listed["items"]) == ["s0", "s1", "s2"], listed
for item in listed["items"]:
    assert item["kind"] == "PartialObjectMetadata" and item["apiVersion"] == "meta.k8s.io/v1", item
    assert set(item) == {"kind", "apiVersion", "metadata"}, item
    assert item["metadata"]["labels"] == {"app": "py"}, item
# The value, as sent or as stored (base64), nowhere (managedFields name the key, as kube's do).
assert "hunter2" not in json.dumps(listed) and "aHVudGVyMg==" not in json.dumps(listed), listed

one = json.loads(
    core.read_namespaced_secret("s0", ns, _preload_content=False, _headers={"Accept": POM}, _request_timeout=timeout).data
)
assert one["kind"] == "PartialObjectMetadata" and set(one) == {"kind", "apiVersion", "metadata"}, one

# A watch from the list's resourceVersion sees a new Secret as metadata only.
core.create_namespaced_secret(
    ns,
    client.V1Secret(metadata=client.V1ObjectMeta(name="s3"), string_data={"password": "hunter3"}),
    _request_timeout=timeout,
)
stream = core.list_namespaced_secret(
    ns,
    watch=True,
    resource_version=listed["metadata"]["resourceVersion"],
    _preload_content=False,
    _headers={"Accept": POM},
    _request_timeout=timeout,
)
line = json.loads(next(iter_resp_lines(stream)))
stream.release_conn()
assert line["type"] == "ADDED", line
assert line["object"]["kind"] == "PartialObjectMetadata", line
assert line["object"]["metadata"]["name"] == "s3", line
assert set(line["object"]) == {"kind", "apiVersion", "metadata"}, line
print("ok")
