//! The storage version migrator (`pkg/controller/storageversionmigrator/storageversionmigrator.go`
//! and `resourceversion.go`, kube-controller-manager's `storage-version-migrator-controller`):
//! for each `StorageVersionMigration` not yet `Succeeded` or `Failed`,
//! 1. `status.resourceVersion` is set to the store's current revision (`Failed`, `resource
//!    does not exist in discovery`, when the resource is not served);
//! 2. `Running` (reason `StorageVersionMigrationInProgress`);
//! 3. every stored object of the resource is rewritten as it is;
//! 4. `Succeeded` (`StorageVersionMigrationSucceeded`), or `Failed`
//!    (`StorageVersionMigrationFailed`, `migration encountered unhandled error: <error>`),
//!    with `Running` set to `False`.
//!
//! Differences from kube, for speed and for the encryption rotation that needs it:
//! - an object is rewritten in the storage (`GuaranteedUpdate` with the object unchanged, the
//!   uid as precondition), not by an apply request through the API: no admission, no
//!   managedFields change, and nothing is written for an object already sealed with the write
//!   key (the storage rewrites only what it read stale). An object deleted meanwhile is
//!   skipped; one re-created is skipped too (written since, so current). Nor does it convert:
//!   an object stored in an earlier storage version stays in it (this server converts on
//!   read; kube's apply request would store it in the current one);
//! - a resource not served fails at once (kube waits a minute for its discovery);
//! - 64 rewrites run at once (the embedded store commits them in groups);
//! - the `Running` condition's message counts progress (`rewrote N of M objects`), updated
//!   at most once a second; kube's is empty.

use crate::registry::storage_version_migration::{
    is_condition_true, FAILED, GROUP, PLURAL, RUNNING, SUCCEEDED, VERSION,
};
use crate::registry::store::{Subresource, UpdatedObject};
use crate::registry::{ListOptions, Served, Store, UpdateOptions};
use crate::status::ApiResult;
use futures::StreamExt;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use wasm_apiserver_storage::{Preconditions, StorageError, UpdateOutcome};

/// The controller's name (`--controllers`, kube-controller-manager's).
pub const NAME: &str = "storage-version-migrator-controller";

/// Rewrites in flight at once.
const CONCURRENCY: usize = 64;

/// Objects listed per page.
const PAGE: i64 = 1000;

/// Start the controller; abort the returned task to stop it.
pub fn start(served: Arc<Served>) -> tokio::task::AbortHandle {
    tokio::spawn(async move {
        loop {
            let snapshot = served.load();
            let Some(migrations) = snapshot.resources.get(GROUP, VERSION, PLURAL) else {
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            };
            let list = match migrations.list("", &ListOptions::default()).await {
                Ok(list) => list,
                Err(e) => {
                    tracing::warn!(error = %e, "{NAME}: cannot list migrations");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                    continue;
                }
            };
            for svm in migrations.decode_items(&list).unwrap_or_default() {
                if is_condition_true(&svm, SUCCEEDED) || is_condition_true(&svm, FAILED) {
                    continue;
                }
                if let Err(e) = sync(&served, &migrations, &svm).await {
                    if e.code != 404 && e.code != 409 {
                        tracing::warn!(error = %e, "{NAME}: cannot write a migration's status");
                    }
                }
            }
            super::wait_for_change(&migrations, &list.resource_version.to_string()).await;
        }
    })
    .abort_handle()
}

/// Run one migration to its end.
async fn sync(served: &Served, migrations: &Store, svm: &Value) -> ApiResult<()> {
    let name = svm["metadata"]["name"].as_str().unwrap_or_default();
    let r = &svm["spec"]["resource"];
    let (group, version, resource) = (
        r["group"].as_str().unwrap_or(""),
        r["version"].as_str().unwrap_or(""),
        r["resource"].as_str().unwrap_or(""),
    );
    let Some(target) = served.load().resources.get(group, version, resource) else {
        return set_condition(
            migrations,
            name,
            FAILED,
            "StorageVersionMigrationFailed",
            "resource does not exist in discovery",
        )
        .await;
    };
    if svm["status"]["resourceVersion"]
        .as_str()
        .is_none_or(str::is_empty)
    {
        let rv = target
            .storage
            .current_resource_version()
            .await
            .map_err(crate::status::ApiError::internal)?;
        let patch = Arc::new(move |current: &Value| {
            let mut new = current.clone();
            new["status"]["resourceVersion"] = json!(rv.to_string());
            Ok(new)
        });
        migrations
            .update(
                "",
                name,
                UpdatedObject::Patch(patch),
                &UpdateOptions::host(Subresource::Status),
            )
            .await?;
    }
    let total = target
        .storage
        .count(&target.list_key(""))
        .await
        .unwrap_or(0)
        .max(0) as u64;
    set_condition(
        migrations,
        name,
        RUNNING,
        "StorageVersionMigrationInProgress",
        &progress(0, total),
    )
    .await?;
    let started = Instant::now();
    match rewrite_all(&target, migrations, name, total).await {
        Ok(done) => {
            tracing::info!(migration = name, resource = %format!("{resource}.{group}"), objects = done, elapsed = ?started.elapsed(), "{NAME}: migration succeeded");
            set_condition(
                migrations,
                name,
                SUCCEEDED,
                "StorageVersionMigrationSucceeded",
                "",
            )
            .await
        }
        Err(e) => {
            tracing::warn!(migration = name, error = %e, "{NAME}: migration failed");
            set_condition(
                migrations,
                name,
                FAILED,
                "StorageVersionMigrationFailed",
                &format!("migration encountered unhandled error: {e}"),
            )
            .await
        }
    }
}

fn progress(done: u64, total: u64) -> String {
    format!("rewrote {done} of {total} objects")
}

/// Rewrite every object of `target`, page by page, [`CONCURRENCY`] at once, reporting
/// progress on `name` at most once a second. Returns how many objects were visited.
async fn rewrite_all(
    target: &Store,
    migrations: &Store,
    name: &str,
    total: u64,
) -> Result<u64, String> {
    let done = AtomicU64::new(0);
    let mut reported = Instant::now();
    let mut continue_token = String::new();
    loop {
        let opts = ListOptions {
            limit: PAGE,
            continue_token: continue_token.clone(),
            ..Default::default()
        };
        let page = match target.list("", &opts).await {
            Ok(p) => p,
            // The continue token's revision was compacted during a long migration: start the
            // listing over at the current revision (what is rewritten already is current).
            Err(e) if e.code == 410 && !continue_token.is_empty() => {
                continue_token.clear();
                continue;
            }
            Err(e) => return Err(e.message),
        };
        let items = target.decode_items(&page).map_err(|e| e.message)?;
        let rewrites: Vec<_> = items.iter().map(|obj| rewrite(target, obj)).collect();
        let mut rewrites = futures::stream::iter(rewrites).buffer_unordered(CONCURRENCY);
        while let Some(r) = rewrites.next().await {
            r?;
            let n = done.fetch_add(1, Ordering::Relaxed) + 1;
            if reported.elapsed() >= Duration::from_secs(1) {
                reported = Instant::now();
                let _ = set_condition(
                    migrations,
                    name,
                    RUNNING,
                    "StorageVersionMigrationInProgress",
                    &progress(n, total.max(n)),
                )
                .await;
            }
        }
        continue_token = page.continue_token.clone().unwrap_or_default();
        if continue_token.is_empty() {
            return Ok(done.into_inner());
        }
    }
}

/// Write `obj` again as it is stored now. Gone or re-created meanwhile: nothing to do.
async fn rewrite(target: &Store, obj: &Value) -> Result<(), String> {
    let meta = &obj["metadata"];
    let (ns, name) = (
        meta["namespace"].as_str().unwrap_or(""),
        meta["name"].as_str().unwrap_or(""),
    );
    let preconditions = Preconditions {
        uid: meta["uid"].as_str().map(String::from),
        resource_version: None,
    };
    let mut unchanged = |current: Value, _: wasm_apiserver_storage::ResponseMeta| {
        Box::pin(async move {
            Ok(UpdateOutcome {
                object: current,
                ttl: None,
            })
        }) as futures::future::BoxFuture<'static, _>
    };
    // A store that does not answer is tried again (three times, 0.2 s, 0.4 s apart), as kube's
    // work queue retries; anything else fails the migration.
    let mut attempt = 0;
    loop {
        let r = target
            .storage
            .guaranteed_update(
                &target.key(ns, name),
                false,
                &preconditions,
                &mut unchanged,
                None,
            )
            .await;
        match r {
            Ok(_)
            | Err(StorageError::KeyNotFound { .. })
            | Err(StorageError::InvalidObj { .. }) => return Ok(()),
            Err(StorageError::Unreachable(_) | StorageError::Timeout(_)) if attempt < 2 => {
                attempt += 1;
                tokio::time::sleep(Duration::from_millis(200 * attempt)).await;
            }
            Err(e) => return Err(format!("{ns}/{name}: {e}")),
        }
    }
}

/// kube's `setStatusConditions`: `ty` becomes `True` with `reason` and `message` (appended,
/// or replaced when present); `Succeeded` and `Failed` set `Running` to `False`.
async fn set_condition(
    migrations: &Store,
    name: &str,
    ty: &'static str,
    reason: &'static str,
    message: &str,
) -> ApiResult<()> {
    let message = message.to_string();
    let patch = Arc::new(move |current: &Value| {
        let mut new = current.clone();
        let now = wasm_apiserver_apimachinery::time::now();
        let mut conditions = new["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if ty != RUNNING {
            for c in conditions.iter_mut().filter(|c| c["type"] == RUNNING) {
                c["status"] = json!("False");
            }
        }
        let mut condition = json!({"type": ty, "status": "True", "lastUpdateTime": now,
                                   "reason": reason});
        if !message.is_empty() {
            condition["message"] = json!(message);
        }
        match conditions.iter_mut().find(|c| c["type"] == ty) {
            Some(c) => *c = condition,
            None => conditions.push(condition),
        }
        new["status"]["conditions"] = Value::Array(conditions);
        Ok(new)
    });
    migrations
        .update(
            "",
            name,
            UpdatedObject::Patch(patch),
            &UpdateOptions::host(Subresource::Status),
        )
        .await
        .map(|_| ())
}
