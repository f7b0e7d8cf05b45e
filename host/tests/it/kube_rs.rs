//! kube-rs 5 (`kube::runtime`) against the real server over TLS with the generated admin
//! kubeconfig, as a controller author meets it: the `finalizer()` helper adds its finalizer
//! to an object that has none (its JSON patch tests the missing `/metadata/finalizers`
//! against null), runs the cleanup when the object is deleted and removes the finalizer, so
//! the object goes; the events `Recorder` publishes an `events.k8s.io/v1` Event found by
//! field selector; the `watcher` lists (paged and as a watch-list stream); a `core/v1` Event
//! goes through `Api<Event>`; server-side apply by two managers (`Patch::Apply`, conflict,
//! `force()`). On both stores. A `#[derive(CustomResource)]` type's generated CRD, then
//! `Api<Gadget>` at once. `Api<Secret>` with `string_data`, a field selector and a watcher;
//! the `default` ServiceAccount; a client whose only credential is a token from
//! `create_token_request`.

use crate::common;

use common::server::{Backend, TestServer};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Event as CoreEvent, ObjectReference};
use k8s_openapi::api::events::v1::Event as EventV1;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::runtime::controller::Action;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::finalizer::{finalizer, Event as Finalizer};
use kube::runtime::watcher;
use kube::runtime::WatchStreamExt;
use kube::{Api, Client, Config, Resource, ResourceExt};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

const FINALIZER: &str = "example.dev/cleanup";

async fn client(s: &TestServer) -> Client {
    let kubeconfig = Kubeconfig::read_from(s.kubeconfig()).unwrap();
    let config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .unwrap();
    Client::try_from(config).unwrap()
}

/// One pass of a reconciler guarded by the finalizer helper; true when cleanup ran.
async fn reconcile(cms: &Api<ConfigMap>, name: &str) -> bool {
    let cleaned = Arc::new(AtomicBool::new(false));
    let obj = Arc::new(cms.get(name).await.unwrap());
    let c = cleaned.clone();
    finalizer(cms, FINALIZER, obj, |event| async move {
        if let Finalizer::Cleanup(_) = event {
            c.store(true, Ordering::SeqCst);
        }
        Ok::<_, std::io::Error>(Action::await_change())
    })
    .await
    .unwrap_or_else(|e| panic!("finalizer helper: {e:?}"));
    cleaned.load(Ordering::SeqCst)
}

async fn controller_flows(backend: Backend) {
    let s = TestServer::start_with(
        backend,
        &["configmaps", "namespaces", "events", "events-k8s-io"],
        &[],
    );
    let client = client(&s).await;
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let cm = |name: &str| ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        ..Default::default()
    };
    cms.create(&PostParams::default(), &cm("guarded"))
        .await
        .unwrap();

    // First pass: the helper adds its finalizer (test null, add) and does not clean up.
    assert!(!reconcile(&cms, "guarded").await);
    let got = cms.get("guarded").await.unwrap();
    assert_eq!(got.metadata.finalizers, Some(vec![FINALIZER.to_string()]));
    // Second pass: an Apply.
    assert!(!reconcile(&cms, "guarded").await);
    // Deleted: it stays, terminating, until the next pass cleans up and drops the finalizer.
    cms.delete("guarded", &DeleteParams::default())
        .await
        .unwrap();
    let terminating = cms.get("guarded").await.unwrap();
    assert!(terminating.metadata.deletion_timestamp.is_some());
    assert!(reconcile(&cms, "guarded").await);
    assert!(cms.get_opt("guarded").await.unwrap().is_none());

    // The Recorder publishes to events.k8s.io/v1.
    let recorded = cms
        .create(&PostParams::default(), &cm("recorded"))
        .await
        .unwrap();
    let recorder = Recorder::new(
        client.clone(),
        Reporter {
            controller: "example.dev/test-controller".into(),
            instance: Some("test-controller-0".into()),
        },
    );
    let reference: ObjectReference = recorded.object_ref(&());
    recorder
        .publish(
            &Event {
                type_: EventType::Normal,
                reason: "Reconciled".into(),
                note: Some("all good".into()),
                action: "Reconcile".into(),
                secondary: None,
            },
            &reference,
        )
        .await
        .unwrap();
    let events: Api<EventV1> = Api::namespaced(client.clone(), "default");
    let found = events
        .list(&ListParams::default().fields("regarding.name=recorded"))
        .await
        .unwrap();
    assert_eq!(found.items.len(), 1, "{found:?}");
    assert_eq!(found.items[0].reason.as_deref(), Some("Reconciled"));
    assert_eq!(
        found.items[0].reporting_controller.as_deref(),
        Some("example.dev/test-controller")
    );

    // A list at resourceVersion 0 may be served by a watch cache that has not yet seen the
    // newest write (kube's "any" semantics, `delegator.go`): on etcd under load it can lag.
    // Wait until the cache has caught up with the create above, as the watcher's initial
    // lists below read at resourceVersion 0.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let any = ListParams::default().match_any();
        let listed = cms.list(&any).await.unwrap();
        if listed.items.iter().any(|c| c.name_any() == "recorded") {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the watch cache never saw the create"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    // The watcher's initial list, paged and as a watch-list stream (`streaming_lists`: a
    // watch with sendInitialEvents from resourceVersion 0): the objects, then InitDone.
    for config in [
        watcher::Config::default(),
        watcher::Config::default().streaming_lists(),
    ] {
        let mut stream = watcher::watcher(cms.clone(), config).boxed();
        let mut names = Vec::new();
        loop {
            let next = tokio::time::timeout(std::time::Duration::from_secs(10), stream.try_next())
                .await
                .expect("the watcher's initial list in time")
                .expect("watcher");
            match next {
                Some(watcher::Event::InitApply(o)) => names.push(o.name_any()),
                Some(watcher::Event::InitDone) | None => break,
                Some(_) => {}
            }
        }
        assert_eq!(names, vec!["recorded".to_string()]);
    }

    // A legacy core/v1 Event, as client-go's old recorder writes it.
    let core: Api<CoreEvent> = Api::namespaced(client.clone(), "default");
    let legacy = CoreEvent {
        metadata: ObjectMeta {
            name: Some("recorded.legacy".into()),
            ..Default::default()
        },
        involved_object: reference,
        reason: Some("Synced".into()),
        message: Some("legacy recorder".into()),
        type_: Some("Normal".into()),
        count: Some(1),
        ..Default::default()
    };
    core.create(&PostParams::default(), &legacy).await.unwrap();
    let found = core
        .list(&ListParams::default().fields("involvedObject.name=recorded"))
        .await
        .unwrap();
    assert_eq!(found.items.len(), 1, "{found:?}");
    assert_eq!(found.items[0].reason.as_deref(), Some("Synced"));

    // Server-side apply as a kube-rs controller does it (`Patch::Apply`): a second manager's
    // change to an owned field is a 409 `Conflict` naming it; `force()` takes it.
    let config = |value: &str| {
        serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "applied"}, "data": {"k": value}})
    };
    let applied = cms
        .patch(
            "applied",
            &PatchParams::apply("ctrl-a"),
            &Patch::Apply(config("a")),
        )
        .await
        .unwrap();
    assert_eq!(
        applied.managed_fields()[0].manager.as_deref(),
        Some("ctrl-a")
    );
    match cms
        .patch(
            "applied",
            &PatchParams::apply("ctrl-b"),
            &Patch::Apply(config("b")),
        )
        .await
    {
        Err(kube::Error::Api(e)) => {
            assert_eq!((e.code, e.reason.as_str()), (409, "Conflict"), "{e:?}");
            assert_eq!(
                e.message,
                r#"Apply failed with 1 conflict: conflict with "ctrl-a": .data.k"#
            );
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    let forced = cms
        .patch(
            "applied",
            &PatchParams::apply("ctrl-b").force(),
            &Patch::Apply(config("b")),
        )
        .await
        .unwrap();
    assert_eq!(forced.data.as_ref().unwrap()["k"], "b");
    let managers: Vec<_> = forced
        .managed_fields()
        .iter()
        .filter_map(|e| e.manager.clone())
        .collect();
    assert_eq!(managers, ["ctrl-b"], "ctrl-a owned nothing else");
}

#[tokio::test(flavor = "multi_thread")]
async fn kube_rs_controller_flows_embedded() {
    controller_flows(Backend::Embedded).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn kube_rs_controller_flows_etcd() {
    controller_flows(Backend::Etcd).await;
}

/// A kube-rs `#[derive(CustomResource)]` type: its generated CRD (`CustomResourceExt::crd()`)
/// is created through `Api<CustomResourceDefinition>` and served before the create returns,
/// so `Api<Gadget>` creates, reads, patches the status of and lists objects at once, and
/// kube-rs' `is_crd_established` condition holds.
#[derive(
    kube::CustomResource, serde::Deserialize, serde::Serialize, Clone, Debug, schemars::JsonSchema,
)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Gadget",
    namespaced,
    status = "GadgetStatus",
    shortname = "gd",
    printcolumn = r#"{"name":"Size","type":"string","jsonPath":".spec.size"}"#
)]
pub struct GadgetSpec {
    size: String,
    replicas: Option<i32>,
    labels: std::collections::BTreeMap<String, String>,
}

/// The status of a [`Gadget`].
#[derive(serde::Deserialize, serde::Serialize, Clone, Debug, Default, schemars::JsonSchema)]
pub struct GadgetStatus {
    ready: bool,
}

#[tokio::test(flavor = "multi_thread")]
async fn custom_resource_ext_crd_is_served_and_used() {
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    use kube::CustomResourceExt;
    let s = TestServer::start_with(Backend::Embedded, &["namespaces"], &[]);
    s.create_default_namespace();
    let client = client(&s).await;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    crds.create(&PostParams::default(), &Gadget::crd())
        .await
        .unwrap_or_else(|e| panic!("the generated CRD: {e:?}"));
    let crd = crds.get("gadgets.example.com").await.unwrap();
    assert!(
        kube::runtime::wait::Condition::matches_object(
            &kube::runtime::conditions::is_crd_established(),
            Some(&crd)
        ),
        "{:?}",
        crd.status
    );

    let gadgets: Api<Gadget> = Api::namespaced(client, "default");
    let spec = GadgetSpec {
        size: "M".into(),
        replicas: None,
        labels: [("team".to_string(), "a".to_string())].into(),
    };
    gadgets
        .create(&PostParams::default(), &Gadget::new("one", spec))
        .await
        .unwrap_or_else(|e| panic!("a Gadget: {e:?}"));
    let got = gadgets.get("one").await.unwrap();
    assert_eq!(got.spec.size, "M");
    assert_eq!(got.spec.labels["team"], "a");
    let status = serde_json::json!({"status": {"ready": true}});
    gadgets
        .patch_status("one", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    let list = gadgets.list(&ListParams::default()).await.unwrap();
    assert_eq!(list.items.len(), 1);
    assert!(list.items[0].status.as_ref().is_some_and(|s| s.ready));
    let table = s.ok(&["get", "gd"]);
    assert!(table.lines().next().unwrap().contains("SIZE"), "{table}");
}

/// `Api<Secret>` and `Api<ServiceAccount>` as an operator reads its credentials: a Secret
/// created with `string_data` is read back with `data` only (decoded bytes), listed by the
/// `type` field selector, seen by a `watcher`; the namespace's `default` ServiceAccount
/// appears.
#[tokio::test(flavor = "multi_thread")]
async fn secrets_and_service_accounts_through_kube_rs() {
    use k8s_openapi::api::core::v1::{Namespace, Secret, ServiceAccount};
    use k8s_openapi::ByteString;
    let s = TestServer::start_with(
        Backend::Embedded,
        &["secrets", "serviceaccounts", "namespaces"],
        &[],
    );
    let client = client(&s).await;
    let namespaces: Api<Namespace> = Api::all(client.clone());
    let mut ns = Namespace::default();
    ns.metadata.name = Some("ops".into());
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .unwrap();
    let secrets: Api<Secret> = Api::namespaced(client.clone(), "ops");
    let mut secret = Secret::default();
    secret.metadata.name = Some("api-key".into());
    secret.string_data = Some([("key".to_string(), "k-123".to_string())].into());
    let created = secrets
        .create(&PostParams::default(), &secret)
        .await
        .unwrap();
    assert_eq!(created.type_.as_deref(), Some("Opaque"));
    assert!(created.string_data.is_none());
    let read = secrets.get("api-key").await.unwrap();
    assert_eq!(
        read.data.unwrap()["key"],
        ByteString(b"k-123".to_vec()),
        "decoded from base64 by kube-rs"
    );
    let mut tls = Secret::default();
    tls.metadata.name = Some("cert".into());
    tls.type_ = Some("kubernetes.io/tls".into());
    tls.data = Some(
        [
            ("tls.crt".to_string(), ByteString(b"c".to_vec())),
            ("tls.key".to_string(), ByteString(b"k".to_vec())),
        ]
        .into(),
    );
    secrets.create(&PostParams::default(), &tls).await.unwrap();
    let only_tls = secrets
        .list(&ListParams::default().fields("type=kubernetes.io/tls"))
        .await
        .unwrap();
    let names: Vec<String> = only_tls.items.iter().map(|s| s.name_any()).collect();
    assert_eq!(names, ["cert"]);
    let seen: Vec<Secret> = watcher(secrets.clone(), watcher::Config::default())
        .applied_objects()
        .take(2)
        .try_collect()
        .await
        .unwrap();
    assert_eq!(seen.len(), 2);
    let accounts: Api<ServiceAccount> = Api::namespaced(client, "ops");
    let mut found = false;
    for _ in 0..100 {
        if accounts.get_opt("default").await.unwrap().is_some() {
            found = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(found, "the default ServiceAccount of ops");
}

/// kube-rs with a requested token, as a workload's client is configured: the admin asks the
/// TokenRequest API (`Api<ServiceAccount>::create_token_request`) for a token of a
/// ServiceAccount bound to a Role that reads Secrets in one namespace; a second kube-rs
/// client whose only credential is that bearer token (TLS verified against the server's CA)
/// reads the Secret there, is refused (403) elsewhere, and is refused (401) once the
/// ServiceAccount is deleted.
#[tokio::test(flavor = "multi_thread")]
async fn kube_rs_authenticates_with_a_requested_token() {
    use k8s_openapi::api::authentication::v1::{TokenRequest, TokenRequestSpec};
    use k8s_openapi::api::core::v1::{Namespace, Secret, ServiceAccount};
    use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject};
    let s = TestServer::start_with(
        Backend::Embedded,
        &[
            "secrets",
            "serviceaccounts",
            "namespaces",
            "roles",
            "clusterroles",
            "rolebindings",
            "clusterrolebindings",
        ],
        &["--authorization-mode=RBAC"],
    );
    let admin = client(&s).await;
    let pp = PostParams::default();
    let mut ns = Namespace::default();
    ns.metadata.name = Some("team".into());
    Api::<Namespace>::all(admin.clone())
        .create(&pp, &ns)
        .await
        .unwrap();
    let mut sa = ServiceAccount::default();
    sa.metadata.name = Some("reader".into());
    let accounts: Api<ServiceAccount> = Api::namespaced(admin.clone(), "team");
    accounts.create(&pp, &sa).await.unwrap();
    let mut role = Role::default();
    role.metadata.name = Some("secret-reader".into());
    role.rules = Some(vec![PolicyRule {
        api_groups: Some(vec![String::new()]),
        resources: Some(vec!["secrets".into()]),
        verbs: vec!["get".into(), "list".into()],
        ..Default::default()
    }]);
    Api::<Role>::namespaced(admin.clone(), "team")
        .create(&pp, &role)
        .await
        .unwrap();
    let mut binding = RoleBinding::default();
    binding.metadata.name = Some("reader".into());
    binding.role_ref = RoleRef {
        api_group: "rbac.authorization.k8s.io".into(),
        kind: "Role".into(),
        name: "secret-reader".into(),
    };
    binding.subjects = Some(vec![Subject {
        kind: "ServiceAccount".into(),
        name: "reader".into(),
        namespace: Some("team".into()),
        ..Default::default()
    }]);
    Api::<RoleBinding>::namespaced(admin.clone(), "team")
        .create(&pp, &binding)
        .await
        .unwrap();
    let mut secret = Secret::default();
    secret.metadata.name = Some("api-key".into());
    secret.string_data = Some([("key".to_string(), "k-123".to_string())].into());
    Api::<Secret>::namespaced(admin.clone(), "team")
        .create(&pp, &secret)
        .await
        .unwrap();

    let requested = accounts
        .create_token_request(
            "reader",
            &pp,
            &TokenRequest {
                spec: TokenRequestSpec {
                    audiences: vec![],
                    expiration_seconds: Some(3600),
                    ..Default::default()
                },
                ..Default::default()
            },
        )
        .await
        .unwrap();
    let token = requested.status.expect("a token").token;
    assert_eq!(token.split('.').count(), 3, "a JWT");

    // The workload's client: the server's CA, the token, no client certificate.
    let kubeconfig = Kubeconfig::read_from(s.kubeconfig()).unwrap();
    let mut config = Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .unwrap();
    config.auth_info = serde_json::from_value(serde_json::json!({ "token": token })).unwrap();
    let workload = Client::try_from(config).unwrap();
    let secrets: Api<Secret> = Api::namespaced(workload.clone(), "team");
    // RBAC reads bindings through the watch cache: the RoleBinding applies within moments.
    let mut read = secrets.get("api-key").await;
    for _ in 0..100 {
        if read.is_ok() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        read = secrets.get("api-key").await;
    }
    assert_eq!(read.unwrap().metadata.name.as_deref(), Some("api-key"));
    let elsewhere = Api::<Secret>::namespaced(workload.clone(), "default")
        .list(&ListParams::default())
        .await
        .unwrap_err();
    assert!(
        matches!(&elsewhere, kube::Error::Api(s) if s.code == 403),
        "{elsewhere:?}"
    );
    accounts
        .delete("reader", &DeleteParams::default())
        .await
        .unwrap();
    // The authenticator looks the ServiceAccount up through the watch cache: the deletion
    // reaches it within moments.
    let mut refused = secrets.get("api-key").await;
    for _ in 0..100 {
        if refused.is_err() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        refused = secrets.get("api-key").await;
    }
    let refused = refused.unwrap_err();
    assert!(
        matches!(&refused, kube::Error::Api(s) if s.code == 401),
        "{refused:?}"
    );
}
