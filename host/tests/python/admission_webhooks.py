"""The official Python client (`kubernetes` on PyPI) with admission webhooks by URL: a
ValidatingWebhookConfiguration and a MutatingWebhookConfiguration created through
`AdmissionregistrationV1Api` with typed models and read back typed (kube's defaults), a
ConfigMap created through `CoreV1Api` mutated by the webhook, and one the validating webhook
denies refused as `ApiException` 403 with the webhook's reason and kube's message.
Usage: admission_webhooks.py URL MUTATE_URL VALIDATE_URL CA_BUNDLE (base64). Exits non-zero
with the failing step on stderr."""

import json
import sys

from kubernetes import client
from kubernetes.client.rest import ApiException

url, mutate_url, validate_url, ca_bundle = sys.argv[1:5]
cfg = client.Configuration()
cfg.host = url
api = client.ApiClient(cfg)
admission = client.AdmissionregistrationV1Api(api)
core = client.CoreV1Api(api)

rules = [
    client.V1RuleWithOperations(
        api_groups=[""], api_versions=["v1"], operations=["CREATE"], resources=["configmaps"]
    )
]
admission.create_mutating_webhook_configuration(
    client.V1MutatingWebhookConfiguration(
        metadata=client.V1ObjectMeta(name="py-team"),
        webhooks=[
            client.V1MutatingWebhook(
                name="team.python.example.com",
                client_config=client.AdmissionregistrationV1WebhookClientConfig(
                    url=mutate_url, ca_bundle=ca_bundle
                ),
                rules=rules,
                side_effects="None",
                admission_review_versions=["v1"],
            )
        ],
    )
)
admission.create_validating_webhook_configuration(
    client.V1ValidatingWebhookConfiguration(
        metadata=client.V1ObjectMeta(name="py-checks"),
        webhooks=[
            client.V1ValidatingWebhook(
                name="deny.python.example.com",
                client_config=client.AdmissionregistrationV1WebhookClientConfig(
                    url=validate_url, ca_bundle=ca_bundle
                ),
                rules=rules,
                side_effects="None",
                admission_review_versions=["v1"],
            )
        ],
    )
)

# Read back typed, with kube's defaults.
listed = admission.list_mutating_webhook_configuration().items
hook = [c for c in listed if c.metadata.name == "py-team"][0].webhooks[0]
assert hook.failure_policy == "Fail", hook
assert hook.match_policy == "Equivalent", hook
assert hook.reinvocation_policy == "Never", hook
assert hook.timeout_seconds == 10, hook
assert hook.rules[0].scope == "*", hook
read = admission.read_validating_webhook_configuration("py-checks")
assert read.webhooks[0].namespace_selector is not None, read
assert read.metadata.generation == 1, read.metadata

cm = core.create_namespaced_config_map(
    "default", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py"), data={"k": "v"})
)
assert cm.metadata.labels == {"team": "platform"}, cm.metadata.labels

try:
    core.create_namespaced_config_map(
        "default",
        client.V1ConfigMap(metadata=client.V1ObjectMeta(name="refused"), data={"forbidden": "1"}),
    )
    sys.exit("a create the validating webhook denies was admitted")
except ApiException as e:
    status = json.loads(e.body)
    assert e.status == 403, (e.status, e.body)
    assert status["reason"] == "Forbidden", status
    assert status["message"] == (
        'admission webhook "deny.python.example.com" denied the request: '
        "the forbidden key is forbidden"
    ), status

print("ok")
