//! Runs the storage conformance suite (`wasm_apiserver_storage::testing::conformance`, a port
//! of kube-apiserver's `storage/testing/store_tests.go` and `watcher_tests.go`) against
//! `KvStore` over every backend: `embedded::<case>` and `etcd3::<case>` for each ported case.
//!
//! - embedded: a fresh store in a temporary directory per case;
//! - etcd3: cases that compact or assert the global revision get an etcd of their own
//!   (`isolated`); the others share one etcd per test binary under a unique path prefix
//!   (`/registry-<n>`). The shared etcd is reference counted by the running cases and killed
//!   when the last one ends (a later case starts a new one), so no process outlives the tests.

mod common;

use common::{embedded, etcd3_isolated, etcd3_shared};
use wasm_apiserver_storage::testing::conformance;

/// One `#[tokio::test]` per case and backend. `isolated` cases compact or assert the global
/// revision and need a backend of their own; `shared` cases may share one etcd. A case may take
/// extra arguments (`case(args)`) and per-backend attributes
/// (`case { embedded: #[ignore = ".."] etcd3: #[ignore = ".."] }`).
macro_rules! conformance_suite {
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
        mod embedded {
            $(
                #[tokio::test(flavor = "multi_thread")]
                $($(#[$iem])?)?
                async fn $icase() {
                    let h = super::embedded().await;
                    super::conformance::$icase(&h.ctx $($(, $iarg)*)?).await;
                }
            )*
            $(
                #[tokio::test(flavor = "multi_thread")]
                $($(#[$sem])?)?
                async fn $scase() {
                    let h = super::embedded().await;
                    super::conformance::$scase(&h.ctx $($(, $sarg)*)?).await;
                }
            )*
        }
        mod etcd3 {
            $(
                #[tokio::test(flavor = "multi_thread")]
                $($(#[$ixm])?)?
                async fn $icase() {
                    let h = super::etcd3_isolated().await;
                    super::conformance::$icase(&h.ctx $($(, $iarg)*)?).await;
                }
            )*
            $(
                #[tokio::test(flavor = "multi_thread")]
                $($(#[$sxm])?)?
                async fn $scase() {
                    let h = super::etcd3_shared().await;
                    super::conformance::$scase(&h.ctx $($(, $sarg)*)?).await;
                }
            )*
        }
    };
}

conformance_suite! {
    isolated: [
        run_test_list,
        run_test_consistent_list,
        run_test_list_continuation,
        run_test_list_continuation_with_filter,
        run_test_list_inconsistent_continuation,
        run_test_compact_revision,
        run_test_watch_from_zero,
        run_watch_semantic_initial_events_extended,
        run_watch_list_match_single,
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
        run_test_get_list_without_error_aggregation,
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
        run_test_transformation_failure,
        run_test_watch,
        run_test_delete_trigger_watch,
        run_test_watch_from_non_zero,
        run_test_delayed_watch_delivery,
        run_test_watch_error,
        run_test_watcher_timeout,
        run_test_watch_delete_event_object_have_latest_rv,
        run_optional_test_progress_notify,
        run_test_cluster_scoped_watch,
        run_test_namespace_scoped_watch,
        run_test_watch_dispatch_bookmark_events(false),
        run_send_initial_events_backward_compatibility,
        run_watch_semantics,
        run_watch_error_is_blocking_further_events,
    ],
}
