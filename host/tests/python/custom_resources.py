"""The official Python client (`kubernetes` on PyPI) with CustomResourceDefinitions: a CRD
created through `ApiextensionsV1Api` with typed models, used at once through
`CustomObjectsApi` (no wait), its objects defaulted and pruned, a schema and a CEL refusal as
`ApiException` 422 with kube's causes, `Established` read back typed. Usage:
custom_resources.py URL. Exits non-zero with the failing step on stderr."""

import sys

from kubernetes import client
from kubernetes.client.rest import ApiException

url = sys.argv[1]
cfg = client.Configuration()
cfg.host = url
timeout = 30
api = client.ApiClient(cfg)
ext = client.ApiextensionsV1Api(api)
objects = client.CustomObjectsApi(api)

schema = client.V1JSONSchemaProps(
    type="object",
    properties={
        "spec": client.V1JSONSchemaProps(
            type="object",
            x_kubernetes_validations=[
                client.V1ValidationRule(
                    rule="self.replicas <= self.maxReplicas",
                    message="replicas must not exceed maxReplicas",
                )
            ],
            properties={
                "replicas": client.V1JSONSchemaProps(type="integer", default=1),
                "maxReplicas": client.V1JSONSchemaProps(type="integer", default=10),
                "size": client.V1JSONSchemaProps(type="string", enum=["s", "m"]),
            },
        )
    },
)
crd = client.V1CustomResourceDefinition(
    metadata=client.V1ObjectMeta(name="tools.py.example.com"),
    spec=client.V1CustomResourceDefinitionSpec(
        group="py.example.com",
        scope="Namespaced",
        names=client.V1CustomResourceDefinitionNames(plural="tools", kind="Tool"),
        versions=[
            client.V1CustomResourceDefinitionVersion(
                name="v1",
                served=True,
                storage=True,
                schema=client.V1CustomResourceValidation(open_apiv3_schema=schema),
            )
        ],
    ),
)
created = ext.create_custom_resource_definition(crd, _request_timeout=timeout)
assert created.spec.names.list_kind == "ToolList", created.spec.names
assert created.status.stored_versions == ["v1"], created.status

tool = objects.create_namespaced_custom_object(
    "py.example.com",
    "v1",
    "default",
    "tools",
    {"apiVersion": "py.example.com/v1", "kind": "Tool", "metadata": {"name": "t1"},
     "spec": {"replicas": 2, "unknown": True}},
    _request_timeout=timeout,
)
assert tool["spec"] == {"replicas": 2, "maxReplicas": 10}, tool

try:
    objects.create_namespaced_custom_object(
        "py.example.com",
        "v1",
        "default",
        "tools",
        {"apiVersion": "py.example.com/v1", "kind": "Tool", "metadata": {"name": "t2"},
         "spec": {"replicas": 20, "size": "xl"}},
        _request_timeout=timeout,
    )
    raise AssertionError("an invalid Tool was created")
except ApiException as e:
    assert e.status == 422, e
    body = e.body.decode() if isinstance(e.body, bytes) else e.body
    assert 'spec.size: Unsupported value: \\"xl\\"' in body, body
    assert "replicas must not exceed maxReplicas" in body, body

listed = objects.list_namespaced_custom_object(
    "py.example.com", "v1", "default", "tools", _request_timeout=timeout
)
assert [i["metadata"]["name"] for i in listed["items"]] == ["t1"], listed

got = ext.read_custom_resource_definition("tools.py.example.com", _request_timeout=timeout)
conditions = {c.type: c.status for c in got.status.conditions}
assert conditions == {"NamesAccepted": "True", "Established": "True"}, got.status
assert got.status.accepted_names.kind == "Tool", got.status

objects.delete_namespaced_custom_object(
    "py.example.com", "v1", "default", "tools", "t1", _request_timeout=timeout
)
print("ok")
