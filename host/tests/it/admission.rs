//! An admission member added from this one file — registered on the standard chain, served by
//! an unchanged server, no handler touched — runs at kube's points: its mutating stage before
//! the strategy on create and inside the update (seeing the current object), its validating
//! stage after the strategy, both on delete; a refusal is the request's answer and nothing is
//! written; dry runs reach it flagged; the standard members still run first.

use crate::common;

use common::http::{client, default_namespace, send};
use common::in_process::InProcessServer;
use common::server::Backend;
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use wasm_apiserver::admission::{Admission, AdmissionFuture, Attributes, Operation, Plugins};
use wasm_apiserver::status::ApiError;

/// Guards ConfigMaps: stamps who wrote them (mutating), refuses `data.forbidden` (validating)
/// and the deletion of those labelled `protected: "true"`; records what it saw.
struct Guard {
    seen: Arc<Mutex<Vec<String>>>,
}

impl Guard {
    fn record(&self, a: &Attributes<'_>, stage: &str, extra: &str) {
        self.seen.lock().unwrap().push(format!(
            "{stage} {} {}/{} old={} dry_run={}{extra}",
            a.operation.as_str(),
            a.store.gr.resource,
            a.name,
            a.old_object.is_some(),
            a.dry_run
        ));
    }
}

impl Admission for Guard {
    fn name(&self) -> &'static str {
        "ConfigMapGuard"
    }

    fn handles(&self, operation: Operation) -> bool {
        operation != Operation::Connect
    }

    fn admit<'a>(
        &'a self,
        a: &'a Attributes<'a>,
        object: Option<&'a mut Value>,
    ) -> AdmissionFuture<'a> {
        Box::pin(async move {
            if a.store.gr.resource != "configmaps" {
                return Ok(());
            }
            self.record(a, "admit", "");
            if let Some(o) = object {
                o["metadata"]["annotations"]["example.dev/written-by"] = json!(a.user.name);
            }
            Ok(())
        })
    }

    fn validate<'a>(
        &'a self,
        a: &'a Attributes<'a>,
        object: Option<&'a Value>,
    ) -> AdmissionFuture<'a> {
        Box::pin(async move {
            if a.store.gr.resource != "configmaps" {
                return Ok(());
            }
            // After the strategy: the object carries what the Store added (its uid).
            let uid = object.and_then(|o| o.pointer("/metadata/uid")).is_some();
            self.record(a, "validate", &format!(" uid={uid}"));
            if object.is_some_and(|o| !o["data"]["forbidden"].is_null()) {
                return Err(ApiError::forbidden(
                    &a.store.gr,
                    a.name,
                    "data.forbidden is not allowed",
                ));
            }
            let protected = a
                .old_object
                .and_then(|o| o.pointer("/metadata/labels/protected"))
                .is_some_and(|p| p == "true");
            if a.operation == Operation::Delete && protected {
                return Err(ApiError::forbidden(&a.store.gr, a.name, "protected"));
            }
            Ok(())
        })
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_member_registered_from_one_file_runs_at_kubes_points() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let mut plugins = Plugins::standard();
    let guard_seen = seen.clone();
    plugins.register(
        "ConfigMapGuard",
        Arc::new(move |_| {
            Arc::new(Guard {
                seen: guard_seen.clone(),
            })
        }),
    );
    assert_eq!(
        plugins.names(),
        [
            "NamespaceLifecycle",
            "RBACEscalation",
            "PolicyAuthorization",
            "MutatingAdmissionPolicy",
            "MutatingAdmissionWebhook",
            "ValidatingAdmissionPolicy",
            "ValidatingAdmissionWebhook",
            "WasmAdmissionPolicy",
            "ConfigMapGuard"
        ]
    );
    let s = InProcessServer::start_with_admission(
        Backend::Embedded,
        &["configmaps", "namespaces"],
        &[],
        plugins,
    );
    default_namespace(&s.url).await;
    let cms = format!("{}/api/v1/namespaces/default/configmaps", s.url);
    let take = || std::mem::take(&mut *seen.lock().unwrap());

    // Create: mutated before the strategy (the stamp is stored), validated after it.
    let (code, body) = send(
        client()
            .post(&cms)
            .json(&json!({"metadata": {"name": "a"}, "data": {"k": "v"}})),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    assert_eq!(
        body["metadata"]["annotations"]["example.dev/written-by"],
        "system:anonymous"
    );
    assert_eq!(
        take(),
        [
            "admit CREATE configmaps/ old=false dry_run=false",
            "validate CREATE configmaps/ old=false dry_run=false uid=true"
        ]
    );

    // A refusal in the validating stage is the answer; nothing is written.
    let (code, body) = send(
        client()
            .post(&cms)
            .json(&json!({"metadata": {"name": "b"}, "data": {"forbidden": "x"}})),
    )
    .await;
    assert_eq!(code, 403, "{body}");
    assert_eq!(body["reason"], "Forbidden");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("data.forbidden is not allowed"),
        "{body}"
    );
    let (code, _) = send(client().get(format!("{cms}/b"))).await;
    assert_eq!(code, 404);
    take();

    // Update and patch: inside the update, with the current object.
    let (code, body) = send(
        client()
            .patch(format!("{cms}/a"))
            .header("content-type", "application/merge-patch+json")
            .body(r#"{"data": {"forbidden": "y"}}"#),
    )
    .await;
    assert_eq!(code, 403, "{body}");
    assert_eq!(
        take(),
        [
            "admit UPDATE configmaps/a old=true dry_run=false",
            "validate UPDATE configmaps/a old=true dry_run=false uid=true"
        ]
    );
    let (_, current) = send(client().get(format!("{cms}/a"))).await;
    let mut replaced = current.clone();
    replaced["metadata"]["labels"] = json!({"protected": "true"});
    let (code, body) = send(client().put(format!("{cms}/a")).json(&replaced)).await;
    assert_eq!(code, 200, "{body}");
    take();

    // Dry runs reach the member flagged.
    let (code, body) = send(
        client()
            .post(format!("{cms}?dryRun=All"))
            .json(&json!({"metadata": {"name": "c"}})),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    assert!(take().iter().all(|l| l.contains("dry_run=true")));

    // Delete: both stages on the object being deleted.
    let (code, body) = send(client().delete(format!("{cms}/a"))).await;
    assert_eq!(code, 403, "{body}");
    assert_eq!(
        take(),
        [
            "admit DELETE configmaps/a old=true dry_run=false",
            "validate DELETE configmaps/a old=true dry_run=false uid=false"
        ]
    );
    let (code, _) = send(client().get(format!("{cms}/a"))).await;
    assert_eq!(code, 200, "a refused delete leaves the object");

    // The standard members run first: a missing namespace is 404 before the guard sees it.
    let (code, body) = send(
        client()
            .post(format!("{}/api/v1/namespaces/missing/configmaps", s.url))
            .json(&json!({"metadata": {"name": "d"}})),
    )
    .await;
    assert_eq!(code, 404, "{body}");
    assert!(take().is_empty());
    // So is an update there of an object that does not exist (store.go runs the update's
    // admission before its own not-found check): the namespace is what is missing.
    let (code, body) = send(
        client()
            .put(format!("{}/api/v1/namespaces/missing/configmaps/d", s.url))
            .json(&json!({"metadata": {"name": "d", "namespace": "missing"}})),
    )
    .await;
    assert_eq!(code, 404, "{body}");
    assert_eq!(body["details"]["kind"], "namespaces", "{body}");
    assert!(take().is_empty());
}
