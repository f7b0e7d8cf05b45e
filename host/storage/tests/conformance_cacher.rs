//! Runs the storage conformance suite (`wasm_apiserver_storage::testing::conformance`) against
//! the watch cache: a [`Cacher`] in front of `KvStore` over each backend, as kube-apiserver's
//! `pkg/storage/cacher/cacher_test.go` runs `storagetesting.Run*` against its cacher. Test
//! names are `cacher_embedded::<case>` and `cacher_etcd3::<case>`.
//!
//! The cacher is configured like kube's test cacher (`newTestCacher`): pods under `/pods`,
//! `NamespaceKeyFunc` keys (`/pods/<namespace>/<name>`, `/pods//<name>` without a namespace;
//! the cluster-scoped watch case uses `NoNamespaceKeyFunc`, as kube's
//! `withClusterScopedKeyFunc`), `GetAttrs` with `spec.nodeName` and an index on it, and a
//! 1 s bookmark interval (kube's tests rely on the 2 s-before-deadline bookmark instead). The
//! context's compaction hook also compacts the cache's event history (kube's
//! `compactStorage` for the cacher). Each case starts once the cache is ready.
//!
//! Backends are prepared as `tests/conformance.rs` prepares them (a fresh embedded store per
//! case; one etcd per isolated case, a shared etcd under a unique path prefix otherwise).

mod common;

use common::{embedded, etcd3_isolated, etcd3_shared, Harness};
use std::sync::Arc;
use std::time::Duration;
use wasm_apiserver_storage::cacher::{cluster_key_func, namespace_key_func, Cacher, CacherConfig};
use wasm_apiserver_storage::selection::default_attrs;
use wasm_apiserver_storage::testing::conformance::{self, CompactFn};

/// Put a cacher in front of the context's storage.
async fn with_cacher(h: Harness, name: &'static str, case: &str) -> Harness {
    let mut ctx = h.ctx;
    let mut config = CacherConfig::new("/pods", "v1", "Pod");
    config.key_func = if case == "run_test_cluster_scoped_watch" {
        cluster_key_func("/pods")
    } else {
        namespace_key_func("/pods")
    };
    config.get_attrs = default_attrs(vec!["spec.nodeName".into()]);
    config.indexes = vec!["spec.nodeName".into()];
    config.bookmark_interval = Duration::from_secs(1);
    let cacher = Arc::new(Cacher::new(ctx.storage.clone(), config));
    assert!(
        cacher.wait_ready(Duration::from_secs(10)).await,
        "[{name}] the cache did not become ready"
    );
    let compact_backend = ctx.compact.clone();
    let c = cacher.clone();
    let compact: CompactFn = Arc::new(move |rev: u64| {
        let compact_backend = compact_backend.clone();
        let c = c.clone();
        Box::pin(async move {
            compact_backend(rev).await?;
            c.compact_history(rev).await;
            Ok(())
        })
    });
    ctx.compact = compact;
    ctx.storage = cacher;
    ctx.name = name;
    Harness {
        ctx,
        _keep: h._keep,
    }
}

/// One `#[tokio::test]` per case and backend, as in `tests/conformance.rs`: `isolated` cases
/// compact or assert the global revision (or watch from revision 1) and need a backend of
/// their own; `shared` cases may share one etcd. A case may take extra arguments
/// (`case(args)`) and per-backend attributes (`case { embedded: #[..] etcd3: #[..] }`).
macro_rules! cacher_suite {
    (
        isolated: [$(
            $icase:ident $(($($iarg:expr),*))?
            $({ $(embedded: #[$iem:meta])? $(etcd3: #[$ixm:meta])? })?
        ),* $(,)?],
        shared: [$(
            $scase:ident $(($($sarg:expr),*))?
            $({ $(embedded: #[$sem:meta])? $(etcd3: #[$sxm:meta])? })?
        ),* $(,)?] $(,)?
    ) => {
        mod cacher_embedded {
            $(
                #[tokio::test(flavor = "multi_thread")]
                $($(#[$iem])?)?
                async fn $icase() {
                    let h = super::with_cacher(super::embedded().await, "cacher-embedded", stringify!($icase)).await;
                    super::conformance::$icase(&h.ctx $($(, $iarg)*)?).await;
                }
            )*
            $(
                #[tokio::test(flavor = "multi_thread")]
                $($(#[$sem])?)?
                async fn $scase() {
                    let h = super::with_cacher(super::embedded().await, "cacher-embedded", stringify!($scase)).await;
                    super::conformance::$scase(&h.ctx $($(, $sarg)*)?).await;
                }
            )*
        }
        mod cacher_etcd3 {
            $(
                #[tokio::test(flavor = "multi_thread")]
                $($(#[$ixm])?)?
                async fn $icase() {
                    let h = super::with_cacher(super::etcd3_isolated().await, "cacher-etcd3", stringify!($icase)).await;
                    super::conformance::$icase(&h.ctx $($(, $iarg)*)?).await;
                }
            )*
            $(
                #[tokio::test(flavor = "multi_thread")]
                $($(#[$sxm])?)?
                async fn $scase() {
                    let h = super::with_cacher(super::etcd3_shared().await, "cacher-etcd3", stringify!($scase)).await;
                    super::conformance::$scase(&h.ctx $($(, $sarg)*)?).await;
                }
            )*
        }
    };
}

cacher_suite! {
    isolated: [
        run_test_list {
            embedded: #[ignore = "cacher expectation differs: the 2 cases `limit at resource version 0` are ignoreForWatchCache in kube (the cache ignores limit for RV=0, computeListLimit); the port's ListCase has no such flag; covered by tests/cacher.rs"]
            etcd3: #[ignore = "cacher expectation differs: the 2 cases `limit at resource version 0` are ignoreForWatchCache in kube (the cache ignores limit for RV=0, computeListLimit); the port's ListCase has no such flag; covered by tests/cacher.rs"]
        },
        run_test_consistent_list {
            embedded: #[ignore = "cacher expectation differs: kube's RunTestConsistentList(cacheEnabled=true) allows RV=0 lists to lag the global revision (the cache has not seen a write outside the resource); the port hard-codes the etcd3 expectation; covered by tests/cacher.rs"]
            etcd3: #[ignore = "cacher expectation differs: kube's RunTestConsistentList(cacheEnabled=true) allows RV=0 lists to lag the global revision (the cache has not seen a write outside the resource); the port hard-codes the etcd3 expectation; covered by tests/cacher.rs"]
        },
        run_test_list_continuation,
        run_test_list_continuation_with_filter,
        run_test_list_inconsistent_continuation {
            embedded: #[ignore = "cacher expectation differs: its first page is an RV=0 list with limit 1, served by the cache without a limit or continue token (kube computeListLimit); kube runs it against the cacher without a compaction hook, i.e. skipped (#109831)"]
            etcd3: #[ignore = "cacher expectation differs: its first page is an RV=0 list with limit 1, served by the cache without a limit or continue token (kube computeListLimit); kube runs it against the cacher without a compaction hook, i.e. skipped (#109831)"]
        },
        run_test_compact_revision,
        run_test_watch_from_zero,
        run_watch_semantic_initial_events_extended,
        run_watch_list_match_single,
        run_watch_semantics,
    ],
    shared: [
        run_test_create,
        run_test_create_with_ttl,
        run_test_create_with_key_exist,
        run_test_get,
        run_test_unconditional_delete,
        run_test_conditional_delete,
        run_test_delete_with_suggestion,
        run_test_delete_with_suggestion_and_conflict,
        run_test_delete_with_conflict,
        run_test_delete_with_suggestion_of_deleted_object,
        run_test_validate_deletion_with_suggestion,
        run_test_validate_deletion_with_only_suggestion_valid,
        run_test_preconditional_delete_with_suggestion,
        run_test_preconditional_delete_with_only_suggestion_pass,
        run_test_get_list_non_recursive,
        run_test_get_list_recursive_prefix,
        run_test_get_list_without_error_aggregation {
            embedded: #[ignore = "not applicable: objects corrupted in the backend after the cache decoded them are served from memory (kube runs it against etcd3 only)"]
            etcd3: #[ignore = "not applicable: objects corrupted in the backend after the cache decoded them are served from memory (kube runs it against etcd3 only)"]
        },
        run_test_list_pagination_rare_object,
        run_test_list_resource_version_match,
        run_test_list_paging,
        run_test_namespace_scoped_list,
        run_test_stats,
        run_test_key_schema,
        run_test_guaranteed_update,
        run_test_guaranteed_update_with_ttl,
        run_test_guaranteed_update_checks_stored_data,
        run_test_guaranteed_update_with_conflict,
        run_test_guaranteed_update_with_suggestion_and_conflict,
        run_test_transformation_failure {
            embedded: #[ignore = "racy under a cache: the object is written under another transformer prefix which is reverted right after; when the cache's watch decodes it before the revert, the cache holds it and serves it (kube runs this case against etcd3 only)"]
            etcd3: #[ignore = "racy under a cache: the object is written under another transformer prefix which is reverted right after; when the cache's watch decodes it before the revert, the cache holds it and serves it (kube runs this case against etcd3 only)"]
        },
        run_test_watch,
        run_test_delete_trigger_watch,
        run_test_watch_from_non_zero,
        run_test_delayed_watch_delivery,
        run_test_watch_error {
            embedded: #[ignore = "not applicable: a transform failure breaks the cache's own backend watch, the cache re-initialises and closes its watchers without an ERROR event (kube does not run RunTestWatchError against the cacher)"]
            etcd3: #[ignore = "not applicable: a transform failure breaks the cache's own backend watch, the cache re-initialises and closes its watchers without an ERROR event (kube does not run RunTestWatchError against the cacher)"]
        },
        run_test_watcher_timeout,
        run_test_watch_delete_event_object_have_latest_rv,
        run_optional_test_progress_notify,
        run_test_cluster_scoped_watch,
        run_test_namespace_scoped_watch,
        run_test_watch_dispatch_bookmark_events(true),
        run_send_initial_events_backward_compatibility,
        run_watch_error_is_blocking_further_events {
            embedded: #[ignore = "not applicable: objects corrupted in the backend after the cache decoded them are served from memory, so no ERROR event occurs"]
            etcd3: #[ignore = "not applicable: objects corrupted in the backend after the cache decoded them are served from memory, so no ERROR event occurs"]
        },
    ],
}
