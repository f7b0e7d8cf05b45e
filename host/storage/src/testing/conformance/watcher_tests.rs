//! `watcher_tests.go`: watch semantics on every implementation.

use super::utils::*;
use crate::errors::StorageError;
use crate::interfaces::{ListOptions, ResourceVersionMatch, WatchEvent, WatchStream};
use crate::selection::{default_attrs, FieldSelector, SelectionPredicate};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

// ---------------------------------------------------------------------------------------------
// watcher_tests.go
// ---------------------------------------------------------------------------------------------

/// One step of a watch scenario (`testWatchStruct`): write `obj` (or delete, for `None`) and
/// maybe expect an event.
pub(super) struct WatchStep {
    obj: Option<Value>,
    expect_event: bool,
    event_type: &'static str,
}

pub(super) fn step(obj: Value, expect_event: bool, event_type: &'static str) -> WatchStep {
    WatchStep {
        obj: Some(obj),
        expect_event,
        event_type,
    }
}

/// `RunTestWatch`: recursive and non-recursive watches see ADDED on first sight, MODIFIED on
/// update, DELETED when an update makes the object stop matching and ADDED when it starts to;
/// events for other keys are not delivered.
pub async fn run_test_watch(ctx: &TestContext) {
    test_watch(ctx, false).await;
    test_watch(ctx, true).await;
}

pub(super) async fn test_watch(ctx: &TestContext, recursive: bool) {
    let base_pod = pod("", "foo");
    let base_pod_assigned = pod_assigned("", "foo", "bar");
    let selected = |p: &Value| with_labels(p, &[("select", "true")]);
    let node_pred = |equals: bool| SelectionPredicate {
        field: fields(vec![freq("spec.nodeName", equals, "bar")]),
        get_attrs: Some(default_attrs(vec!["spec.nodeName".into()])),
        ..SelectionPredicate::default()
    };
    let cases: Vec<(&str, String, SelectionPredicate, Vec<WatchStep>)> = vec![
        (
            "create a key",
            format!("test-ns-1-{recursive}"),
            everything(),
            vec![step(base_pod.clone(), true, "ADDED")],
        ),
        (
            "key updated to match predicate",
            format!("test-ns-2-{recursive}"),
            node_pred(true),
            vec![
                step(base_pod.clone(), false, ""),
                step(base_pod_assigned.clone(), true, "ADDED"),
            ],
        ),
        (
            "update",
            format!("test-ns-3-{recursive}"),
            everything(),
            vec![
                step(base_pod.clone(), true, "ADDED"),
                step(base_pod_assigned.clone(), true, "MODIFIED"),
            ],
        ),
        (
            "delete because of being filtered",
            format!("test-ns-4-{recursive}"),
            node_pred(false),
            vec![
                step(base_pod.clone(), true, "ADDED"),
                step(base_pod_assigned.clone(), true, "DELETED"),
            ],
        ),
        (
            "filtering",
            format!("test-ns-5-{recursive}"),
            SelectionPredicate {
                label: label_eq("select", "true"),
                ..SelectionPredicate::default()
            },
            vec![
                step(selected(&base_pod), true, "ADDED"),
                step(base_pod.clone(), true, "DELETED"),
                step(selected(&base_pod), true, "ADDED"),
                step(selected(&base_pod_assigned), true, "MODIFIED"),
                WatchStep {
                    obj: None,
                    expect_event: true,
                    event_type: "DELETED",
                },
            ],
        ),
    ];
    for (name, namespace, pred, steps) in cases {
        let mut watch_key = format!("/pods/{namespace}");
        let key = format!("{watch_key}/foo");
        if !recursive {
            watch_key = key.clone();
        }
        // Get the current RV from which we can start watching.
        let out = list(ctx, &watch_key, &list_opts("", pred.clone(), recursive)).await;
        let mut w = watch(
            ctx,
            &watch_key,
            list_opts(&out.resource_version.to_string(), pred.clone(), recursive),
        )
        .await;
        // Create a pod in a different namespace first to ensure that its event is not
        // propagated.
        let bad_ns = format!("{namespace}-bad");
        let mut bad = base_pod.clone();
        set_meta(&mut bad, "namespace", json!(bad_ns));
        upsert(ctx, &format!("/pods/{bad_ns}/foo"), &bad).await;

        let mut prev: Option<Value> = None;
        for s in steps {
            let out = match &s.obj {
                Some(obj) => {
                    let mut obj = obj.clone();
                    set_meta(&mut obj, "namespace", json!(namespace));
                    upsert(ctx, &key, &obj).await
                }
                None => delete_plain(&*ctx.storage, &key, None)
                    .await
                    .unwrap_or_else(|e| panic!("[{}] Delete failed: {e}", ctx.name)),
            };
            if s.expect_event {
                let expected = if s.event_type == "DELETED" {
                    with_rv(prev.as_ref().expect("a previous object"), &rv_of(&out))
                } else {
                    out.clone()
                };
                expect_event(ctx, &mut w, s.event_type, &expected).await;
            }
            prev = Some(out);
        }
        expect_no_more_events(ctx, &mut w, false).await;
        let _ = name;
    }
}

/// `RunTestWatchFromZero`: a watch from "0" starts with ADDED for the current state, also after
/// a compaction; a watch from a compacted revision fails with an ERROR event (410). Needs a
/// backend of its own ([`TestContext::compact`]).
pub async fn run_test_watch_from_zero(ctx: &TestContext) {
    let (key, stored) = propagate(ctx, &pod("test-ns", "foo")).await;
    let mut w = watch(ctx, &key, list_opts("0", everything(), false)).await;
    expect_event(ctx, &mut w, "ADDED", &stored).await;

    // Update
    let mut annotated = pod("test-ns", "foo");
    set_annotations(&mut annotated, &[("a", "1")]);
    let out = upsert(ctx, &key, &annotated).await;
    expect_event(ctx, &mut w, "MODIFIED", &out).await;
    drop(w);

    // Make sure when we watch from 0 we receive an ADDED event
    let mut w = watch(ctx, &key, list_opts("0", everything(), false)).await;
    expect_event(ctx, &mut w, "ADDED", &out).await;
    drop(w);

    // Update again
    let new_out = upsert(ctx, &key, &pod("test-ns", "foo")).await;
    // Compact previous versions
    ctx.compact(rv_u64(&new_out)).await;

    // Make sure we can still watch from 0 and receive an ADDED event
    let mut w = watch(ctx, &key, list_opts("0", everything(), false)).await;
    expect_event(ctx, &mut w, "ADDED", &new_out).await;

    // Make sure we can't watch from older resource versions anymore and get a "Gone" error.
    let mut too_old = watch(ctx, &key, list_opts(&rv_of(&out), everything(), false)).await;
    match next_event(ctx, &mut too_old, "watch from a compacted revision").await {
        WatchEvent::Error(StorageError::Expired { .. }) => {}
        // etcd3 currently may also answer with an internal error (the event has no PrevKv).
        WatchEvent::Error(StorageError::Internal(_)) => {}
        other => panic!(
            "[{}] expected an ERROR event with 410 Expired, got {}",
            ctx.name,
            describe(&other)
        ),
    }
}

/// `RunTestDeleteTriggerWatch`: a delete produces DELETED.
pub async fn run_test_delete_trigger_watch(ctx: &TestContext) {
    let (key, stored) = propagate(ctx, &pod("test-ns", "foo")).await;
    let mut w = watch(ctx, &key, list_opts(&rv_of(&stored), everything(), false)).await;
    delete_plain(&*ctx.storage, &key, None)
        .await
        .unwrap_or_else(|e| panic!("[{}] Delete failed: {e}", ctx.name));
    expect_event_type(ctx, &mut w, "DELETED", EVENT_TIMEOUT).await;
}

/// `RunTestWatchFromNonZero`: a watch from the creation revision sees the update as MODIFIED.
pub async fn run_test_watch_from_non_zero(ctx: &TestContext) {
    let (key, stored) = propagate(ctx, &pod("test-ns", "foo")).await;
    let mut w = watch(ctx, &key, list_opts(&rv_of(&stored), everything(), false)).await;
    let mut new_obj = stored.clone();
    set_annotations(&mut new_obj, &[("version", "2")]);
    let out = upsert(ctx, &key, &new_obj).await;
    expect_event(ctx, &mut w, "MODIFIED", &out).await;
}

/// `RunTestDelayedWatchDelivery`: a reader that only starts reading after 21 writes still gets
/// every event, in order (the raw store never drops events; the Go test's "stop, then drain"
/// has no equivalent because dropping the receiver discards its buffer).
pub async fn run_test_delayed_watch_delivery(ctx: &TestContext) {
    let (_, stored) = propagate(ctx, &pod("test-ns", "foo")).await;
    let mut w = watch(
        ctx,
        "/pods/test-ns",
        list_opts(&rv_of(&stored), everything(), true),
    )
    .await;
    let total = 21;
    for i in 0..total {
        let p = pod("test-ns", &format!("foo-{i}"));
        upsert(ctx, &pod_key(&p), &p).await;
    }
    for i in 0..total {
        let e = next_event(ctx, &mut w, &format!("event #{i}")).await;
        let got = event_object(&e).as_ref().map(name_of).unwrap_or_default();
        assert_eq!(
            got,
            format!("foo-{i}"),
            "[{}] Unexpected object watched: {}",
            ctx.name,
            describe(&e)
        );
    }
}

/// `RunTestWatchError`: a value that cannot be transformed gives an ERROR event.
pub async fn run_test_watch_error(ctx: &TestContext) {
    let Some(transformer) = ctx.transformer("RunTestWatchError") else {
        return;
    };
    let obj = pod("test-ns", "foo");
    let key = pod_key(&obj);
    // Compute the initial resource version from which we can start watching later.
    let l = list(ctx, "/pods", &list_opts("0", everything(), true)).await;
    upsert(ctx, &key, &obj).await;
    // Now trigger watch error by injecting failing transformer.
    let _revert = transformer.update(|s| s.failing = true);
    let mut w = watch(
        ctx,
        &key,
        list_opts(&l.resource_version.to_string(), everything(), false),
    )
    .await;
    expect_event_type(ctx, &mut w, "ERROR", EVENT_TIMEOUT).await;
}

/// `RunTestWatcherTimeout`: 50 watchers that never read do not block a reading watcher.
pub async fn run_test_watcher_timeout(ctx: &TestContext) {
    let l = list(ctx, "/pods", &list_opts("", everything(), true)).await;
    let initial_rv = l.resource_version.to_string();
    let opts = list_opts(&initial_rv, everything(), true);
    // A number of watchers that will not be reading any result.
    let non_reading = 50;
    let mut idle = Vec::new();
    for _ in 0..non_reading {
        idle.push(watch(ctx, "/pods/test-ns", opts.clone()).await);
    }
    // A watcher that will be reading results.
    let mut reading = watch(ctx, "/pods/test-ns", opts).await;
    let start = Instant::now();
    for i in 0..22 {
        let out = create(ctx, &pod("test-ns", &format!("foo-{i}"))).await;
        expect_event(ctx, &mut reading, "ADDED", &out).await;
    }
    let took = start.elapsed();
    assert!(
        took < Duration::from_millis(250 * non_reading as u64),
        "[{}] waiting for events took too long: {took:?}",
        ctx.name
    );
    drop(idle);
}

/// `RunTestWatchDeleteEventObjectHaveLatestRV`: the DELETED object carries the delete revision.
pub async fn run_test_watch_delete_event_object_have_latest_rv(ctx: &TestContext) {
    let (key, stored) = propagate(ctx, &pod("test-ns", "foo")).await;
    let mut w = watch(ctx, &key, list_opts(&rv_of(&stored), everything(), false)).await;
    let deleted = delete_plain(&*ctx.storage, &key, None)
        .await
        .unwrap_or_else(|e| panic!("[{}] Delete failed: {e}", ctx.name));
    assert_ne!(
        rv_of(&stored),
        rv_of(&deleted),
        "[{}] ResourceVersion didn't change on deletion",
        ctx.name
    );
    expect_event(ctx, &mut w, "DELETED", &deleted).await;
}

/// `RunOptionalTestProgressNotify`: with `progress_notify`, an idle watch gets bookmarks whose
/// object is an empty typed object carrying only a resourceVersion (not older than the watch
/// start). The backend must send progress notifications within [`EVENT_TIMEOUT`].
pub async fn run_optional_test_progress_notify(ctx: &TestContext) {
    let input = pod("test-ns", "name");
    let key = pod_key(&input);
    let out = create(ctx, &input).await;
    let min_rv = rv_u64(&out);
    // etcd does not send progress notifications for a watch on a future revision.
    ctx.increase_rv().await;
    let opts = ListOptions {
        resource_version: rv_of(&out),
        progress_notify: true,
        ..ListOptions::default()
    };
    let mut w = watch(ctx, &key, opts).await;
    let e = expect_event_type(ctx, &mut w, "BOOKMARK", EVENT_TIMEOUT).await;
    let obj = event_object(&e).expect("bookmark object");
    let rv = rv_u64(&obj);
    assert!(
        rv >= min_rv,
        "[{}] expected a resourceVersion no smaller than {min_rv}, got {rv}",
        ctx.name
    );
    assert_json_eq(
        ctx,
        "bookmark event should contain an object with no fields set other than resourceVersion",
        &json!({"apiVersion": "v1", "kind": "Pod", "metadata": {}}),
        &without_rv(&obj),
    );
}

/// Run watch steps on a watch: upsert each object at its key and check the expected events
/// (`RunTestClusterScopedWatch` / `RunTestNamespaceScopedWatch` loop body).
pub(super) async fn run_watch_steps(
    ctx: &TestContext,
    case: &str,
    w: &mut WatchStream,
    steps: Vec<WatchStep>,
) {
    let mut current: BTreeMap<String, Value> = BTreeMap::new();
    for s in steps {
        let obj = s.obj.expect("scoped watch steps write objects");
        let key = pod_key(&obj);
        let out = upsert(ctx, &key, &obj).await;
        let expected = if s.event_type == "DELETED" {
            let prev = current
                .remove(&key)
                .unwrap_or_else(|| panic!("[{}] {case}: no previous object for {key}", ctx.name));
            with_rv(&prev, &rv_of(&out))
        } else {
            current.insert(key.clone(), out.clone());
            out
        };
        if s.expect_event {
            expect_event(ctx, w, s.event_type, &expected).await;
        }
    }
    expect_no_more_events(ctx, w, false).await;
}

/// `RunTestClusterScopedWatch`: scoping of cluster-wide watches by name and field selectors.
pub async fn run_test_cluster_scoped_watch(ctx: &TestContext) {
    let p = |n: &str| pod("", n);
    let pu = |n: &str| pod_updated("", n);
    let pa = |n: &str, node: &str| pod_assigned("", n, node);
    let cases: Vec<(&str, &str, bool, FieldSelector, Vec<WatchStep>)> = vec![
        (
            "cluster-wide watch, request without name, without field selector",
            "",
            true,
            FieldSelector::default(),
            vec![
                step(p("t1-foo1"), true, "ADDED"),
                step(pu("t1-foo1"), true, "MODIFIED"),
                step(pa("t1-foo2", "t1-bar1"), true, "ADDED"),
            ],
        ),
        (
            "cluster-wide watch, request without name, field selector with spec.nodeName",
            "",
            true,
            field_eq("spec.nodeName", "t2-bar1"),
            vec![
                step(p("t2-foo1"), false, ""),
                step(pa("t2-foo1", "t2-bar1"), true, "ADDED"),
            ],
        ),
        (
            "cluster-wide watch, request without name, field selector with spec.nodeName to filter out watch",
            "",
            true,
            field_ne("spec.nodeName", "t3-bar1"),
            vec![
                step(p("t3-foo1"), true, "ADDED"),
                step(p("t3-foo2"), true, "ADDED"),
                step(pu("t3-foo1"), true, "MODIFIED"),
                step(pa("t3-foo1", "t3-bar1"), true, "DELETED"),
            ],
        ),
        (
            "cluster-wide watch, request with name, field selector with metadata.name",
            "t4-foo1",
            false,
            field_eq("metadata.name", "t4-foo1"),
            vec![
                step(p("t4-foo1"), true, "ADDED"),
                step(p("t4-foo2"), false, ""),
                step(pu("t4-foo1"), true, "MODIFIED"),
                step(pu("t4-foo2"), false, ""),
            ],
        ),
        (
            "cluster-wide watch, request with name, field selector with metadata.name and spec.nodeName",
            "t5-foo1",
            false,
            fields(vec![
                freq("metadata.name", true, "t5-foo1"),
                freq("spec.nodeName", true, "t5-bar1"),
            ]),
            vec![
                step(p("t5-foo1"), false, ""),
                step(p("t5-foo2"), false, ""),
                step(pu("t5-foo1"), false, ""),
                step(pu("t5-foo2"), false, ""),
                step(pa("t5-foo1", "t5-bar1"), true, "ADDED"),
            ],
        ),
        (
            "cluster-wide watch, request with name, field selector with metadata.name, and with spec.nodeName to filter out watch",
            "t6-foo1",
            false,
            fields(vec![
                freq("spec.nodeName", false, "t6-bar1"),
                freq("metadata.name", true, "t6-foo1"),
            ]),
            vec![
                step(p("t6-foo1"), true, "ADDED"),
                step(p("t6-foo2"), false, ""),
                step(pu("t6-foo1"), true, "MODIFIED"),
                step(pa("t6-foo1", "t6-bar1"), true, "DELETED"),
                step(pa("t6-foo2", "t6-bar1"), false, ""),
            ],
        ),
    ];
    for (name, requested_name, recursive, selector, steps) in cases {
        // Cluster-scoped keys: `/pods/<name>`.
        let mut watch_key = "/pods".to_string();
        if !requested_name.is_empty() {
            watch_key.push('/');
            watch_key.push_str(requested_name);
        }
        let pred = pod_pred(selector);
        let l = list(ctx, "/pods", &list_opts("", pred.clone(), true)).await;
        let mut w = watch(
            ctx,
            &watch_key,
            list_opts(&l.resource_version.to_string(), pred, recursive),
        )
        .await;
        let mut current: BTreeMap<String, Value> = BTreeMap::new();
        for s in steps {
            let obj = s.obj.expect("object");
            let key = format!("/pods/{}", name_of(&obj));
            let out = upsert(ctx, &key, &obj).await;
            let expected = if s.event_type == "DELETED" {
                let prev = current.remove(&key).expect("previous object");
                with_rv(&prev, &rv_of(&out))
            } else {
                current.insert(key.clone(), out.clone());
                out
            };
            if s.expect_event {
                expect_event(ctx, &mut w, s.event_type, &expected).await;
            }
        }
        expect_no_more_events(ctx, &mut w, false).await;
        let _ = name;
    }
}

/// `RunTestNamespaceScopedWatch`: scoping of namespaced watches by request namespace, name and
/// field selectors (19 combinations).
pub async fn run_test_namespace_scoped_watch(ctx: &TestContext) {
    let p = pod;
    let pu = pod_updated;
    let pa = pod_assigned;
    let cases: Vec<(&str, &str, &str, FieldSelector, Vec<WatchStep>)> = vec![
        (
            "namespaced watch, request without name, request without namespace, without field selector",
            "",
            "",
            FieldSelector::default(),
            vec![
                step(p("t1-ns1", "t1-foo1"), true, "ADDED"),
                step(p("t1-ns2", "t1-foo2"), true, "ADDED"),
                step(pu("t1-ns1", "t1-foo1"), true, "MODIFIED"),
                step(pu("t1-ns2", "t1-foo2"), true, "MODIFIED"),
            ],
        ),
        (
            "namespaced watch, request without name, request without namespace, field selector with metadata.namespace",
            "",
            "",
            field_eq("metadata.namespace", "t2-ns1"),
            vec![
                step(p("t2-ns1", "t2-foo1"), true, "ADDED"),
                step(p("t2-ns2", "t2-foo1"), false, ""),
                step(pu("t2-ns1", "t2-foo1"), true, "MODIFIED"),
                step(pu("t2-ns2", "t2-foo1"), false, ""),
            ],
        ),
        (
            "namespaced watch, request without name, request without namespace, field selector with spec.nodename",
            "",
            "",
            field_eq("spec.nodeName", "t3-bar1"),
            vec![
                step(p("t3-ns1", "t3-foo1"), false, ""),
                step(p("t3-ns2", "t3-foo2"), false, ""),
                step(pa("t3-ns1", "t3-foo1", "t3-bar1"), true, "ADDED"),
                step(pa("t3-ns2", "t3-foo2", "t3-bar1"), true, "ADDED"),
            ],
        ),
        (
            "namespaced watch, request without name, request without namespace, field selector with spec.nodename to filter out watch",
            "",
            "",
            field_ne("spec.nodeName", "t4-bar1"),
            vec![
                step(p("t4-ns1", "t4-foo1"), true, "ADDED"),
                step(p("t4-ns1", "t4-foo2"), true, "ADDED"),
                step(pu("t4-ns1", "t4-foo1"), true, "MODIFIED"),
                step(pa("t4-ns1", "t4-foo1", "t4-bar1"), true, "DELETED"),
            ],
        ),
        (
            "namespaced watch, request without name, request with namespace, without field selector",
            "",
            "t5-ns1",
            FieldSelector::default(),
            vec![
                step(p("t5-ns1", "t5-foo1"), true, "ADDED"),
                step(p("t5-ns2", "t5-foo1"), false, ""),
                step(p("t5-ns1", "t5-foo2"), true, "ADDED"),
                step(pu("t5-ns1", "t5-foo1"), true, "MODIFIED"),
                step(pu("t5-ns2", "t5-foo1"), false, ""),
            ],
        ),
        (
            "namespaced watch, request without name, request with namespace, field selector with matched metadata.namespace",
            "",
            "t6-ns1",
            field_eq("metadata.namespace", "t6-ns1"),
            vec![
                step(p("t6-ns1", "t6-foo1"), true, "ADDED"),
                step(p("t6-ns2", "t6-foo1"), false, ""),
                step(pu("t6-ns1", "t6-foo1"), true, "MODIFIED"),
            ],
        ),
        (
            "namespaced watch, request without name, request with namespace, field selector with non-matched metadata.namespace",
            "",
            "t7-ns1",
            field_eq("metadata.namespace", "t7-ns2"),
            vec![
                step(p("t7-ns1", "t7-foo1"), false, ""),
                step(p("t7-ns2", "t7-foo1"), false, ""),
                step(pu("t7-ns1", "t7-foo1"), false, ""),
                step(pu("t7-ns2", "t7-foo1"), false, ""),
            ],
        ),
        (
            "namespaced watch, request without name, request with namespace, field selector with spec.nodename",
            "",
            "t8-ns1",
            field_eq("spec.nodeName", "t8-bar2"),
            vec![
                step(p("t8-ns1", "t8-foo1"), false, ""),
                step(pa("t8-ns1", "t8-foo1", "t8-bar1"), false, ""),
                step(pa("t8-ns2", "t8-foo1", "t8-bar2"), false, ""),
                step(pa("t8-ns1", "t8-foo1", "t8-bar2"), true, "ADDED"),
            ],
        ),
        (
            "namespaced watch, request without name, request with namespace, field selector with spec.nodename to filter out watch",
            "",
            "t9-ns2",
            field_ne("spec.nodeName", "t9-bar1"),
            vec![
                step(p("t9-ns1", "t9-foo1"), false, ""),
                step(p("t9-ns2", "t9-foo1"), true, "ADDED"),
                step(pa("t9-ns2", "t9-foo1", "t9-bar1"), true, "DELETED"),
                step(pa("t9-ns2", "t9-foo1", "t9-bar2"), true, "ADDED"),
            ],
        ),
        (
            "namespaced watch, request with name, request without namespace, field selector with metadata.name",
            "t10-foo1",
            "",
            field_eq("metadata.name", "t10-foo1"),
            vec![
                step(p("t10-ns1", "t10-foo1"), true, "ADDED"),
                step(p("t10-ns2", "t10-foo1"), true, "ADDED"),
                step(p("t10-ns1", "t10-foo2"), false, ""),
                step(pu("t10-ns1", "t10-foo1"), true, "MODIFIED"),
                step(pa("t10-ns1", "t10-foo1", "t10-bar1"), true, "MODIFIED"),
            ],
        ),
        (
            "namespaced watch, request with name, request without namespace, field selector with metadata.name and metadata.namespace",
            "t11-foo1",
            "",
            fields(vec![
                freq("metadata.name", true, "t11-foo1"),
                freq("metadata.namespace", true, "t11-ns1"),
            ]),
            vec![
                step(p("t11-ns1", "t11-foo1"), true, "ADDED"),
                step(p("t11-ns1", "t11-foo2"), false, ""),
                step(p("t11-ns2", "t11-foo1"), false, ""),
                step(pu("t11-ns1", "t11-foo1"), true, "MODIFIED"),
                step(pa("t11-ns1", "t11-foo1", "t11-bar1"), true, "MODIFIED"),
            ],
        ),
        (
            "namespaced watch, request with name, request without namespace, field selector with metadata.name and spec.nodeName",
            "t12-foo1",
            "",
            fields(vec![
                freq("metadata.name", true, "t12-foo1"),
                freq("spec.nodeName", true, "t12-bar1"),
            ]),
            vec![
                step(p("t12-ns1", "t12-foo1"), false, ""),
                step(pu("t12-ns1", "t12-foo1"), false, ""),
                step(pa("t12-ns1", "t12-foo1", "t12-bar1"), true, "ADDED"),
            ],
        ),
        (
            "namespaced watch, request with name, request without namespace, field selector with metadata.name, and with spec.nodeName to filter out watch",
            "t15-foo1",
            "",
            fields(vec![
                freq("spec.nodeName", false, "t15-bar1"),
                freq("metadata.name", true, "t15-foo1"),
            ]),
            vec![
                step(p("t15-ns1", "t15-foo1"), true, "ADDED"),
                step(p("t15-ns1", "t15-foo2"), false, ""),
                step(pu("t15-ns1", "t15-foo1"), true, "MODIFIED"),
                step(pa("t15-ns1", "t15-foo1", "t15-bar1"), true, "DELETED"),
                step(pa("t15-ns1", "t15-foo1", "t15-bar2"), true, "ADDED"),
            ],
        ),
        (
            "namespaced watch, request with name, request with namespace, with field selector metadata.name",
            "t16-foo1",
            "t16-ns1",
            field_eq("metadata.name", "t16-foo1"),
            vec![
                step(p("t16-ns1", "t16-foo1"), true, "ADDED"),
                step(p("t16-ns1", "t16-foo2"), false, ""),
                step(pu("t16-ns1", "t16-foo1"), true, "MODIFIED"),
                step(pa("t16-ns1", "t16-foo1", "t16-bar1"), true, "MODIFIED"),
            ],
        ),
        (
            "namespaced watch, request with name, request with namespace, with field selector metadata.name and metadata.namespace",
            "t17-foo2",
            "t17-ns1",
            fields(vec![
                freq("metadata.name", true, "t17-foo2"),
                freq("metadata.namespace", true, "t17-ns1"),
            ]),
            vec![
                step(p("t17-ns1", "t17-foo1"), false, ""),
                step(p("t17-ns1", "t17-foo2"), true, "ADDED"),
                step(pu("t17-ns1", "t17-foo1"), false, ""),
                step(pa("t17-ns1", "t17-foo2", "t17-bar1"), true, "MODIFIED"),
            ],
        ),
        (
            "namespaced watch, request with name, request with namespace, with field selector metadata.name, metadata.namespace and spec.nodename",
            "t18-foo1",
            "t18-ns1",
            fields(vec![
                freq("metadata.name", true, "t18-foo1"),
                freq("metadata.namespace", true, "t18-ns1"),
                freq("spec.nodeName", true, "t18-bar1"),
            ]),
            vec![
                step(p("t18-ns1", "t18-foo1"), false, ""),
                step(p("t18-ns1", "t18-foo2"), false, ""),
                step(p("t18-ns2", "t18-foo1"), false, ""),
                step(pu("t18-ns1", "t18-foo1"), false, ""),
                step(pa("t18-ns1", "t18-foo1", "t18-bar1"), true, "ADDED"),
            ],
        ),
        (
            "namespaced watch, request with name, request with namespace, with field selector metadata.name, metadata.namespace, and with spec.nodename to filter out watch",
            "t19-foo2",
            "t19-ns1",
            fields(vec![
                freq("spec.nodeName", false, "t19-bar1"),
                freq("metadata.name", true, "t19-foo2"),
                freq("metadata.namespace", true, "t19-ns1"),
            ]),
            vec![
                step(p("t19-ns1", "t19-foo1"), false, ""),
                step(p("t19-ns2", "t19-foo2"), false, ""),
                step(p("t19-ns1", "t19-foo2"), true, "ADDED"),
                step(pu("t19-ns1", "t19-foo2"), true, "MODIFIED"),
                step(pa("t19-ns1", "t19-foo2", "t19-bar1"), true, "DELETED"),
            ],
        ),
    ];
    for (name, requested_name, requested_namespace, selector, steps) in cases {
        let mut watch_key = "/pods".to_string();
        // A watch of one object in a namespace is a non-recursive watch of its key; anything
        // wider is recursive (the Go test sets `recursive` to exactly this).
        let mut recursive = true;
        if !requested_namespace.is_empty() {
            watch_key.push_str(&format!("/{requested_namespace}"));
            if !requested_name.is_empty() {
                watch_key.push_str(&format!("/{requested_name}"));
                recursive = false;
            }
        }
        let pred = pod_pred(selector);
        let l = list(ctx, "/pods", &list_opts("", pred.clone(), true)).await;
        let mut w = watch(
            ctx,
            &watch_key,
            list_opts(&l.resource_version.to_string(), pred, recursive),
        )
        .await;
        run_watch_steps(ctx, name, &mut w, steps).await;
    }
}

/// `RunTestWatchDispatchBookmarkEvents`: with `allowWatchBookmarks`, a BOOKMARK arrives within
/// the timeout only if `expected` (the cacher); the raw store (like etcd3) sends none. Without
/// `allowWatchBookmarks` nothing arrives. The watched key sees no other event here.
pub async fn run_test_watch_dispatch_bookmark_events(ctx: &TestContext, expected: bool) {
    let (key, stored) = propagate(ctx, &pod("test-ns", "foo")).await;
    let start_rv = rv_of(&stored);
    for (i, (name, allow, want)) in [
        ("allowWatchBookmarks=false", false, false),
        ("allowWatchBookmarks=true", true, expected),
    ]
    .into_iter()
    .enumerate()
    {
        let pred = SelectionPredicate {
            allow_watch_bookmarks: allow,
            ..SelectionPredicate::default()
        };
        let mut w = watch(ctx, &key, list_opts(&start_rv, pred, false)).await;
        // Create events of pods in a different namespace.
        create(ctx, &pod(&format!("other-ns-{i}"), "foo")).await;
        let wait = if want {
            Duration::from_secs(3)
        } else {
            NO_EVENT_WAIT
        };
        match recv_within(&mut w, wait).await {
            Ok(Some(WatchEvent::Bookmark(_))) if want => {}
            Ok(Some(e)) => panic!("[{}] {name}: unexpected event {}", ctx.name, describe(&e)),
            Ok(None) => panic!("[{}] {name}: watch closed", ctx.name),
            Err(()) if want => panic!("[{}] {name}: no bookmark (timeout)", ctx.name),
            Err(()) => {}
        }
    }
}

/// `RunSendInitialEventsBackwardCompatibility`: a watch with `sendInitialEvents=true` but
/// without bookmarks (and without a resourceVersion) is accepted.
pub async fn run_send_initial_events_backward_compatibility(ctx: &TestContext) {
    let opts = ListOptions {
        send_initial_events: Some(true),
        recursive: true,
        ..ListOptions::default()
    };
    let w = ctx.storage.watch("/pods", opts).await;
    assert!(w.is_ok(), "[{}] watch failed: {:?}", ctx.name, w.err());
}

/// `RunWatchSemantics`: the matrix resourceVersion (unset, 0, 1, current) × allowWatchBookmarks
/// × sendInitialEvents, plus the legacy cases: the initial ADDED events, the
/// `k8s.io/initial-events-end` bookmark (with a resourceVersion at least that of the last
/// object), then exactly the later events. Scenarios run one after the other on the same store,
/// each in its own namespace.
pub async fn run_watch_semantics(ctx: &TestContext) {
    struct Scenario {
        name: &'static str,
        allow_watch_bookmarks: bool,
        send_initial_events: Option<bool>,
        resource_version: &'static str,
        use_current_rv: bool,
        expect_initial_events: bool,
        expect_bookmark: bool,
    }
    let sc = |name, allow, sie: Option<bool>, rv, current, initial, bookmark| Scenario {
        name,
        allow_watch_bookmarks: allow,
        send_initial_events: sie,
        resource_version: rv,
        use_current_rv: current,
        expect_initial_events: initial,
        expect_bookmark: bookmark,
    };
    let (t, f) = (Some(true), Some(false));
    let scenarios = vec![
        sc(
            "allowWatchBookmarks=true, sendInitialEvents=true, RV=unset",
            true,
            t,
            "",
            false,
            true,
            true,
        ),
        sc(
            "allowWatchBookmarks=true, sendInitialEvents=false, RV=unset",
            true,
            f,
            "",
            false,
            false,
            false,
        ),
        sc(
            "allowWatchBookmarks=false, sendInitialEvents=false, RV=unset",
            false,
            f,
            "",
            false,
            false,
            false,
        ),
        sc(
            "allowWatchBookmarks=false, sendInitialEvents=true, RV=unset",
            false,
            t,
            "",
            false,
            true,
            false,
        ),
        sc(
            "allowWatchBookmarks=true, sendInitialEvents=true, RV=0",
            true,
            t,
            "0",
            false,
            true,
            true,
        ),
        sc(
            "allowWatchBookmarks=true, sendInitialEvents=false, RV=0",
            true,
            f,
            "0",
            false,
            false,
            false,
        ),
        sc(
            "allowWatchBookmarks=false, sendInitialEvents=false, RV=0",
            false,
            f,
            "0",
            false,
            false,
            false,
        ),
        sc(
            "allowWatchBookmarks=false, sendInitialEvents=true, RV=0",
            false,
            t,
            "0",
            false,
            true,
            false,
        ),
        sc(
            "allowWatchBookmarks=true, sendInitialEvents=true, RV=1",
            true,
            t,
            "1",
            false,
            true,
            true,
        ),
        sc(
            "allowWatchBookmarks=true, sendInitialEvents=false, RV=1",
            true,
            f,
            "1",
            false,
            true,
            false,
        ),
        sc(
            "allowWatchBookmarks=false, sendInitialEvents=false, RV=1",
            false,
            f,
            "1",
            false,
            true,
            false,
        ),
        sc(
            "allowWatchBookmarks=false, sendInitialEvents=true, RV=1",
            false,
            t,
            "1",
            false,
            true,
            false,
        ),
        sc(
            "allowWatchBookmarks=true, sendInitialEvents=true, RV=useCurrentRV",
            true,
            t,
            "",
            true,
            true,
            true,
        ),
        sc(
            "allowWatchBookmarks=true, sendInitialEvents=false, RV=useCurrentRV",
            true,
            f,
            "",
            true,
            false,
            false,
        ),
        sc(
            "allowWatchBookmarks=false, sendInitialEvents=false, RV=useCurrentRV",
            false,
            f,
            "",
            true,
            false,
            false,
        ),
        sc(
            "allowWatchBookmarks=false, sendInitialEvents=true, RV=useCurrentRV",
            false,
            t,
            "",
            true,
            true,
            false,
        ),
        sc("legacy, RV=0", false, None, "0", false, true, false),
        sc("legacy, RV=unset", false, None, "", false, true, false),
    ];
    for (idx, s) in scenarios.into_iter().enumerate() {
        let ns = format!("ns-{idx}");
        let mut created = Vec::new();
        for suffix in ["1", "2", "3"] {
            let mut p = make_pod(suffix);
            set_meta(&mut p, "namespace", json!(ns));
            created.push(create(ctx, &p).await);
        }
        // This list makes sure a cache has seen the created pods.
        let l = list(
            ctx,
            &format!("/pods/{ns}"),
            &ListOptions {
                resource_version: rv_of(created.last().unwrap()),
                resource_version_match: ResourceVersionMatch::NotOlderThan,
                recursive: true,
                ..ListOptions::default()
            },
        )
        .await;
        assert_eq!(
            l.items.len(),
            created.len(),
            "[{}] {}: list",
            ctx.name,
            s.name
        );
        let rv = if s.use_current_rv {
            ctx.storage
                .current_resource_version()
                .await
                .unwrap_or_else(|e| panic!("[{}] GetCurrentResourceVersion: {e}", ctx.name))
                .to_string()
        } else {
            s.resource_version.to_string()
        };
        let opts = ListOptions {
            resource_version: rv,
            predicate: SelectionPredicate {
                allow_watch_bookmarks: s.allow_watch_bookmarks,
                ..SelectionPredicate::default()
            },
            recursive: true,
            send_initial_events: s.send_initial_events,
            ..ListOptions::default()
        };
        let mut w = ctx
            .storage
            .watch(&format!("/pods/{ns}"), opts)
            .await
            .unwrap_or_else(|e| panic!("[{}] {}: failed to create watch: {e}", ctx.name, s.name));
        // make sure we only get initial events
        if s.expect_initial_events {
            for p in &created {
                expect_event(ctx, &mut w, "ADDED", p).await;
            }
        }
        // make sure that the actual bookmark has at least RV >= the expected one
        if s.expect_bookmark {
            let e = next_event(
                ctx,
                &mut w,
                &format!("{}: initial-events-end bookmark", s.name),
            )
            .await;
            let obj = match &e {
                WatchEvent::Bookmark(o) => o.clone(),
                other => panic!(
                    "[{}] {}: expected the initial-events-end BOOKMARK, got {}",
                    ctx.name,
                    s.name,
                    describe(other)
                ),
            };
            let min = rv_u64(created.last().unwrap());
            assert!(
                rv_u64(&obj) >= min,
                "[{}] {}: bookmark resourceVersion {} < {min}",
                ctx.name,
                s.name,
                rv_of(&obj)
            );
            assert_json_eq(
                ctx,
                &format!("{}: incorrect event", s.name),
                &initial_events_end_bookmark(&rv_of(&obj)),
                &obj,
            );
        }
        // pods created after the watch was established
        let mut after = Vec::new();
        for suffix in ["4", "5"] {
            let mut p = make_pod(suffix);
            set_meta(&mut p, "namespace", json!(ns));
            after.push(("ADDED", create(ctx, &p).await));
        }
        expect_events_ignoring_bookmarks(ctx, &mut w, &after).await;
        expect_no_more_events(ctx, &mut w, true).await;
    }
}

/// `RunWatchSemanticInitialEventsExtended`: the bookmark that ends the initial events carries
/// the global revision, even when the newest write was in another namespace. Needs a backend of
/// its own (it asserts the global revision).
pub async fn run_watch_semantic_initial_events_extended(ctx: &TestContext) {
    let ns = "ns-foo";
    let mut initial = Vec::new();
    for suffix in ["1", "2", "3", "4", "5"] {
        let mut p = make_pod(suffix);
        set_meta(&mut p, "namespace", json!(ns));
        initial.push(create(ctx, &p).await);
    }
    // add a pod to a different namespace to advance the global RV
    let mut other = make_pod("1");
    set_meta(&mut other, "namespace", json!("other-ns-foo"));
    let other = create(ctx, &other).await;
    let opts = ListOptions {
        predicate: SelectionPredicate {
            allow_watch_bookmarks: true,
            ..SelectionPredicate::default()
        },
        recursive: true,
        send_initial_events: Some(true),
        ..ListOptions::default()
    };
    let mut w = watch(ctx, &format!("/pods/{ns}"), opts).await;
    for p in &initial {
        expect_event(ctx, &mut w, "ADDED", p).await;
    }
    expect_event(
        ctx,
        &mut w,
        "BOOKMARK",
        &initial_events_end_bookmark(&rv_of(&other)),
    )
    .await;
    expect_no_more_events(ctx, &mut w, false).await;
}

/// `RunWatchListMatchSingle`: a watch-list with a `metadata.name` field selector sends only that
/// object, then the bookmark with the global revision. Needs a backend of its own.
pub async fn run_watch_list_match_single(ctx: &TestContext) {
    let ns = "ns-foo";
    let mut first = make_pod("1");
    set_meta(&mut first, "namespace", json!(ns));
    let expected = create(ctx, &first).await;
    let mut last_added = Value::Null;
    for suffix in ["2", "3", "4", "5"] {
        let mut p = make_pod(suffix);
        set_meta(&mut p, "namespace", json!(ns));
        last_added = create(ctx, &p).await;
    }
    let opts = ListOptions {
        predicate: SelectionPredicate {
            allow_watch_bookmarks: true,
            ..pod_pred(field_eq("metadata.name", "pod-1"))
        },
        recursive: true,
        send_initial_events: Some(true),
        ..ListOptions::default()
    };
    let mut w = watch(ctx, "/pods", opts).await;
    expect_event(ctx, &mut w, "ADDED", &expected).await;
    expect_event(
        ctx,
        &mut w,
        "BOOKMARK",
        &initial_events_end_bookmark(&rv_of(&last_added)),
    )
    .await;
    expect_no_more_events(ctx, &mut w, false).await;
}

/// `RunWatchErrorIsBlockingFurtherEvents`: after an ERROR event (an object that cannot be
/// transformed), no later event is delivered and the watch closes.
pub async fn run_watch_error_is_blocking_further_events(ctx: &TestContext) {
    let Some(transformer) = ctx.transformer("RunWatchErrorIsBlockingFurtherEvents") else {
        return;
    };
    let foo_pod = create(ctx, &pod("test", "foo")).await;
    create(ctx, &pod("test", "bar")).await;
    // Update the transformer so that foo and bar become effectively corrupted.
    let _revert = transformer.update(|s| s.prefix = b"other-prefix".to_vec());
    create(ctx, &pod("test", "baz")).await;
    let opts = list_opts(&rv_of(&foo_pod), everything(), true);
    // Run concurrent watches to raise the odds of hitting a race in one of them.
    let mut tasks = Vec::new();
    for _ in 0..10 {
        let storage = ctx.storage.clone();
        let opts = opts.clone();
        let name = ctx.name;
        tasks.push(tokio::spawn(async move {
            let mut w = storage
                .watch("/pods", opts)
                .await
                .unwrap_or_else(|e| panic!("[{name}] failed to create watch: {e}"));
            // The watch starts after foo: bar fails to transform and produces an ERROR; the
            // ADDED event for baz must not follow.
            let mut seen = Vec::new();
            loop {
                match tokio::time::timeout(EVENT_TIMEOUT, w.recv()).await {
                    Ok(Some(e)) => seen.push(e),
                    Ok(None) => break,
                    Err(_) => panic!("[{name}] watch did not close after its ERROR event"),
                }
            }
            seen
        }));
    }
    for t in tasks {
        let seen = t.await.expect("watch task");
        assert!(
            !seen.is_empty(),
            "[{}] expected an ERROR event, the watch closed without one",
            ctx.name
        );
        for e in &seen {
            assert!(
                matches!(e, WatchEvent::Error(_)),
                "[{}] unexpected event: {}",
                ctx.name,
                describe(e)
            );
        }
    }
}
