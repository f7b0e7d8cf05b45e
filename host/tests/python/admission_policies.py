"""The official Python client (`kubernetes` on PyPI) with MutatingAdmissionPolicies: a policy
and its binding created through `AdmissionregistrationV1Api` with typed models (kube's defaults
read back), enforced at once — a ConfigMap created through `CoreV1Api` comes back with the label
the policy's apply configuration sets —, and a policy whose JSON patch cannot apply refusing a
create as `ApiException` 403 with kube's reason and message. Usage: admission_policies.py URL.
Exits non-zero with the failing step on stderr."""

import json
import sys

from kubernetes import client
from kubernetes.client.rest import ApiException

url = sys.argv[1]
cfg = client.Configuration()
cfg.host = url
api = client.ApiClient(cfg)
admission = client.AdmissionregistrationV1Api(api)
core = client.CoreV1Api(api)


def policy(name, mutation, object_selector=None):
    rules = [
        client.V1NamedRuleWithOperations(
            api_groups=[""], api_versions=["v1"], operations=["CREATE"], resources=["configmaps"]
        )
    ]
    admission.create_mutating_admission_policy(
        client.V1MutatingAdmissionPolicy(
            metadata=client.V1ObjectMeta(name=name),
            spec=client.V1MutatingAdmissionPolicySpec(
                match_constraints=client.V1MatchResources(resource_rules=rules),
                reinvocation_policy="Never",
                mutations=[mutation],
            ),
        )
    )
    selector = None
    if object_selector:
        selector = client.V1MatchResources(
            object_selector=client.V1LabelSelector(match_labels=object_selector)
        )
    admission.create_mutating_admission_policy_binding(
        client.V1MutatingAdmissionPolicyBinding(
            metadata=client.V1ObjectMeta(name=name),
            spec=client.V1MutatingAdmissionPolicyBindingSpec(
                policy_name=name, match_resources=selector
            ),
        )
    )


policy(
    "py-label",
    client.V1Mutation(
        patch_type="ApplyConfiguration",
        apply_configuration=client.V1ApplyConfiguration(
            expression='Object{metadata: Object.metadata{labels: {"via": "python"}}}'
        ),
    ),
)
read = admission.read_mutating_admission_policy("py-label")
assert read.spec.failure_policy == "Fail", read.spec
assert read.spec.match_constraints.match_policy == "Equivalent", read.spec

cm = core.create_namespaced_config_map(
    "default",
    client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="py", labels={"team": "a"}), data={"k": "v"}
    ),
)
assert cm.metadata.labels == {"team": "a", "via": "python"}, cm.metadata.labels
assert cm.data == {"k": "v"}, cm.data

policy(
    "py-broken",
    client.V1Mutation(
        patch_type="JSONPatch",
        json_patch=client.V1JSONPatch(expression='[JSONPatch{op: "remove", path: "/data/missing"}]'),
    ),
    object_selector={"broken": "yes"},
)
try:
    core.create_namespaced_config_map(
        "default",
        client.V1ConfigMap(metadata=client.V1ObjectMeta(name="refused", labels={"broken": "yes"})),
    )
    sys.exit("a create the broken policy matches was admitted")
except ApiException as e:
    status = json.loads(e.body)
    assert e.status == 403, (e.status, e.body)
    assert status["reason"] == "Invalid", status
    assert status["message"].startswith(
        "policy 'py-broken' with binding 'py-broken' denied request: JSON Patch: "
    ), status

print("ok")
