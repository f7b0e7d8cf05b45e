"""The official Python client (`kubernetes` on PyPI) with a requested service-account token:
an admin client (the server's admin kubeconfig: TLS, client certificate) sets up a namespace, a ServiceAccount `reader`, a Role and
RoleBinding letting it read Secrets there, and a Secret; `create_namespaced_service_account_token`
(the TokenRequest API) returns a token; a second client on the TLS port, verifying the
server's CA and sending only that bearer token, reads the Secret, is refused (403) elsewhere,
and is refused (401) once the ServiceAccount is deleted and created again under the same name.
Usage: service_account_token.py ADMIN_KUBECONFIG. Exits non-zero with the failing
step on stderr."""

import base64
import sys
import time

from kubernetes import client, config
from kubernetes.client.rest import ApiException

kubeconfig = sys.argv[1]
timeout = 30

admin_cfg = client.Configuration()
config.load_kube_config(config_file=kubeconfig, client_configuration=admin_cfg)
assert admin_cfg.host.startswith("https://"), admin_cfg.host
admin = client.ApiClient(admin_cfg)
core = client.CoreV1Api(admin)
rbac = client.RbacAuthorizationV1Api(admin)

ns = "py-token"
core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=ns)), _request_timeout=timeout)
core.create_namespaced_service_account(
    ns, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="reader")), _request_timeout=timeout
)
rbac.create_namespaced_role(
    ns,
    client.V1Role(
        metadata=client.V1ObjectMeta(name="secret-reader"),
        rules=[client.V1PolicyRule(api_groups=[""], resources=["secrets"], verbs=["get", "list"])],
    ),
    _request_timeout=timeout,
)
rbac.create_namespaced_role_binding(
    ns,
    client.V1RoleBinding(
        metadata=client.V1ObjectMeta(name="reader"),
        role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="Role", name="secret-reader"),
        subjects=[client.RbacV1Subject(kind="ServiceAccount", name="reader", namespace=ns)],
    ),
    _request_timeout=timeout,
)
core.create_namespaced_secret(
    ns,
    client.V1Secret(metadata=client.V1ObjectMeta(name="db"), string_data={"password": "s3cr3t"}),
    _request_timeout=timeout,
)


def request_token():
    tr = core.create_namespaced_service_account_token(
        "reader",
        ns,
        client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=600)),
        _request_timeout=timeout,
    )
    assert tr.status.token.count(".") == 2, tr.status
    assert tr.status.expiration_timestamp is not None, tr.status
    return tr.status.token


def as_token(token):
    # The same server and CA as the admin's kubeconfig; no client certificate.
    cfg = client.Configuration()
    cfg.host = admin_cfg.host
    cfg.ssl_ca_cert = admin_cfg.ssl_ca_cert
    cfg.verify_ssl = True
    cfg.api_key = {"authorization": "Bearer " + token}
    return client.CoreV1Api(client.ApiClient(cfg))


token = request_token()
reader = as_token(token)
secret = reader.read_namespaced_secret("db", ns, _request_timeout=timeout)
assert base64.b64decode(secret.data["password"]) == b"s3cr3t", secret
assert [s.metadata.name for s in reader.list_namespaced_secret(ns, _request_timeout=timeout).items] == ["db"]

try:
    reader.list_namespaced_secret("default", _request_timeout=timeout)
    raise SystemExit("reading another namespace's Secrets was allowed")
except ApiException as e:
    assert e.status == 403, e
    assert "system:serviceaccount:py-token:reader" in e.body, e.body

# The ServiceAccount deleted and created again under the same name (a new uid): the old
# token is refused, a new one works.
core.delete_namespaced_service_account("reader", ns, _request_timeout=timeout)
core.create_namespaced_service_account(
    ns, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="reader")), _request_timeout=timeout
)
deadline = time.time() + 20
while True:
    try:
        reader.read_namespaced_secret("db", ns, _request_timeout=timeout)
    except ApiException as e:
        assert e.status == 401, e
        break
    if time.time() > deadline:
        raise SystemExit("the token of the deleted ServiceAccount still authenticates")
    time.sleep(0.2)
fresh = as_token(request_token())
assert fresh.read_namespaced_secret("db", ns, _request_timeout=timeout).metadata.name == "db"
print("ok")
