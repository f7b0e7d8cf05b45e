//! `store_tests.go`: create, get, delete, list, paging, guaranteed update, stats, keys.

use super::utils::*;
use crate::continue_token;
use crate::errors::{Result, StorageError};
use crate::interfaces::{
    GetOptions, ListOptions, Preconditions, ResourceVersionMatch, ResponseMeta, UpdateOutcome,
};
use crate::selection::{default_attrs, FieldSelector, SelectionPredicate};
use crate::testing::OwnedReads;
use futures::future::BoxFuture;
use serde_json::{json, Value};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

// ---------------------------------------------------------------------------------------------
// store_tests.go: create, get, delete.
// ---------------------------------------------------------------------------------------------

/// `RunTestCreate`: create on an empty key returns the object with a resourceVersion; an object
/// with a resourceVersion is refused (`ErrResourceVersionSetOnCreate`).
pub async fn run_test_create(ctx: &TestContext) {
    // successful create
    let input = pod("test-ns", "foo");
    let key = pod_key(&input);
    assert_not_found(ctx, "get before create", get(ctx, &key).await);
    let out = ctx
        .storage
        .create(&key, input.clone(), 0)
        .await
        .unwrap_or_else(|e| panic!("[{}] successful create: {e}", ctx.name));
    assert_eq!(name_of(&out), "foo", "[{}] pod name", ctx.name);
    assert!(
        !rv_of(&out).is_empty(),
        "[{}] output should have non-empty resource version",
        ctx.name
    );
    assert_json_eq(ctx, "created object", &with_rv(&input, &rv_of(&out)), &out);
    ctx.validate_key(&key).await;

    // create with ResourceVersion set
    let mut input = pod("test-ns", "bar");
    set_rv(&mut input, "1");
    let key = pod_key(&input);
    assert_not_found(ctx, "get before create", get(ctx, &key).await);
    match ctx.storage.create(&key, input, 0).await {
        Err(StorageError::Internal(m))
            if m.contains("resourceVersion should not be set on objects to be created") => {}
        other => panic!(
            "[{}] create with ResourceVersion set: expected ErrResourceVersionSetOnCreate, got {other:?}",
            ctx.name
        ),
    }
}

/// `RunTestCreateWithTTL`: an object created with ttl=1 expires and a watch from its
/// resourceVersion sees DELETED.
pub async fn run_test_create_with_ttl(ctx: &TestContext) {
    let input = pod("test-ns", "foo");
    let key = pod_key(&input);
    let out = ctx
        .storage
        .create(&key, input, 1)
        .await
        .unwrap_or_else(|e| panic!("[{}] Create failed: {e}", ctx.name));
    let mut w = watch(ctx, &key, list_opts(&rv_of(&out), everything(), false)).await;
    expect_event_type(ctx, &mut w, "DELETED", TTL_TIMEOUT).await;
}

/// `RunTestCreateWithKeyExist`: a second create on the same key is `KeyExists`.
pub async fn run_test_create_with_key_exist(ctx: &TestContext) {
    let obj = pod("test-ns", "foo");
    let (key, _) = propagate(ctx, &obj).await;
    match ctx.storage.create(&key, obj, 0).await {
        Err(StorageError::KeyExists { .. }) => {}
        other => panic!("[{}] expecting key exists error, got {other:?}", ctx.name),
    }
}

/// `RunTestGet`: Get with resourceVersion "", "0", the creation RV, the current RV and the
/// latest RV; a too large RV; missing keys with and without `ignore_not_found`.
pub async fn run_test_get(ctx: &TestContext) {
    let (key, created) = propagate(ctx, &pod("test-ns", "foo")).await;
    // update the object once to allow get by exact resource version to be tested
    let mut update_obj = created.clone();
    set_annotations(&mut update_obj, &[("test-annotation", "1")]);
    let stored = ctx
        .storage
        .guaranteed_update(
            &key,
            true,
            &Preconditions::default(),
            &mut replace_with(update_obj, Some(1)),
            None,
        )
        .await
        .unwrap_or_else(|e| panic!("[{}] Update failed: {e}", ctx.name));
    // an additional object increments the resource version above the foo object's
    let last_updated = create(ctx, &pod("test-ns", "bar")).await;
    let current_rv = rv_of(&stored);
    let last_rv = rv_of(&last_updated);

    struct Case<'a> {
        name: &'a str,
        key: &'a str,
        ignore_not_found: bool,
        rv: String,
        expect_not_found: bool,
        expect_too_large: bool,
        // `None` in an alternative is the zero object (`IgnoreNotFound`).
        alternatives: Vec<Option<Value>>,
    }
    let cases = vec![
        Case {
            name: "get existing",
            key: &key,
            ignore_not_found: false,
            rv: String::new(),
            expect_not_found: false,
            expect_too_large: false,
            alternatives: vec![Some(stored.clone())],
        },
        Case {
            name: "resource version 0",
            key: &key,
            ignore_not_found: true,
            rv: "0".into(),
            expect_not_found: false,
            expect_too_large: false,
            alternatives: vec![None, Some(created.clone()), Some(stored.clone())],
        },
        Case {
            name: "object created resource version",
            key: &key,
            ignore_not_found: false,
            rv: rv_of(&created),
            expect_not_found: false,
            expect_too_large: false,
            alternatives: vec![Some(created.clone()), Some(stored.clone())],
        },
        Case {
            name: "current object resource version, match=NotOlderThan",
            key: &key,
            ignore_not_found: false,
            rv: current_rv.clone(),
            expect_not_found: false,
            expect_too_large: false,
            alternatives: vec![Some(stored.clone())],
        },
        Case {
            name: "latest resource version",
            key: &key,
            ignore_not_found: false,
            rv: last_rv.clone(),
            expect_not_found: false,
            expect_too_large: false,
            alternatives: vec![Some(stored.clone())],
        },
        Case {
            name: "too high resource version",
            key: &key,
            ignore_not_found: false,
            rv: i64::MAX.to_string(),
            expect_not_found: false,
            expect_too_large: true,
            alternatives: vec![],
        },
        Case {
            name: "get non-existing",
            key: "/pods/non-existing",
            ignore_not_found: false,
            rv: String::new(),
            expect_not_found: true,
            expect_too_large: false,
            alternatives: vec![],
        },
        Case {
            name: "get non-existing, ignore not found",
            key: "/pods/non-existing",
            ignore_not_found: true,
            rv: String::new(),
            expect_not_found: false,
            expect_too_large: false,
            alternatives: vec![None],
        },
    ];
    for tt in cases {
        let opts = GetOptions {
            resource_version: tt.rv.clone(),
            ignore_not_found: tt.ignore_not_found,
        };
        let res = ctx.storage.get_owned(tt.key, &opts).await;
        if tt.expect_not_found {
            assert!(
                matches!(&res, Err(e) if e.is_not_found()),
                "[{}] {}: expecting not found error, got {res:?}",
                ctx.name,
                tt.name
            );
            continue;
        }
        if tt.expect_too_large {
            assert!(
                matches!(&res, Err(e) if is_too_large(e)),
                "[{}] {}: expecting resource version too high error, got {res:?}",
                ctx.name,
                tt.name
            );
            continue;
        }
        let out = res.unwrap_or_else(|e| panic!("[{}] {}: Get failed: {e}", ctx.name, tt.name));
        assert!(
            tt.alternatives.contains(&out),
            "[{}] {}: incorrect pod {}, expected one of {}",
            ctx.name,
            tt.name,
            pretty(&out),
            pretty(&tt.alternatives)
        );
    }
}

/// `RunTestUnconditionalDelete`: delete returns the stored object with a new resourceVersion;
/// a missing key is NotFound.
pub async fn run_test_unconditional_delete(ctx: &TestContext) {
    let (key, stored) = propagate(ctx, &pod("test-ns", "foo")).await;
    // existing key
    let out = delete_plain(&*ctx.storage, &key, None)
        .await
        .unwrap_or_else(|e| panic!("[{}] Delete failed: {e}", ctx.name));
    assert_ne!(
        rv_of(&stored),
        rv_of(&out),
        "[{}] expecting resource version to be updated",
        ctx.name
    );
    assert_json_eq(
        ctx,
        "incorrect pod",
        &stored,
        &with_rv(&out, &rv_of(&stored)),
    );
    // non-existing key
    match delete_plain(&*ctx.storage, "/pods/non-existing", None).await {
        Err(e) if e.is_not_found() => {}
        other => panic!("[{}] expecting not found error, got {other:?}", ctx.name),
    }
}

/// `RunTestConditionalDelete`: a matching UID precondition deletes, a mismatch is `InvalidObj`.
pub async fn run_test_conditional_delete(ctx: &TestContext) {
    let mut obj = pod("test-ns", "foo");
    set_uid(&mut obj, "A");
    let (key, stored) = propagate(ctx, &obj).await;
    // UID match
    let pre = Preconditions {
        uid: Some("A".into()),
        resource_version: None,
    };
    let out = ctx
        .storage
        .delete(&key, &pre, &mut validate_all(), None)
        .await
        .unwrap_or_else(|e| panic!("[{}] UID match: Delete failed: {e}", ctx.name));
    assert_ne!(
        rv_of(&stored),
        rv_of(&out),
        "[{}] expecting resource version to be updated",
        ctx.name
    );
    assert_json_eq(
        ctx,
        "incorrect pod",
        &stored,
        &with_rv(&out, &rv_of(&stored)),
    );
    let (key, _) = propagate(ctx, &obj).await;
    // UID mismatch
    let pre = Preconditions {
        uid: Some("B".into()),
        resource_version: None,
    };
    match ctx
        .storage
        .delete(&key, &pre, &mut validate_all(), None)
        .await
    {
        Err(e) if e.is_invalid_obj() => {}
        other => panic!(
            "[{}] UID mismatch: expecting invalid UID error, got {other:?}",
            ctx.name
        ),
    }
}

/// `RunTestDeleteWithSuggestion`: delete with a fresh cached object.
pub async fn run_test_delete_with_suggestion(ctx: &TestContext) {
    let (key, original) = propagate(ctx, &pod("test-ns", "name")).await;
    delete_plain(&*ctx.storage, &key, Some(original))
        .await
        .unwrap_or_else(|e| panic!("[{}] Unexpected failure during deletion: {e}", ctx.name));
    assert_not_found(ctx, "reading deleted object", get(ctx, &key).await);
}

/// `RunTestDeleteWithSuggestionAndConflict`: a stale cached object makes the delete retry; the
/// latest object is deleted and returned.
pub async fn run_test_delete_with_suggestion_and_conflict(ctx: &TestContext) {
    let (key, original) = propagate(ctx, &pod("test-ns", "name")).await;
    // First update, so the original is outdated.
    let updated = update_with(ctx, &key, |mut p| {
        set_labels(&mut p, &[("foo", "bar")]);
        Ok(p)
    })
    .await;
    let out = delete_plain(&*ctx.storage, &key, Some(original))
        .await
        .unwrap_or_else(|e| panic!("[{}] Unexpected failure during deletion: {e}", ctx.name));
    assert_not_found(ctx, "reading deleted object", get(ctx, &key).await);
    assert_json_eq(ctx, "incorrect pod", &with_rv(&updated, &rv_of(&out)), &out);
}

/// `RunTestDeleteWithConflict`: an update that happens during `validate_deletion` makes the
/// delete retry; the updated object is deleted and returned.
pub async fn run_test_delete_with_conflict(ctx: &TestContext) {
    let (key, _) = propagate(ctx, &pod("test-ns", "name")).await;
    let validate_count = Arc::new(AtomicUsize::new(0));
    let update_count = Arc::new(AtomicUsize::new(0));
    let updated: Arc<Mutex<Option<Value>>> = Arc::new(Mutex::new(None));
    let (vc, uc, up, storage, k) = (
        validate_count.clone(),
        update_count.clone(),
        updated.clone(),
        ctx.storage.clone(),
        key.clone(),
    );
    // Simulate a conflicting update in the middle of delete.
    let mut validate = move |_obj: Value| -> BoxFuture<'static, Result<()>> {
        let n = vc.fetch_add(1, Ordering::SeqCst) + 1;
        let (uc, up, storage, k) = (uc.clone(), up.clone(), storage.clone(), k.clone());
        Box::pin(async move {
            if n > 1 {
                return Ok(());
            }
            let out = storage
                .guaranteed_update(
                    &k,
                    false,
                    &Preconditions::default(),
                    &mut simple_update(|mut p| {
                        set_labels(&mut p, &[("foo", "bar")]);
                        Ok(p)
                    }),
                    None,
                )
                .await
                .expect("Unexpected failure during update");
            *up.lock().unwrap() = Some(out);
            uc.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })
    };
    let out = ctx
        .storage
        .delete(&key, &Preconditions::default(), &mut validate, None)
        .await
        .unwrap_or_else(|e| panic!("[{}] Unexpected failure during deletion: {e}", ctx.name));
    assert_eq!(
        validate_count.load(Ordering::SeqCst),
        2,
        "[{}] validateCount",
        ctx.name
    );
    assert_eq!(
        update_count.load(Ordering::SeqCst),
        1,
        "[{}] updateCount",
        ctx.name
    );
    assert_not_found(ctx, "reading deleted object", get(ctx, &key).await);
    let updated = updated.lock().unwrap().clone().expect("updated pod");
    assert_json_eq(ctx, "incorrect pod", &with_rv(&updated, &rv_of(&out)), &out);
}

/// `RunTestDeleteWithSuggestionOfDeletedObject`: a cached object that was deleted since gives
/// NotFound.
pub async fn run_test_delete_with_suggestion_of_deleted_object(ctx: &TestContext) {
    let (key, original) = propagate(ctx, &pod("test-ns", "name")).await;
    delete_plain(&*ctx.storage, &key, Some(original.clone()))
        .await
        .unwrap_or_else(|e| panic!("[{}] Unexpected failure during deletion: {e}", ctx.name));
    match delete_plain(&*ctx.storage, &key, Some(original)).await {
        Err(e) if e.is_not_found() => {}
        other => panic!(
            "[{}] deleting with a stale object: expected not-found, got {other:?}",
            ctx.name
        ),
    }
}

pub(super) fn counting_validator(
    calls: Arc<AtomicUsize>,
    check: impl Fn(&Value) -> Result<()> + Send + 'static,
) -> impl FnMut(Value) -> BoxFuture<'static, Result<()>> + Send + 'static {
    move |obj| {
        calls.fetch_add(1, Ordering::SeqCst);
        let r = check(&obj);
        Box::pin(async move { r })
    }
}

pub(super) fn label_of(obj: &Value, key: &str) -> Option<String> {
    obj.pointer(&format!("/metadata/labels/{key}"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// `RunTestValidateDeletionWithSuggestion`: a validation failure on a fresh cached object is
/// returned after one call; on a stale one, validation runs again on the live object.
pub async fn run_test_validate_deletion_with_suggestion(ctx: &TestContext) {
    let (key, original) = propagate(ctx, &pod("test-ns", "name")).await;
    // Check that validating a fresh object is called once and fails.
    let calls = Arc::new(AtomicUsize::new(0));
    let mut validate_nothing =
        counting_validator(calls.clone(), |_| Err(test_error("validation error")));
    let err = ctx
        .storage
        .delete(
            &key,
            &Preconditions::default(),
            &mut validate_nothing,
            Some(original.clone()),
        )
        .await
        .expect_err("validation should fail the delete");
    assert_eq!(
        err.aborted_as::<TestError>(),
        Some(&TestError("validation error".into())),
        "[{}] Unexpected failure during deletion: {err:?}",
        ctx.name
    );
    assert_eq!(
        calls.load(Ordering::SeqCst),
        1,
        "[{}] validate function should have been called once",
        ctx.name
    );
    // First update, so the original is outdated.
    update_with(ctx, &key, |mut p| {
        set_labels(&mut p, &[("foo", "bar")]);
        Ok(p)
    })
    .await;
    let calls = Arc::new(AtomicUsize::new(0));
    let mut validate_fresh = counting_validator(calls.clone(), |p| {
        if label_of(p, "foo").as_deref() != Some("bar") {
            return Err(test_error("stale object"));
        }
        Ok(())
    });
    ctx.storage
        .delete(
            &key,
            &Preconditions::default(),
            &mut validate_fresh,
            Some(original),
        )
        .await
        .unwrap_or_else(|e| panic!("[{}] Unexpected failure during deletion: {e}", ctx.name));
    // Implementations may ignore the suggestion, in which case one call is possible.
    assert!(
        calls.load(Ordering::SeqCst) <= 2,
        "[{}] validate function should have been called at most twice, called {}",
        ctx.name,
        calls.load(Ordering::SeqCst)
    );
    assert_not_found(ctx, "reading deleted object", get(ctx, &key).await);
}

/// `RunTestValidateDeletionWithOnlySuggestionValid`: the cached object passes validation but
/// the live one does not: the validation error is returned and the object stays.
pub async fn run_test_validate_deletion_with_only_suggestion_valid(ctx: &TestContext) {
    let (key, original) = propagate(
        ctx,
        &with_labels(&pod("test-ns", "name"), &[("foo", "bar")]),
    )
    .await;
    let calls = Arc::new(AtomicUsize::new(0));
    let mut validate_nothing =
        counting_validator(calls.clone(), |_| Err(test_error("validation error")));
    let err = ctx
        .storage
        .delete(
            &key,
            &Preconditions::default(),
            &mut validate_nothing,
            Some(original.clone()),
        )
        .await
        .expect_err("validation should fail the delete");
    assert_eq!(
        err.aborted_as::<TestError>(),
        Some(&TestError("validation error".into())),
        "[{}] Unexpected failure during deletion: {err:?}",
        ctx.name
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1, "[{}] calls", ctx.name);
    // First update, so the original is outdated.
    let updated = update_with(ctx, &key, |mut p| {
        set_labels(&mut p, &[("foo", "barbar")]);
        Ok(p)
    })
    .await;
    let calls = Arc::new(AtomicUsize::new(0));
    let mut validate_fresh = counting_validator(calls.clone(), |p| {
        if label_of(p, "foo").as_deref() != Some("bar") {
            return Err(test_error("stale object"));
        }
        Ok(())
    });
    let res = ctx
        .storage
        .delete(
            &key,
            &Preconditions::default(),
            &mut validate_fresh,
            Some(original),
        )
        .await;
    match &res {
        Err(e) if e.to_string() == "stale object" => {}
        other => panic!("[{}] expecting stale object error, got {other:?}", ctx.name),
    }
    assert!(
        calls.load(Ordering::SeqCst) <= 2,
        "[{}] validate function should have been called at most twice",
        ctx.name
    );
    let out = get(ctx, &key)
        .await
        .unwrap_or_else(|e| panic!("[{}] Unexpected error on reading object: {e}", ctx.name));
    assert_json_eq(ctx, "incorrect pod", &updated, &out.unwrap_or_default());
}

/// `RunTestPreconditionalDeleteWithSuggestion`: the precondition fails on the stale cached
/// object but holds on the live one: the delete succeeds.
pub async fn run_test_preconditional_delete_with_suggestion(ctx: &TestContext) {
    let (key, original) = propagate(ctx, &pod("test-ns", "name")).await;
    update_with(ctx, &key, |mut p| {
        set_uid(&mut p, "myUID");
        Ok(p)
    })
    .await;
    let pre = Preconditions {
        uid: Some("myUID".into()),
        resource_version: None,
    };
    ctx.storage
        .delete(&key, &pre, &mut validate_all(), Some(original))
        .await
        .unwrap_or_else(|e| panic!("[{}] Unexpected failure during deletion: {e}", ctx.name));
    assert_not_found(ctx, "reading deleted object", get(ctx, &key).await);
}

/// `RunTestPreconditionalDeleteWithOnlySuggestionPass`: the precondition holds on the cached
/// object only: `InvalidObj`, and the object stays.
pub async fn run_test_preconditional_delete_with_only_suggestion_pass(ctx: &TestContext) {
    let mut obj = pod("test-ns", "name");
    set_uid(&mut obj, "myUID");
    let (key, original) = propagate(ctx, &obj).await;
    let updated = update_with(ctx, &key, |mut p| {
        set_uid(&mut p, "otherUID");
        Ok(p)
    })
    .await;
    let pre = Preconditions {
        uid: Some("myUID".into()),
        resource_version: None,
    };
    match ctx
        .storage
        .delete(&key, &pre, &mut validate_all(), Some(original))
        .await
    {
        Err(e) if e.is_invalid_obj() => {}
        other => panic!("[{}] expecting invalid UID error, got {other:?}", ctx.name),
    }
    let out = get(ctx, &key)
        .await
        .unwrap_or_else(|e| panic!("[{}] Unexpected error on reading object: {e}", ctx.name));
    assert_json_eq(ctx, "incorrect pod", &updated, &out.unwrap_or_default());
}

// ---------------------------------------------------------------------------------------------
// store_tests.go: lists.
// ---------------------------------------------------------------------------------------------

/// `seedMultiLevelData`: `first/bar`, `second/{bar,foo,baz}`, `third/{barfoo,foo}`; `first/bar`
/// is then updated (`spec.nodeName: fakeNode`) and `second/baz` deleted. Returns the list
/// resourceVersion before any write, the six created objects (in creation order) and the
/// updated `first/bar`.
pub(super) async fn seed_multi_level_data(ctx: &TestContext) -> (String, Vec<Value>, Value) {
    let preset = [
        pod("first", "bar"),
        pod("second", "bar"),
        pod("second", "foo"),
        pod("third", "barfoo"),
        pod("third", "foo"),
        pod("second", "baz"),
    ];
    let initial = list(ctx, "/pods/", &list_opts("", everything(), true)).await;
    let initial_rv = initial.resource_version.to_string();
    let mut created = Vec::new();
    for p in &preset {
        created.push(create(ctx, p).await);
    }
    let updated = ctx
        .storage
        .guaranteed_update(
            &pod_key(&preset[0]),
            true,
            &Preconditions::default(),
            &mut simple_update(|mut p| {
                p["spec"]["nodeName"] = json!("fakeNode");
                Ok(p)
            }),
            None,
        )
        .await
        .unwrap_or_else(|e| panic!("[{}] failed to update object: {e}", ctx.name));
    delete_plain(&*ctx.storage, &pod_key(&preset[5]), None)
        .await
        .unwrap_or_else(|e| panic!("[{}] failed to delete object: {e}", ctx.name));
    (initial_rv, created, updated)
}

/// One case of [`run_test_list`] (the table of `RunTestList`).
#[derive(Default)]
pub(super) struct ListCase {
    name: &'static str,
    rv: String,
    /// `resourceVersionMatch` as the query parameter spells it (`""`, `Exact`, `NotOlderThan`,
    /// or an invalid value).
    rv_match: &'static str,
    prefix: &'static str,
    pred: Option<SelectionPredicate>,
    expected_out: Vec<Value>,
    expected_alternatives: Option<Vec<Vec<Value>>>,
    expect_continue: bool,
    expect_continue_exact: Option<String>,
    expected_remaining_item_count: Option<i64>,
    expect_error: bool,
    expect_rv_too_large: bool,
    expect_rv_too_old: bool,
    expect_continue_too_old: bool,
    expect_rv: Option<String>,
    expect_rv_not_older_than: Option<String>,
}

pub(super) fn decode_token(token: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_else(|_| token.to_string())
}

/// `RunTestList`: the big table of list cases over a multi-level tree (resourceVersion ""/0/N,
/// resourceVersionMatch Exact/NotOlderThan/invalid, limit, continue, selectors with paging,
/// remainingItemCount, flattened recursion, too old and too large revisions), after a
/// compaction at the first write. Needs a backend of its own ([`TestContext::compact`]).
pub async fn run_test_list(ctx: &TestContext) {
    let (initial_rv, created, updated) = seed_multi_level_data(ctx).await;
    let c = |i: usize| created[i].clone();
    let crv = |i: usize| rv_of(&created[i]);
    let crv_i = |i: usize| rv_u64(&created[i]) as i64;
    let ckey = |i: usize| format!("{}/{}\0", namespace_of(&created[i]), name_of(&created[i]));

    let first_list = list(ctx, "/pods/second", &list_opts("", everything(), true)).await;
    let list_rv = first_list.resource_version.to_string();
    let continue_rv = first_list.resource_version as i64;
    let second_continuation =
        continue_token::encode("/pods/second/foo", "/pods/second/", continue_rv).unwrap();

    // Compact and increase RV to test consistent List.
    ctx.compact(rv_u64(&created[0])).await;
    let current_rv = (continue_rv + 1).to_string();

    let everything_paged = |limit: i64, cont: &str| SelectionPredicate {
        limit,
        continue_token: cont.to_string(),
        ..SelectionPredicate::default()
    };
    let name_pred =
        |value: &str, limit: i64| pod_pred_paged(field_eq("metadata.name", value), limit, "");

    let cases: Vec<ListCase> = vec![
        ListCase {
            name: "rejects invalid resource version",
            prefix: "/pods/",
            rv: "abc".into(),
            expect_error: true,
            ..Default::default()
        },
        ListCase {
            name: "rejects resource version and continue token",
            prefix: "/pods/",
            pred: Some(everything_paged(1, &second_continuation)),
            rv: "1".into(),
            expect_error: true,
            ..Default::default()
        },
        ListCase {
            name: "rejects resource version set too high",
            prefix: "/pods/",
            rv: i64::MAX.to_string(),
            expect_rv_too_large: true,
            ..Default::default()
        },
        ListCase {
            name: "test List on existing key",
            prefix: "/pods/first/",
            expected_out: vec![updated.clone()],
            ..Default::default()
        },
        ListCase {
            name: "test List on existing key with resource version set to 0",
            prefix: "/pods/first/",
            expected_alternatives: Some(vec![vec![], vec![updated.clone()]]),
            rv: "0".into(),
            ..Default::default()
        },
        ListCase {
            name: "test List on existing key with resource version set before update, match=Exact",
            prefix: "/pods/first/",
            expected_out: vec![c(0)],
            rv: crv(0),
            rv_match: "Exact",
            expect_rv: Some(crv(0)),
            ..Default::default()
        },
        ListCase {
            name: "test List on existing key with resource version set before creation, match=Exact",
            prefix: "/pods/second/",
            expected_out: vec![],
            rv: crv(0),
            rv_match: "Exact",
            expect_rv: Some(crv(0)),
            ..Default::default()
        },
        ListCase {
            name: "test List on existing key with resource version set after creation, match=Exact",
            prefix: "/pods/second/",
            expected_out: vec![c(1)],
            rv: crv(1),
            rv_match: "Exact",
            expect_rv: Some(crv(1)),
            ..Default::default()
        },
        ListCase {
            name: "test List on existing key with resource version set before first write, match=Exact",
            prefix: "/pods/first/",
            rv: initial_rv.clone(),
            rv_match: "Exact",
            expect_rv_too_old: true,
            ..Default::default()
        },
        ListCase {
            name: "test List on existing key with resource version set to 0, match=NotOlderThan",
            prefix: "/pods/first/",
            expected_alternatives: Some(vec![vec![], vec![updated.clone()]]),
            rv: "0".into(),
            rv_match: "NotOlderThan",
            ..Default::default()
        },
        ListCase {
            name: "test List on existing key with resource version set to 0, match=Invalid",
            prefix: "/pods/first/",
            rv: "0".into(),
            rv_match: "Invalid",
            expect_error: true,
            ..Default::default()
        },
        ListCase {
            name: "test List on existing key with resource version set before first write, match=NotOlderThan",
            prefix: "/pods/first/",
            expected_alternatives: Some(vec![vec![], vec![updated.clone()]]),
            rv: initial_rv.clone(),
            rv_match: "NotOlderThan",
            ..Default::default()
        },
        ListCase {
            name: "test List on existing key with resource version set before first write, match=Invalid",
            prefix: "/pods/first/",
            rv: initial_rv.clone(),
            rv_match: "Invalid",
            expect_error: true,
            ..Default::default()
        },
        ListCase {
            name: "test List on existing key with resource version set to current resource version",
            prefix: "/pods/first/",
            expected_out: vec![updated.clone()],
            rv: list_rv.clone(),
            ..Default::default()
        },
        ListCase {
            name: "test List on existing key with resource version set to current resource version, match=Exact",
            prefix: "/pods/first/",
            expected_out: vec![updated.clone()],
            rv: list_rv.clone(),
            rv_match: "Exact",
            expect_rv: Some(list_rv.clone()),
            ..Default::default()
        },
        ListCase {
            name: "test List on existing key with resource version set to current resource version, match=NotOlderThan",
            prefix: "/pods/first/",
            expected_out: vec![updated.clone()],
            rv: list_rv.clone(),
            rv_match: "NotOlderThan",
            ..Default::default()
        },
        ListCase {
            name: "test List on non-existing key",
            prefix: "/pods/non-existing/",
            expected_out: vec![],
            ..Default::default()
        },
        ListCase {
            name: "test List with pod name matching",
            prefix: "/pods/first/",
            pred: Some(pod_pred(field_ne("metadata.name", "bar"))),
            expected_out: vec![],
            ..Default::default()
        },
        ListCase {
            name: "test List with pod name matching with resource version set to current resource version, match=NotOlderThan",
            prefix: "/pods/first/",
            pred: Some(pod_pred(field_ne("metadata.name", "bar"))),
            expected_out: vec![],
            rv: list_rv.clone(),
            rv_match: "NotOlderThan",
            ..Default::default()
        },
        ListCase {
            name: "test List with limit",
            prefix: "/pods/second/",
            pred: Some(everything_paged(1, "")),
            expected_out: vec![c(1)],
            expect_rv: Some(current_rv.clone()),
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(
                &format!("{}\0", name_of(&created[1])),
                continue_rv + 1,
            )),
            expected_remaining_item_count: Some(1),
            ..Default::default()
        },
        ListCase {
            name: "test List with limit at current resource version",
            prefix: "/pods/second/",
            pred: Some(everything_paged(1, "")),
            expected_out: vec![c(1)],
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(
                &format!("{}\0", name_of(&created[1])),
                continue_rv,
            )),
            expected_remaining_item_count: Some(1),
            rv: list_rv.clone(),
            expect_rv: Some(list_rv.clone()),
            ..Default::default()
        },
        ListCase {
            name: "test List with limit at current resource version and match=Exact",
            prefix: "/pods/second/",
            pred: Some(everything_paged(1, "")),
            expected_out: vec![c(1)],
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(
                &format!("{}\0", name_of(&created[1])),
                continue_rv,
            )),
            expected_remaining_item_count: Some(1),
            rv: list_rv.clone(),
            rv_match: "Exact",
            expect_rv: Some(list_rv.clone()),
            ..Default::default()
        },
        ListCase {
            name: "test List with limit at current resource version and match=NotOlderThan",
            prefix: "/pods/second/",
            pred: Some(everything_paged(1, "")),
            expected_out: vec![c(1)],
            expect_continue: true,
            expected_remaining_item_count: Some(1),
            rv: list_rv.clone(),
            rv_match: "NotOlderThan",
            expect_rv_not_older_than: Some(list_rv.clone()),
            ..Default::default()
        },
        ListCase {
            name: "test List with limit at resource version 0",
            prefix: "/pods/second/",
            pred: Some(everything_paged(1, "")),
            expected_out: vec![c(1)],
            expect_continue: true,
            expected_remaining_item_count: Some(1),
            rv: "0".into(),
            expect_rv_not_older_than: Some(list_rv.clone()),
            ..Default::default()
        },
        ListCase {
            name: "test List with limit at resource version 0 match=NotOlderThan",
            prefix: "/pods/second/",
            pred: Some(everything_paged(1, "")),
            expected_out: vec![c(1)],
            expect_continue: true,
            expected_remaining_item_count: Some(1),
            rv: "0".into(),
            rv_match: "NotOlderThan",
            expect_rv_not_older_than: Some(list_rv.clone()),
            ..Default::default()
        },
        ListCase {
            name: "test List with limit at resource version before created and match=Exact",
            prefix: "/pods/second/",
            pred: Some(everything_paged(1, "")),
            expected_out: vec![],
            expect_continue: false,
            rv: crv(0),
            rv_match: "Exact",
            expect_rv: Some(crv(0)),
            ..Default::default()
        },
        ListCase {
            name: "test List with limit at resource version after created and match=Exact",
            prefix: "/pods/second/",
            pred: Some(everything_paged(1, "")),
            expected_out: vec![c(1)],
            expect_continue: false,
            rv: crv(1),
            rv_match: "Exact",
            expect_rv: Some(crv(1)),
            ..Default::default()
        },
        ListCase {
            name: "test List with pregenerated continue token",
            prefix: "/pods/second/",
            pred: Some(everything_paged(1, &second_continuation)),
            expected_out: vec![c(2)],
            ..Default::default()
        },
        ListCase {
            name: "ignores resource version 0 for List with pregenerated continue token",
            prefix: "/pods/second/",
            pred: Some(everything_paged(1, &second_continuation)),
            rv: "0".into(),
            expected_out: vec![c(2)],
            ..Default::default()
        },
        ListCase {
            name: "test List with multiple levels of directories and expect flattened result",
            prefix: "/pods/second/",
            expected_out: vec![c(1), c(2)],
            ..Default::default()
        },
        ListCase {
            name: "test List with multiple levels of directories and expect flattened result with current resource version and match=NotOlderThan",
            prefix: "/pods/second/",
            rv: list_rv.clone(),
            rv_match: "NotOlderThan",
            expected_out: vec![c(1), c(2)],
            ..Default::default()
        },
        ListCase {
            name: "test List with filter returning only one item, ensure only a single page returned",
            prefix: "/pods/",
            pred: Some(name_pred("barfoo", 1)),
            expected_out: vec![c(3)],
            expect_continue: true,
            ..Default::default()
        },
        ListCase {
            name: "test List with filter returning only one item, ensure only a single page returned with current resource version and match=NotOlderThan",
            prefix: "/pods/",
            pred: Some(name_pred("barfoo", 1)),
            rv: list_rv.clone(),
            rv_match: "NotOlderThan",
            expected_out: vec![c(3)],
            expect_rv_not_older_than: Some(list_rv.clone()),
            expect_continue: true,
            ..Default::default()
        },
        ListCase {
            name: "test List with filter returning only one item, covers the entire list",
            prefix: "/pods/",
            pred: Some(name_pred("barfoo", 2)),
            expected_out: vec![c(3)],
            expect_continue: false,
            ..Default::default()
        },
        ListCase {
            name: "test List with filter returning only one item, covers the entire list with current resource version and match=NotOlderThan",
            prefix: "/pods/",
            pred: Some(name_pred("barfoo", 2)),
            rv: list_rv.clone(),
            rv_match: "NotOlderThan",
            expected_out: vec![c(3)],
            expect_rv_not_older_than: Some(list_rv.clone()),
            expect_continue: false,
            ..Default::default()
        },
        ListCase {
            name: "test List with filter returning only one item, covers the entire list, with resource version 0",
            prefix: "/pods/",
            pred: Some(name_pred("barfoo", 2)),
            rv: "0".into(),
            expected_alternatives: Some(vec![vec![], vec![c(3)]]),
            expect_continue: false,
            ..Default::default()
        },
        ListCase {
            name: "test List with filter returning two items, more pages possible",
            prefix: "/pods/",
            pred: Some(name_pred("bar", 2)),
            expect_continue: true,
            expected_out: vec![updated.clone(), c(1)],
            ..Default::default()
        },
        ListCase {
            name: "test List with filter returning two items, more pages possible with current resource version and match=NotOlderThan",
            prefix: "/pods/",
            pred: Some(name_pred("bar", 2)),
            rv: list_rv.clone(),
            rv_match: "NotOlderThan",
            expect_continue: true,
            expected_out: vec![updated.clone(), c(1)],
            ..Default::default()
        },
        ListCase {
            name: "filter returns two items split across multiple pages",
            prefix: "/pods/",
            pred: Some(name_pred("foo", 2)),
            expected_out: vec![c(2), c(4)],
            ..Default::default()
        },
        ListCase {
            name: "filter returns two items split across multiple pages with current resource version and match=NotOlderThan",
            prefix: "/pods/",
            pred: Some(name_pred("foo", 2)),
            rv: list_rv.clone(),
            rv_match: "NotOlderThan",
            expected_out: vec![c(2), c(4)],
            ..Default::default()
        },
        ListCase {
            name: "filter returns one item for last page, ends on last item, not full",
            prefix: "/pods/",
            pred: Some(pod_pred_paged(
                field_eq("metadata.name", "foo"),
                2,
                &encode_continue("third/barfoo", continue_rv),
            )),
            expected_out: vec![c(4)],
            ..Default::default()
        },
        ListCase {
            name: "filter returns one item for last page, starts on last item, full",
            prefix: "/pods/",
            pred: Some(pod_pred_paged(
                field_eq("metadata.name", "foo"),
                1,
                &encode_continue("third/barfoo", continue_rv),
            )),
            expected_out: vec![c(4)],
            ..Default::default()
        },
        ListCase {
            name: "filter returns one item for last page, starts on last item, partial page",
            prefix: "/pods/",
            pred: Some(pod_pred_paged(
                field_eq("metadata.name", "foo"),
                2,
                &encode_continue("third/barfoo", continue_rv),
            )),
            expected_out: vec![c(4)],
            ..Default::default()
        },
        ListCase {
            name: "filter returns two items, page size equal to total list size",
            prefix: "/pods/",
            pred: Some(name_pred("foo", 5)),
            expected_out: vec![c(2), c(4)],
            ..Default::default()
        },
        ListCase {
            name: "filter returns two items, page size equal to total list size with current resource version and match=NotOlderThan",
            prefix: "/pods/",
            pred: Some(name_pred("foo", 5)),
            rv: list_rv.clone(),
            rv_match: "NotOlderThan",
            expected_out: vec![c(2), c(4)],
            ..Default::default()
        },
        ListCase {
            name: "filter returns one item, page size equal to total list size",
            prefix: "/pods/",
            pred: Some(name_pred("barfoo", 5)),
            expected_out: vec![c(3)],
            ..Default::default()
        },
        ListCase {
            name: "filter returns one item, page size equal to total list size with current resource version and match=NotOlderThan",
            prefix: "/pods/",
            pred: Some(name_pred("barfoo", 5)),
            rv: list_rv.clone(),
            rv_match: "NotOlderThan",
            expected_out: vec![c(3)],
            ..Default::default()
        },
        ListCase {
            name: "list all items",
            prefix: "/pods/",
            expected_out: vec![updated.clone(), c(1), c(2), c(3), c(4)],
            ..Default::default()
        },
        ListCase {
            name: "list all items with current resource version and match=NotOlderThan",
            prefix: "/pods/",
            rv: list_rv.clone(),
            rv_match: "NotOlderThan",
            expected_out: vec![updated.clone(), c(1), c(2), c(3), c(4)],
            ..Default::default()
        },
        ListCase {
            name: "verify list returns updated version of object; filter returns one item, page size equal to total list size with current resource version and match=NotOlderThan",
            prefix: "/pods/",
            pred: Some(pod_pred_paged(field_eq("spec.nodeName", "fakeNode"), 5, "")),
            rv: list_rv.clone(),
            rv_match: "NotOlderThan",
            expected_out: vec![updated.clone()],
            ..Default::default()
        },
        ListCase {
            name: "verify list does not return deleted object; filter for deleted object, page size equal to total list size with current resource version and match=NotOlderThan",
            prefix: "/pods/",
            pred: Some(name_pred("baz", 5)),
            rv: list_rv.clone(),
            rv_match: "NotOlderThan",
            expected_out: vec![],
            ..Default::default()
        },
        ListCase {
            name: "test consistent List",
            prefix: "/pods/empty",
            rv: String::new(),
            expect_rv: Some(current_rv.clone()),
            expected_out: vec![],
            ..Default::default()
        },
        ListCase {
            name: "test non-consistent List",
            prefix: "/pods/empty",
            rv: "0".into(),
            expect_rv_not_older_than: Some(initial_rv.clone()),
            expected_out: vec![],
            ..Default::default()
        },
        // match=Exact
        ListCase {
            name: "test List with resource version set before first write, match=Exact",
            prefix: "/pods/",
            rv: initial_rv.clone(),
            rv_match: "Exact",
            expect_rv_too_old: true,
            ..Default::default()
        },
        ListCase {
            name: "test List with resource version of first write, match=Exact",
            prefix: "/pods/",
            expected_out: vec![c(0)],
            rv: crv(0),
            rv_match: "Exact",
            expect_rv: Some(crv(0)),
            ..Default::default()
        },
        ListCase {
            name: "test List with resource version of second write, match=Exact",
            prefix: "/pods/",
            expected_out: vec![c(0), c(1)],
            rv: crv(1),
            rv_match: "Exact",
            expect_rv: Some(crv(1)),
            ..Default::default()
        },
        ListCase {
            name: "test List with resource version of third write, match=Exact",
            prefix: "/pods/",
            expected_out: vec![c(0), c(1), c(2)],
            rv: crv(2),
            rv_match: "Exact",
            expect_rv: Some(crv(2)),
            ..Default::default()
        },
        ListCase {
            name: "test List with resource version of fourth write, match=Exact",
            prefix: "/pods/",
            expected_out: vec![c(0), c(1), c(2), c(3)],
            rv: crv(3),
            rv_match: "Exact",
            expect_rv: Some(crv(3)),
            ..Default::default()
        },
        ListCase {
            name: "test List with resource version of fifth write, match=Exact",
            prefix: "/pods/",
            expected_out: vec![c(0), c(1), c(2), c(3), c(4)],
            rv: crv(4),
            rv_match: "Exact",
            expect_rv: Some(crv(4)),
            ..Default::default()
        },
        ListCase {
            name: "test List with resource version of six write, match=Exact",
            prefix: "/pods/",
            expected_out: vec![c(0), c(1), c(2), c(3), c(4), c(5)],
            rv: crv(5),
            rv_match: "Exact",
            expect_rv: Some(crv(5)),
            ..Default::default()
        },
        ListCase {
            name: "test List with resource version of seventh write, match=Exact",
            prefix: "/pods/",
            expected_out: vec![updated.clone(), c(1), c(2), c(3), c(4), c(5)],
            rv: rv_of(&updated),
            rv_match: "Exact",
            expect_rv: Some(rv_of(&updated)),
            ..Default::default()
        },
        ListCase {
            name: "test List with resource version of eight write, match=Exact",
            prefix: "/pods/",
            expected_out: vec![updated.clone(), c(1), c(2), c(3), c(4)],
            rv: continue_rv.to_string(),
            rv_match: "Exact",
            expect_rv: Some(continue_rv.to_string()),
            ..Default::default()
        },
        ListCase {
            name: "test List with resource version after writes, match=Exact",
            prefix: "/pods/",
            expected_out: vec![updated.clone(), c(1), c(2), c(3), c(4)],
            rv: (continue_rv + 1).to_string(),
            rv_match: "Exact",
            expect_rv: Some((continue_rv + 1).to_string()),
            ..Default::default()
        },
        ListCase {
            name: "test List with future resource version, match=Exact",
            prefix: "/pods/",
            rv: (continue_rv + 2).to_string(),
            rv_match: "Exact",
            expect_rv_too_large: true,
            ..Default::default()
        },
        // limit, match=Exact
        ListCase {
            name: "test List with limit, resource version of second write, match=Exact",
            prefix: "/pods/",
            pred: Some(everything_paged(1, "")),
            expected_out: vec![c(0)],
            rv: crv(1),
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(&ckey(0), crv_i(1))),
            rv_match: "Exact",
            expect_rv: Some(crv(1)),
            expected_remaining_item_count: Some(1),
            ..Default::default()
        },
        ListCase {
            name: "test List with limit, resource version of third write, match=Exact",
            prefix: "/pods/",
            pred: Some(everything_paged(2, "")),
            rv: crv(2),
            rv_match: "Exact",
            expected_out: vec![c(0), c(1)],
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(&ckey(1), crv_i(2))),
            expect_rv: Some(crv(2)),
            expected_remaining_item_count: Some(1),
            ..Default::default()
        },
        ListCase {
            name: "test List with limit, resource version of fourth write, match=Exact",
            prefix: "/pods/",
            pred: Some(everything_paged(4, "")),
            rv: crv(3),
            rv_match: "Exact",
            expected_out: vec![c(0), c(1), c(2), c(3)],
            expect_rv: Some(crv(3)),
            ..Default::default()
        },
        ListCase {
            name: "test List with limit, resource version of fifth write, match=Exact",
            prefix: "/pods/",
            pred: Some(everything_paged(1, "")),
            rv: crv(4),
            rv_match: "Exact",
            expected_out: vec![c(0)],
            expect_rv: Some(crv(4)),
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(&ckey(0), crv_i(4))),
            expected_remaining_item_count: Some(4),
            ..Default::default()
        },
        ListCase {
            name: "test List with limit, resource version of six write, match=Exact",
            prefix: "/pods/",
            pred: Some(everything_paged(2, "")),
            rv: crv(5),
            rv_match: "Exact",
            expected_out: vec![c(0), c(1)],
            expect_rv: Some(crv(5)),
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(&ckey(1), crv_i(5))),
            expected_remaining_item_count: Some(4),
            ..Default::default()
        },
        ListCase {
            name: "test List with limit, resource version of seventh write, match=Exact",
            prefix: "/pods/",
            pred: Some(everything_paged(4, "")),
            rv: rv_of(&updated),
            rv_match: "Exact",
            expected_out: vec![updated.clone(), c(1), c(5), c(2)],
            expect_rv: Some(rv_of(&updated)),
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(&ckey(2), rv_u64(&updated) as i64)),
            expected_remaining_item_count: Some(2),
            ..Default::default()
        },
        ListCase {
            name: "test List with limit, resource version of eight write, match=Exact",
            prefix: "/pods/",
            pred: Some(everything_paged(8, "")),
            expected_out: vec![updated.clone(), c(1), c(2), c(3), c(4)],
            rv: continue_rv.to_string(),
            rv_match: "Exact",
            expect_rv: Some(continue_rv.to_string()),
            ..Default::default()
        },
        ListCase {
            name: "test List with limit, resource version after writes, match=Exact",
            prefix: "/pods/",
            pred: Some(everything_paged(1, "")),
            rv: (continue_rv + 1).to_string(),
            rv_match: "Exact",
            expected_out: vec![updated.clone()],
            expect_rv: Some((continue_rv + 1).to_string()),
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(
                &format!("{}/{}\0", namespace_of(&updated), name_of(&updated)),
                continue_rv + 1,
            )),
            expected_remaining_item_count: Some(4),
            ..Default::default()
        },
        // Continue
        ListCase {
            name: "test List with continue, resource version before first write",
            prefix: "/pods/",
            pred: Some(everything_paged(
                1,
                &encode_continue(&ckey(0), initial_rv.parse::<i64>().unwrap_or(0)),
            )),
            expect_continue_too_old: true,
            ..Default::default()
        },
        ListCase {
            name: "test List with continue, resource version of first write",
            prefix: "/pods/",
            pred: Some(everything_paged(1, &encode_continue(&ckey(0), crv_i(0)))),
            expected_out: vec![],
            expect_rv: Some(crv(0)),
            ..Default::default()
        },
        ListCase {
            name: "test List with continue, resource version of second write",
            prefix: "/pods/",
            pred: Some(everything_paged(1, &encode_continue(&ckey(0), crv_i(1)))),
            expected_out: vec![c(1)],
            expect_rv: Some(crv(1)),
            ..Default::default()
        },
        ListCase {
            name: "test List with continue, resource version of third write",
            prefix: "/pods/",
            pred: Some(everything_paged(2, &encode_continue(&ckey(1), crv_i(2)))),
            expected_out: vec![c(2)],
            expect_rv: Some(crv(2)),
            ..Default::default()
        },
        ListCase {
            name: "test List with continue, resource version of fifth write",
            prefix: "/pods/",
            pred: Some(everything_paged(1, &encode_continue(&ckey(0), crv_i(4)))),
            expected_out: vec![c(1)],
            expect_rv: Some(crv(4)),
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(&ckey(1), crv_i(4))),
            expected_remaining_item_count: Some(3),
            ..Default::default()
        },
        ListCase {
            name: "test List with continue, resource version of six write",
            prefix: "/pods/",
            pred: Some(everything_paged(2, &encode_continue(&ckey(1), crv_i(5)))),
            expected_out: vec![c(5), c(2)],
            expect_rv: Some(crv(5)),
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(&ckey(2), crv_i(5))),
            expected_remaining_item_count: Some(2),
            ..Default::default()
        },
        ListCase {
            name: "test List with continue, resource version of seventh write",
            prefix: "/pods/",
            pred: Some(everything_paged(
                4,
                &encode_continue(&ckey(2), rv_u64(&updated) as i64),
            )),
            expected_out: vec![c(3), c(4)],
            expect_rv: Some(rv_of(&updated)),
            ..Default::default()
        },
        ListCase {
            name: "test List with continue, resource version after writes",
            prefix: "/pods/",
            pred: Some(everything_paged(
                1,
                &encode_continue(
                    &format!("{}/{}\0", namespace_of(&updated), name_of(&updated)),
                    continue_rv + 1,
                ),
            )),
            expected_out: vec![c(1)],
            expect_rv: Some((continue_rv + 1).to_string()),
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(&ckey(1), continue_rv + 1)),
            expected_remaining_item_count: Some(3),
            ..Default::default()
        },
        ListCase {
            name: "test List with continue from second pod, negative resource version gives consistent read",
            prefix: "/pods/",
            pred: Some(everything_paged(0, &encode_continue(&ckey(0), -1))),
            expected_out: vec![c(1), c(2), c(3), c(4)],
            expect_rv: Some(current_rv.clone()),
            ..Default::default()
        },
        ListCase {
            name: "test List with continue from second pod and limit, negative resource version gives consistent read",
            prefix: "/pods/",
            pred: Some(everything_paged(2, &encode_continue(&ckey(0), -1))),
            expected_out: vec![c(1), c(2)],
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(&ckey(2), continue_rv + 1)),
            expect_rv: Some(current_rv.clone()),
            expected_remaining_item_count: Some(2),
            ..Default::default()
        },
        ListCase {
            name: "test List with continue from third pod, negative resource version gives consistent read",
            prefix: "/pods/",
            pred: Some(everything_paged(0, &encode_continue(&ckey(2), -1))),
            expected_out: vec![c(3), c(4)],
            expect_rv: Some(current_rv.clone()),
            ..Default::default()
        },
        ListCase {
            name: "test List with continue from empty fails",
            prefix: "/pods/",
            pred: Some(everything_paged(0, &encode_continue("", continue_rv))),
            expect_error: true,
            ..Default::default()
        },
        ListCase {
            name: "test List with continue from first pod, empty resource version fails",
            prefix: "/pods/",
            pred: Some(everything_paged(0, &encode_continue(&ckey(0), 0))),
            expect_error: true,
            ..Default::default()
        },
        ListCase {
            name: "test List with negative rv fails",
            prefix: "/pods/",
            rv: "-1".into(),
            expect_error: true,
            ..Default::default()
        },
    ];

    let mut failures = Vec::new();
    for tt in cases {
        if let Err(msg) = check_list_case(ctx, tt).await {
            failures.push(msg);
        }
    }
    assert!(
        failures.is_empty(),
        "[{}] RunTestList: {} case(s) failed:\n{}",
        ctx.name,
        failures.len(),
        failures.join("\n")
    );
}

/// Run one [`ListCase`]; `Err` describes the failure.
pub(super) async fn check_list_case(
    ctx: &TestContext,
    tt: ListCase,
) -> std::result::Result<(), String> {
    let name = tt.name;
    let fail = |msg: String| Err(format!("  - {name}: {msg}"));
    let rv_match = match ResourceVersionMatch::parse(tt.rv_match) {
        Ok(m) => m,
        Err(e) if tt.expect_error => {
            let _ = e;
            return Ok(());
        }
        Err(e) => return fail(format!("invalid resourceVersionMatch: {e}")),
    };
    let mut pred = tt.pred.unwrap_or_default();
    if pred.get_attrs.is_none() {
        pred.get_attrs = Some(default_attrs(vec!["spec.nodeName".into()]));
    }
    let opts = ListOptions {
        resource_version: tt.rv.clone(),
        resource_version_match: rv_match,
        predicate: pred,
        recursive: true,
        ..ListOptions::default()
    };
    let res = ctx.storage.get_list_owned(tt.prefix, &opts).await;
    if tt.expect_rv_too_large {
        return match res {
            Err(e) if is_too_large(&e) => Ok(()),
            other => fail(format!(
                "expecting resource version too high error, got {other:?}"
            )),
        };
    }
    if tt.expect_rv_too_old {
        return match res {
            Err(e)
                if e.to_string()
                    .contains("The resourceVersion for the provided list is too old") =>
            {
                Ok(())
            }
            other => fail(format!(
                "expecting resource version too old error, got {other:?}"
            )),
        };
    }
    if tt.expect_continue_too_old {
        return match res {
            Err(e)
                if e.to_string().contains(
                    "The provided continue parameter is too old to display a consistent list result",
                ) =>
            {
                Ok(())
            }
            other => fail(format!("expecting continue too old error, got {other:?}")),
        };
    }
    let out = match res {
        Err(e) if tt.expect_error => {
            let _ = e;
            return Ok(());
        }
        Err(e) => return fail(format!("GetList failed: {e}")),
        Ok(_) if tt.expect_error => return fail("expected error but got none".into()),
        Ok(out) => out,
    };
    let mut problems = Vec::new();
    if out.continue_token.is_some() != tt.expect_continue {
        problems.push(format!(
            "unexpected continue token: {:?} (expected one: {})",
            out.continue_token.as_deref().map(decode_token),
            tt.expect_continue
        ));
    }
    if let Some(exact) = &tt.expect_continue_exact {
        if out.continue_token.as_deref() != Some(exact.as_str()) {
            problems.push(format!(
                "expected continue token: {}, got: {:?}",
                decode_token(exact),
                out.continue_token.as_deref().map(decode_token)
            ));
        }
    }
    let got_rv = out.resource_version.to_string();
    if let Some(want) = &tt.expect_rv {
        if *want != got_rv {
            problems.push(format!(
                "resourceVersion in list response want={want}, got={got_rv}"
            ));
        }
    }
    if let Some(min) = &tt.expect_rv_not_older_than {
        if out.resource_version < min.parse::<u64>().unwrap_or(0) {
            problems.push(format!(
                "expected a resourceVersion no smaller than {min}, but got {got_rv}"
            ));
        }
    }
    match &tt.expected_alternatives {
        None => {
            let expected = sort_by_key(tt.expected_out.clone());
            if expected != out.items {
                problems.push(format!(
                    "incorrect list pods:\n      expected: {}\n           got: {}",
                    serde_json::to_string(&expected).unwrap_or_default(),
                    serde_json::to_string(&out.items).unwrap_or_default()
                ));
            }
        }
        Some(alternatives) => {
            if !alternatives.contains(&out.items) {
                problems.push(format!(
                    "incorrect list pods: {} is none of {}",
                    serde_json::to_string(&out.items).unwrap_or_default(),
                    serde_json::to_string(alternatives).unwrap_or_default()
                ));
            }
        }
    }
    if tt.expected_remaining_item_count != out.remaining_item_count {
        problems.push(format!(
            "unexpected remainingItemCount: want {:?}, got {:?}",
            tt.expected_remaining_item_count, out.remaining_item_count
        ));
    }
    if problems.is_empty() {
        Ok(())
    } else {
        fail(problems.join("; "))
    }
}

/// `RunTestConsistentList` (without a cache): a list at resourceVersion "" or "0", or with a
/// continue token at `rv=-1`, returns the current global revision, even right after a write to
/// an unrelated key. Needs a backend of its own (it asserts the global revision).
pub async fn run_test_consistent_list(ctx: &TestContext) {
    let out = create(ctx, &pod("default", "foo")).await;
    let last_write_rv = rv_u64(&out);
    let bumped = ctx.increase_rv().await;
    assert_eq!(
        bumped,
        last_write_rv + 1,
        "[{}] increaseRV must write exactly one revision",
        ctx.name
    );
    let cases: [(&str, &str, String); 4] = [
        (
            "Non-consistent list before consistent read",
            "0",
            String::new(),
        ),
        ("LIST without RV returns consistent RV", "", String::new()),
        (
            "List with negative continue RV returns consistent RV",
            "",
            encode_continue("/pods/a", -1),
        ),
        (
            "Non-consistent request after consistent read",
            "0",
            String::new(),
        ),
    ];
    for (i, (name, rv, cont)) in cases.into_iter().enumerate() {
        // Every read below is preceded by exactly one increaseRV.
        let consistent_rv = last_write_rv + 1 + i as u64;
        let opts = ListOptions {
            resource_version: rv.into(),
            predicate: SelectionPredicate {
                continue_token: cont,
                ..SelectionPredicate::default()
            },
            recursive: true,
            ..ListOptions::default()
        };
        let out = list(ctx, "/pods/empty", &opts).await;
        assert_eq!(
            out.resource_version, consistent_rv,
            "[{}] {name}: list resourceVersion",
            ctx.name
        );
        // Update RV on each read to test multiple reads for consistent RV.
        ctx.increase_rv().await;
    }
}

/// `RunTestGetListNonRecursive`: a non-recursive list of one key at resourceVersion
/// ""/0/previous/current/too large, with and without resourceVersionMatch and selectors.
pub async fn run_test_get_list_non_recursive(ctx: &TestContext) {
    let (key, prev_stored) = propagate(ctx, &pod("test-ns", "foo")).await;
    let prev_rv = rv_of(&prev_stored);
    let mut new_pod = prev_stored.clone();
    set_annotations(&mut new_pod, &[("version", "second")]);
    let stored = ctx
        .storage
        .guaranteed_update(
            &key,
            false,
            &Preconditions::default(),
            &mut replace_with(new_pod, None),
            None,
        )
        .await
        .unwrap_or_else(|e| panic!("[{}] update failed: {e}", ctx.name));
    let obj_rv = rv_of(&stored);
    // Increase RV to test consistent List.
    ctx.increase_rv().await;

    let name_ne = || SelectionPredicate {
        field: field_ne("metadata.name", &name_of(&stored)),
        get_attrs: Some(default_attrs(vec![])),
        ..SelectionPredicate::default()
    };
    struct Case {
        name: &'static str,
        key: String,
        pred: SelectionPredicate,
        alternatives: Vec<Vec<Value>>,
        rv: String,
        rv_match: ResourceVersionMatch,
        expect_too_large: bool,
    }
    use ResourceVersionMatch::{Exact, NotOlderThan, Unset};
    let cases = vec![
        Case {
            name: "existing key",
            key: key.clone(),
            pred: everything(),
            alternatives: vec![vec![stored.clone()]],
            rv: String::new(),
            rv_match: Unset,
            expect_too_large: false,
        },
        Case {
            name: "existing key, resourceVersion=0",
            key: key.clone(),
            pred: everything(),
            alternatives: vec![vec![], vec![prev_stored.clone()], vec![stored.clone()]],
            rv: "0".into(),
            rv_match: Unset,
            expect_too_large: false,
        },
        Case {
            name: "existing key, resourceVersion=0, resourceVersionMatch=notOlderThan",
            key: key.clone(),
            pred: everything(),
            alternatives: vec![vec![], vec![prev_stored.clone()], vec![stored.clone()]],
            rv: "0".into(),
            rv_match: NotOlderThan,
            expect_too_large: false,
        },
        Case {
            name: "existing key, resourceVersion=current",
            key: key.clone(),
            pred: everything(),
            alternatives: vec![vec![stored.clone()]],
            rv: obj_rv.clone(),
            rv_match: Unset,
            expect_too_large: false,
        },
        Case {
            name: "existing key, resourceVersion=current, resourceVersionMatch=notOlderThan",
            key: key.clone(),
            pred: everything(),
            alternatives: vec![vec![stored.clone()]],
            rv: obj_rv.clone(),
            rv_match: NotOlderThan,
            expect_too_large: false,
        },
        Case {
            name: "existing key, resourceVersion=previous, resourceVersionMatch=notOlderThan",
            key: key.clone(),
            pred: everything(),
            alternatives: vec![vec![prev_stored.clone()], vec![stored.clone()]],
            rv: prev_rv.clone(),
            rv_match: NotOlderThan,
            expect_too_large: false,
        },
        Case {
            name: "existing key, resourceVersion=current, resourceVersionMatch=exact",
            key: key.clone(),
            pred: everything(),
            alternatives: vec![vec![stored.clone()]],
            rv: obj_rv.clone(),
            rv_match: Exact,
            expect_too_large: false,
        },
        Case {
            name: "existing key, resourceVersion=previous, resourceVersionMatch=exact",
            key: key.clone(),
            pred: everything(),
            alternatives: vec![vec![prev_stored.clone()]],
            rv: prev_rv.clone(),
            rv_match: Exact,
            expect_too_large: false,
        },
        Case {
            name: "existing key, resourceVersion=too high",
            key: key.clone(),
            pred: everything(),
            alternatives: vec![],
            rv: i64::MAX.to_string(),
            rv_match: Unset,
            expect_too_large: true,
        },
        Case {
            name: "non-existing key",
            key: "/pods/non-existing".into(),
            pred: everything(),
            alternatives: vec![vec![]],
            rv: String::new(),
            rv_match: Unset,
            expect_too_large: false,
        },
        Case {
            name: "with matching pod name",
            key: "/pods/non-existing".into(),
            pred: name_ne(),
            alternatives: vec![vec![]],
            rv: String::new(),
            rv_match: Unset,
            expect_too_large: false,
        },
        Case {
            name: "existing key, resourceVersion=current, with not matching pod name",
            key: key.clone(),
            pred: name_ne(),
            alternatives: vec![vec![]],
            rv: obj_rv.clone(),
            rv_match: Unset,
            expect_too_large: false,
        },
    ];
    for tt in cases {
        let opts = ListOptions {
            resource_version: tt.rv.clone(),
            resource_version_match: tt.rv_match,
            predicate: tt.pred,
            recursive: false,
            ..ListOptions::default()
        };
        let res = ctx.storage.get_list_owned(&tt.key, &opts).await;
        if tt.expect_too_large {
            assert!(
                matches!(&res, Err(e) if is_too_large(e)),
                "[{}] {}: expecting resource version too high error, got {res:?}",
                ctx.name,
                tt.name
            );
            continue;
        }
        let out = res.unwrap_or_else(|e| panic!("[{}] {}: GetList failed: {e}", ctx.name, tt.name));
        assert!(
            out.resource_version != 0,
            "[{}] {}: unset resourceVersion",
            ctx.name,
            tt.name
        );
        assert!(
            tt.alternatives.contains(&out.items),
            "[{}] {}: incorrect list pods {}, expected one of {}",
            ctx.name,
            tt.name,
            pretty(&out.items),
            pretty(&tt.alternatives)
        );
    }
}

/// `RunTestGetListRecursivePrefix`: recursive lists use `prefix/` semantics (`foo` does not
/// match `foobar`); a non-recursive list of a prefix returns nothing.
pub async fn run_test_get_list_recursive_prefix(ctx: &TestContext) {
    let (foo_key, foo_pod) = propagate(ctx, &pod("test-ns", "foo")).await;
    let (foobar_key, foobar) = propagate(ctx, &pod("test-ns", "foobar")).await;
    let (_, other_ns) = propagate(ctx, &pod("test-ns2", "baz")).await;
    let last_rev = rv_of(&other_ns);
    let cases: Vec<(&str, &str, bool, Vec<Value>)> = vec![
        ("NonRecursive on resource prefix doesn't return any objects", "/pods/", false, vec![]),
        (
            "Recursive on resource prefix returns all objects",
            "/pods/",
            true,
            vec![foo_pod.clone(), foobar.clone(), other_ns.clone()],
        ),
        ("NonRecursive on namespace prefix doesn't return any objects", "/pods/test-ns/", false, vec![]),
        (
            "Recursive on resource prefix returns objects in the namespace",
            "/pods/test-ns/",
            true,
            vec![foo_pod.clone(), foobar.clone()],
        ),
        (
            "NonRecursive on object key (prefix) returns object and no other objects with the same prefix",
            &foo_key,
            false,
            vec![foo_pod.clone()],
        ),
        ("Recursive on object key (prefix) doesn't return anything", &foo_key, true, vec![]),
        (
            "NonRecursive on object key (no-prefix) return object",
            &foobar_key,
            false,
            vec![foobar.clone()],
        ),
        ("Recursive on object key (no-prefix) doesn't return anything", &foobar_key, true, vec![]),
    ];
    let list_types = [
        ("Exact", last_rev.clone(), ResourceVersionMatch::Exact),
        ("Consistent", String::new(), ResourceVersionMatch::Unset),
        (
            "NotOlderThan",
            "0".to_string(),
            ResourceVersionMatch::NotOlderThan,
        ),
    ];
    for (list_type, rv, rv_match) in &list_types {
        for (name, key, recursive, expected) in &cases {
            let opts = ListOptions {
                resource_version: rv.clone(),
                resource_version_match: *rv_match,
                recursive: *recursive,
                ..ListOptions::default()
            };
            let out = ctx
                .storage
                .get_list_owned(key, &opts)
                .await
                .unwrap_or_else(|e| {
                    panic!("[{}] {list_type}/{name}: GetList failed: {e}", ctx.name)
                });
            assert_items(
                ctx,
                &format!("{list_type}/{name}: incorrect list pods"),
                expected,
                &out.items,
            );
        }
    }
}

/// `RunTestGetListWithoutErrorAggregation`: a list aborts on the first object whose stored
/// value cannot be transformed, with an internal error naming its key.
pub async fn run_test_get_list_without_error_aggregation(ctx: &TestContext) {
    let Some(transformer) = ctx.transformer("RunTestGetListWithoutErrorAggregation") else {
        return;
    };
    let prefix = "/pods/ns/";
    let name_of_id = |id: usize| format!("foo-{id:06}");
    let n = 7;
    for i in 1..=n {
        create(ctx, &pod("ns", &name_of_id(i))).await;
    }
    let opts = list_opts("", everything(), true);
    let out = list(ctx, prefix, &opts).await;
    assert_eq!(out.items.len(), n, "[{}] items before corruption", ctx.name);

    // Corrupt the even-numbered objects.
    let _revert = transformer.update(|s| {
        s.inject = Some(Arc::new(|key: &str| {
            let id: usize = key
                .rsplit('/')
                .next()
                .and_then(|n| n.strip_prefix("foo-"))
                .and_then(|n| n.parse().ok())
                .unwrap_or(0);
            id.is_multiple_of(2).then(|| "corrupt object".to_string())
        }))
    });
    let err = ctx
        .storage
        .get_list_owned(prefix, &opts)
        .await
        .expect_err("Expected GetList to return error");
    // The error is a bare internal error for the first corrupt key (no aggregation).
    let msg = err.to_string();
    assert!(
        is_internal(&err)
            && msg.starts_with("unable to transform key \"")
            && msg.contains(&format!("{prefix}{}\"", name_of_id(2))),
        "[{}] expected an internal error `unable to transform key \".../pods/ns/foo-000002\"`, got {err:?}",
        ctx.name
    );
}

/// `RunTestListContinuation`: paging with limit 1 and continue tokens across namespaces; every
/// page carries the revision of the first.
pub async fn run_test_list_continuation(ctx: &TestContext) {
    let preset = [
        pod("first", "bar"),
        pod("second", "bar"),
        pod("second", "foo"),
    ];
    let mut stored = Vec::new();
    for p in &preset {
        stored.push(create(ctx, p).await);
    }
    let current_rv = rv_u64(&stored[2]);
    let pred = |limit: i64, cont: &str| pod_pred_paged(FieldSelector::default(), limit, cont);

    let out = list(ctx, "/pods/", &list_opts("", pred(1, ""), true)).await;
    let continue_from_second = out
        .continue_token
        .clone()
        .unwrap_or_else(|| panic!("[{}] No continuation token set", ctx.name));
    assert_items(
        ctx,
        "incorrect first page",
        &[stored[0].clone()],
        &out.items,
    );
    assert_eq!(
        out.resource_version, current_rv,
        "[{}] first page RV",
        ctx.name
    );

    // no limit, should get two items
    let out = list(
        ctx,
        "/pods/",
        &list_opts("", pred(0, &continue_from_second), true),
    )
    .await;
    assert!(
        out.continue_token.is_none(),
        "[{}] Unexpected continuation token set",
        ctx.name
    );
    assert_items(
        ctx,
        "incorrect second page",
        &[stored[1].clone(), stored[2].clone()],
        &out.items,
    );
    assert_eq!(
        out.resource_version, current_rv,
        "[{}] second page RV",
        ctx.name
    );

    // limit, should get two more pages
    let out = list(
        ctx,
        "/pods/",
        &list_opts("", pred(1, &continue_from_second), true),
    )
    .await;
    let continue_from_third = out
        .continue_token
        .clone()
        .unwrap_or_else(|| panic!("[{}] No continuation token set", ctx.name));
    assert_items(
        ctx,
        "incorrect second page",
        &[stored[1].clone()],
        &out.items,
    );
    assert_eq!(
        out.resource_version, current_rv,
        "[{}] second page RV",
        ctx.name
    );

    let out = list(
        ctx,
        "/pods/",
        &list_opts("", pred(1, &continue_from_third), true),
    )
    .await;
    assert!(
        out.continue_token.is_none(),
        "[{}] Unexpected continuation token set",
        ctx.name
    );
    assert_items(
        ctx,
        "incorrect third page",
        &[stored[2].clone()],
        &out.items,
    );
    assert_eq!(
        out.resource_version, current_rv,
        "[{}] third page RV",
        ctx.name
    );
}

/// `RunTestListPaginationRareObject`: a selector matching one object among 1000 with limit 1
/// finishes in one call without a continue token (the fetch size doubles).
pub async fn run_test_list_pagination_rare_object(ctx: &TestContext) {
    let pod_count = 1000;
    let mut pods = Vec::with_capacity(pod_count);
    for i in 0..pod_count {
        pods.push(create(ctx, &pod("", &format!("pod-{i}"))).await);
    }
    let opts = list_opts(
        "",
        pod_pred_paged(field_eq("metadata.name", "pod-999"), 1, ""),
        true,
    );
    let out = list(ctx, "/pods/", &opts).await;
    assert!(
        out.continue_token.is_none(),
        "[{}] Unexpected continuation token set",
        ctx.name
    );
    assert_items(
        ctx,
        "Unexpected first page",
        &[pods[999].clone()],
        &out.items,
    );
}

/// `RunTestListContinuationWithFilter`: paging with a field selector; a page is filled from
/// several reads and the continue token points after the last read key.
pub async fn run_test_list_continuation_with_filter(ctx: &TestContext) {
    let preset = [
        pod("1", "foo"),
        pod("2", "bar"),
        pod("3", "foo"),
        pod("4", "foo"),
    ];
    let mut stored = Vec::new();
    for p in &preset {
        stored.push(create(ctx, p).await);
    }
    let current_rv = rv_u64(&stored[3]);
    let pred =
        |limit: i64, cont: &str| pod_pred_paged(field_ne("metadata.name", "bar"), limit, cont);
    let out = list(ctx, "/pods/", &list_opts("", pred(2, ""), true)).await;
    let cont = out
        .continue_token
        .clone()
        .unwrap_or_else(|| panic!("[{}] No continuation token set", ctx.name));
    assert_items(
        ctx,
        "incorrect first page",
        &[stored[0].clone(), stored[2].clone()],
        &out.items,
    );
    assert_eq!(
        out.resource_version, current_rv,
        "[{}] first page RV",
        ctx.name
    );

    let out = list(ctx, "/pods/", &list_opts("", pred(2, &cont), true)).await;
    assert!(
        out.continue_token.is_none(),
        "[{}] Unexpected continuation token set",
        ctx.name
    );
    assert_items(
        ctx,
        "incorrect second page",
        &[stored[3].clone()],
        &out.items,
    );
    assert_eq!(
        out.resource_version, current_rv,
        "[{}] second page RV",
        ctx.name
    );
}

/// `RunTestListInconsistentContinuation`: after a compaction, an old continue token gives 410
/// with the "inconsistent" message and a fresh `rv=-1` token that continues at the latest
/// revision. Needs a backend of its own ([`TestContext::compact`]).
pub async fn run_test_list_inconsistent_continuation(ctx: &TestContext) {
    let preset = [
        pod("first", "bar"),
        pod("second", "bar"),
        pod("second", "foo"),
    ];
    let mut stored = Vec::new();
    for p in &preset {
        stored.push(create(ctx, p).await);
    }
    let pred = |limit: i64, cont: &str| pod_pred_paged(FieldSelector::default(), limit, cont);
    let out = list(ctx, "/pods/", &list_opts("0", pred(1, ""), true)).await;
    let continue_from_second = out
        .continue_token
        .clone()
        .unwrap_or_else(|| panic!("[{}] No continuation token set", ctx.name));
    assert_items(
        ctx,
        "incorrect first page",
        &[stored[0].clone()],
        &out.items,
    );

    // update /second/foo
    let new_pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "foo", "labels": {"state": "new"}}});
    stored[2] = ctx
        .storage
        .guaranteed_update(
            &pod_key(&preset[2]),
            false,
            &Preconditions::default(),
            &mut replace_with(new_pod.clone(), None),
            Some(new_pod),
        )
        .await
        .unwrap_or_else(|e| panic!("[{}] update failed: {e}", ctx.name));

    // compact to latest revision.
    let last_rv = rv_u64(&stored[2]);
    ctx.compact(last_rv).await;

    // The old continue token should have expired.
    let err = ctx
        .storage
        .get_list_owned(
            "/pods/",
            &list_opts("0", pred(0, &continue_from_second), true),
        )
        .await
        .expect_err("unexpected no error");
    let inconsistent = match &err {
        StorageError::Expired {
            message,
            continue_token: Some(token),
        } if message.contains("The provided continue parameter is too old ")
            && !token.is_empty() =>
        {
            token.clone()
        }
        other => panic!(
            "[{}] expected 410 with a new continue token, got {other:?}",
            ctx.name
        ),
    };

    let out = list(ctx, "/pods/", &list_opts("0", pred(1, &inconsistent), true)).await;
    let continue_from_third = out
        .continue_token
        .clone()
        .unwrap_or_else(|| panic!("[{}] No continuation token set", ctx.name));
    assert_items(
        ctx,
        "incorrect second page",
        &[stored[1].clone()],
        &out.items,
    );
    assert!(
        out.resource_version >= last_rv,
        "[{}] expected a resourceVersion no smaller than {last_rv}, got {}",
        ctx.name,
        out.resource_version
    );
    let resolved = out.resource_version;
    let out = list(
        ctx,
        "/pods/",
        &list_opts("0", pred(1, &continue_from_third), true),
    )
    .await;
    assert!(
        out.continue_token.is_none(),
        "[{}] Unexpected continuation token set",
        ctx.name
    );
    assert_items(
        ctx,
        "incorrect third page",
        &[stored[2].clone()],
        &out.items,
    );
    assert_eq!(
        out.resource_version, resolved,
        "[{}] list resource version",
        ctx.name
    );
}

/// `RunTestListResourceVersionMatch`: objects are created while a list decodes its items (the
/// `reproducingTransformer`); an Exact list at the returned revision reproduces the same
/// result, and so does NotOlderThan followed by Exact.
pub async fn run_test_list_resource_version_match(ctx: &TestContext) {
    let Some(transformer) = ctx.transformer("RunTestListResourceVersionMatch") else {
        return;
    };
    let index = Arc::new(AtomicUsize::new(0));
    let next_pod = |i: usize| {
        with_labels(
            &pod("", &format!("pod-{i}")),
            &[("even", if i.is_multiple_of(2) { "true" } else { "false" })],
        )
    };
    // createObject: the next pod, created with the store itself.
    let storage = ctx.storage.clone();
    let idx = index.clone();
    let create_next = move || {
        let i = idx.fetch_add(1, Ordering::SeqCst) + 1;
        let p = next_pod(i);
        let storage = storage.clone();
        async move { storage.create(&pod_key(&p), p, 0).await.map(|_| ()) }
    };
    for _ in 0..5 {
        create_next()
            .await
            .unwrap_or_else(|e| panic!("[{}] failed to create object: {e}", ctx.name));
    }
    let hook_create = create_next.clone();
    let failed = Arc::new(AtomicBool::new(false));
    let hook_failed = failed.clone();
    let _revert = transformer.update(move |s| {
        s.on_read = Some(Arc::new(move || {
            // TransformFromStorage is synchronous: run the create to completion on this
            // (multi-threaded) runtime before the read goes on.
            let fut = hook_create();
            let r = tokio::task::block_in_place(|| tokio::runtime::Handle::current().block_on(fut));
            if r.is_err() {
                hook_failed.store(true, Ordering::SeqCst);
            }
        }));
    });
    let predicate = SelectionPredicate {
        label: label_eq("even", "true"),
        limit: 4,
        ..SelectionPredicate::default()
    };
    let result1 = list(ctx, "/pods/", &list_opts("", predicate.clone(), true)).await;
    // List objects from the returned resource version.
    let mut opts = ListOptions {
        predicate: predicate.clone(),
        resource_version: result1.resource_version.to_string(),
        resource_version_match: ResourceVersionMatch::Exact,
        recursive: true,
        ..ListOptions::default()
    };
    let result2 = list(ctx, "/pods/", &opts).await;
    assert!(
        result1 == result2,
        "[{}] incorrect lists: {result1:?} vs {result2:?}",
        ctx.name
    );
    // Now also verify ResourceVersionMatchNotOlderThan.
    opts.resource_version_match = ResourceVersionMatch::NotOlderThan;
    let result3 = list(ctx, "/pods/", &opts).await;
    opts.resource_version = result3.resource_version.to_string();
    opts.resource_version_match = ResourceVersionMatch::Exact;
    let result4 = list(ctx, "/pods/", &opts).await;
    assert!(
        result3 == result4,
        "[{}] incorrect lists: {result3:?} vs {result4:?}",
        ctx.name
    );
    assert!(
        !failed.load(Ordering::SeqCst),
        "[{}] a create during a list failed",
        ctx.name
    );
    assert!(
        index.load(Ordering::SeqCst) > 5,
        "[{}] no object was created during the lists",
        ctx.name
    );
}

/// `RunTestListPaging`: paging with limit 1 over 4 objects sees exactly those 4 even when a 5th
/// is created in the middle (the continue token pins the revision).
pub async fn run_test_list_paging(ctx: &TestContext) {
    for i in 0..4 {
        create(ctx, &pod("paging", &format!("test-{i}"))).await;
    }
    let mut names = Vec::new();
    let mut opts = list_opts(
        "",
        SelectionPredicate {
            limit: 1,
            ..SelectionPredicate::default()
        },
        true,
    );
    let mut calls = 0;
    loop {
        calls += 1;
        let out = list(ctx, "/pods/", &opts).await;
        names.extend(out.items.iter().map(name_of));
        let Some(cont) = out.continue_token else {
            break;
        };
        if calls == 2 {
            create(ctx, &pod("paging", "test-5")).await;
        }
        opts.predicate.continue_token = cont;
        assert!(calls < 10, "[{}] too many list calls", ctx.name);
    }
    assert_eq!(calls, 4, "[{}] unexpected list invocations", ctx.name);
    assert_eq!(
        names,
        vec!["test-0", "test-1", "test-2", "test-3"],
        "[{}] unexpected items",
        ctx.name
    );
}

/// `RunTestNamespaceScopedList`: list scope with and without a request namespace, with
/// `metadata.name`, `metadata.namespace` and `spec.nodeName` field selectors.
pub async fn run_test_namespace_scoped_list(ctx: &TestContext) {
    type Pods = fn(&str) -> Vec<Value>;
    type Sel = fn(&str) -> FieldSelector;
    struct Case {
        name: &'static str,
        requested_namespace: &'static str,
        field_selector: Sel,
        input: Pods,
        expect: Pods,
    }
    fn ns_eq(ns: &str) -> FieldSelector {
        field_eq("metadata.namespace", ns)
    }
    let cases: Vec<Case> = vec![
        Case {
            name: "request without namespace, without field selector",
            requested_namespace: "",
            field_selector: |_| FieldSelector::default(),
            input: |_| vec![pod("ns1", "foo1"), pod("ns2", "foo2")],
            expect: |_| vec![pod("ns1", "foo1"), pod("ns2", "foo2")],
        },
        Case {
            name: "request without namespace, field selector with metadata.namespace",
            requested_namespace: "",
            field_selector: |ns| ns_eq(&format!("{ns}ns1")),
            input: |ns| vec![pod(&format!("{ns}ns1"), "foo1"), pod(&format!("{ns}ns2"), "foo1")],
            expect: |ns| vec![pod(&format!("{ns}ns1"), "foo1")],
        },
        Case {
            name: "request without namespace, field selector with spec.nodename",
            requested_namespace: "",
            field_selector: |_| field_eq("spec.nodeName", "bar1"),
            input: |ns| {
                vec![
                    pod_assigned(&format!("{ns}ns1"), "foo1", "bar1"),
                    pod_assigned(&format!("{ns}ns2"), "foo2", "bar2"),
                ]
            },
            expect: |ns| vec![pod_assigned(&format!("{ns}ns1"), "foo1", "bar1")],
        },
        Case {
            name: "request without namespace, field selector with spec.nodename to filter out",
            requested_namespace: "",
            field_selector: |_| field_ne("spec.nodeName", "bar1"),
            input: |ns| {
                vec![
                    pod_assigned(&format!("{ns}ns1"), "foo1", "bar1"),
                    pod_assigned(&format!("{ns}ns2"), "foo2", "bar2"),
                ]
            },
            expect: |ns| vec![pod_assigned(&format!("{ns}ns2"), "foo2", "bar2")],
        },
        Case {
            name: "request with namespace, without field selector",
            requested_namespace: "ns1",
            field_selector: |_| FieldSelector::default(),
            input: |ns| {
                vec![
                    pod(&format!("{ns}ns1"), "foo1"),
                    pod(&format!("{ns}ns2"), "foo1"),
                    pod(&format!("{ns}ns1"), "foo2"),
                ]
            },
            expect: |ns| vec![pod(&format!("{ns}ns1"), "foo1"), pod(&format!("{ns}ns1"), "foo2")],
        },
        Case {
            name: "request with namespace, field selector with matched metadata.namespace",
            requested_namespace: "ns1",
            field_selector: |ns| ns_eq(&format!("{ns}ns1")),
            input: |ns| vec![pod(&format!("{ns}ns1"), "foo1"), pod(&format!("{ns}ns2"), "foo1")],
            expect: |ns| vec![pod(&format!("{ns}ns1"), "foo1")],
        },
        Case {
            name: "request with namespace, field selector with non-matched metadata.namespace",
            requested_namespace: "ns1",
            field_selector: |ns| ns_eq(&format!("{ns}ns2")),
            input: |ns| {
                vec![
                    pod(&format!("{ns}ns1"), "foo1"),
                    pod(&format!("{ns}ns2"), "foo1"),
                    pod_updated(&format!("{ns}ns1"), "foo2"),
                    pod_updated(&format!("{ns}ns2"), "foo2"),
                ]
            },
            expect: |_| vec![],
        },
        Case {
            name: "request with namespace, field selector with spec.nodename",
            requested_namespace: "ns1",
            field_selector: |_| field_eq("spec.nodeName", "bar2"),
            input: |ns| {
                vec![
                    pod_assigned(&format!("{ns}ns1"), "foo1", "bar1"),
                    pod_assigned(&format!("{ns}ns2"), "foo1", "bar2"),
                    pod_assigned(&format!("{ns}ns1"), "foo2", "bar2"),
                ]
            },
            expect: |ns| vec![pod_assigned(&format!("{ns}ns1"), "foo2", "bar2")],
        },
        Case {
            name: "request with namespace, field selector with spec.nodename to filter out",
            requested_namespace: "ns2",
            field_selector: |_| field_ne("spec.nodeName", "bar1"),
            input: |ns| {
                vec![
                    pod(&format!("{ns}ns1"), "foo1"),
                    pod(&format!("{ns}ns2"), "foo1"),
                    pod_assigned(&format!("{ns}ns2"), "foo3", "bar1"),
                    pod_assigned(&format!("{ns}ns2"), "foo2", "bar2"),
                ]
            },
            expect: |ns| {
                vec![
                    pod(&format!("{ns}ns2"), "foo1"),
                    pod_assigned(&format!("{ns}ns2"), "foo2", "bar2"),
                ]
            },
        },
        Case {
            name: "request without namespace, field selector with metadata.name",
            requested_namespace: "",
            field_selector: |_| field_eq("metadata.name", "foo1"),
            input: |ns| {
                vec![
                    pod(&format!("{ns}ns1"), "foo1"),
                    pod(&format!("{ns}ns2"), "foo1"),
                    pod(&format!("{ns}ns1"), "foo2"),
                ]
            },
            expect: |ns| vec![pod(&format!("{ns}ns1"), "foo1"), pod(&format!("{ns}ns2"), "foo1")],
        },
        Case {
            name: "request without namespace, field selector with metadata.name and metadata.namespace",
            requested_namespace: "",
            field_selector: |ns| {
                fields(vec![
                    freq("metadata.name", true, "foo1"),
                    freq("metadata.namespace", true, &format!("{ns}ns1")),
                ])
            },
            input: |ns| {
                vec![
                    pod(&format!("{ns}ns1"), "foo1"),
                    pod(&format!("{ns}ns1"), "foo2"),
                    pod(&format!("{ns}ns2"), "foo1"),
                ]
            },
            expect: |ns| vec![pod(&format!("{ns}ns1"), "foo1")],
        },
        Case {
            name: "request without namespace, field selector with metadata.name and spec.nodeName",
            requested_namespace: "",
            field_selector: |_| {
                fields(vec![
                    freq("metadata.name", true, "foo1"),
                    freq("spec.nodeName", true, "bar1"),
                ])
            },
            input: |ns| vec![pod_assigned(&format!("{ns}ns1"), "foo1", "bar1")],
            expect: |ns| vec![pod_assigned(&format!("{ns}ns1"), "foo1", "bar1")],
        },
        Case {
            name: "request without namespace, field selector with metadata.name, and with spec.nodeName to filter out watch",
            requested_namespace: "",
            field_selector: |_| {
                fields(vec![
                    freq("spec.nodeName", false, "bar1"),
                    freq("metadata.name", true, "foo1"),
                ])
            },
            input: |ns| {
                vec![
                    pod(&format!("{ns}ns1"), "foo1"),
                    pod(&format!("{ns}ns1"), "foo2"),
                    pod_assigned(&format!("{ns}ns2"), "foo1", "bar1"),
                    pod_assigned(&format!("{ns}ns2"), "foo2", "bar1"),
                    pod_assigned(&format!("{ns}ns3"), "foo1", "bar2"),
                    pod_assigned(&format!("{ns}ns3"), "foo2", "bar2"),
                ]
            },
            expect: |ns| {
                vec![
                    pod(&format!("{ns}ns1"), "foo1"),
                    pod_assigned(&format!("{ns}ns3"), "foo1", "bar2"),
                ]
            },
        },
        Case {
            name: "request with namespace, with field selector metadata.name",
            requested_namespace: "ns1",
            field_selector: |_| field_eq("metadata.name", "foo1"),
            input: |ns| {
                vec![
                    pod(&format!("{ns}ns1"), "foo1"),
                    pod(&format!("{ns}ns1"), "foo2"),
                    pod(&format!("{ns}ns2"), "foo1"),
                    pod(&format!("{ns}ns2"), "foo2"),
                ]
            },
            expect: |ns| vec![pod(&format!("{ns}ns1"), "foo1")],
        },
        Case {
            name: "request with namespace, with field selector metadata.name and metadata.namespace",
            requested_namespace: "ns1",
            field_selector: |ns| {
                fields(vec![
                    freq("metadata.name", true, "foo1"),
                    freq("metadata.namespace", true, &format!("{ns}ns1")),
                ])
            },
            input: |ns| {
                vec![
                    pod(&format!("{ns}ns1"), "foo1"),
                    pod(&format!("{ns}ns1"), "foo2"),
                    pod(&format!("{ns}ns2"), "foo1"),
                    pod(&format!("{ns}ns2"), "foo2"),
                ]
            },
            expect: |ns| vec![pod(&format!("{ns}ns1"), "foo1")],
        },
        Case {
            name: "request with namespace, with field selector metadata.name, metadata.namespace and spec.nodename",
            requested_namespace: "ns2",
            field_selector: |ns| {
                fields(vec![
                    freq("metadata.name", true, "foo2"),
                    freq("metadata.namespace", true, &format!("{ns}ns2")),
                    freq("spec.nodeName", true, "bar1"),
                ])
            },
            input: |ns| {
                vec![
                    pod(&format!("{ns}ns1"), "foo1"),
                    pod(&format!("{ns}ns1"), "foo2"),
                    pod(&format!("{ns}ns2"), "foo1"),
                    pod_assigned(&format!("{ns}ns2"), "foo2", "bar1"),
                    pod_assigned(&format!("{ns}ns3"), "foo1", "bar1"),
                    pod_assigned(&format!("{ns}ns3"), "foo2", "bar1"),
                ]
            },
            expect: |ns| vec![pod_assigned(&format!("{ns}ns2"), "foo2", "bar1")],
        },
        Case {
            name: "request with namespace, with field selector metadata.name, metadata.namespace, and with spec.nodename to filter out",
            requested_namespace: "ns2",
            field_selector: |ns| {
                fields(vec![
                    freq("spec.nodeName", false, "bar2"),
                    freq("metadata.name", true, "foo1"),
                    freq("metadata.namespace", true, &format!("{ns}ns2")),
                ])
            },
            input: |ns| {
                vec![
                    pod(&format!("{ns}ns1"), "foo1"),
                    pod(&format!("{ns}ns1"), "foo2"),
                    pod_assigned(&format!("{ns}ns2"), "foo1", "bar1"),
                    pod_assigned(&format!("{ns}ns2"), "foo2", "bar2"),
                    pod_assigned(&format!("{ns}ns3"), "foo1", "bar2"),
                ]
            },
            expect: |ns| vec![pod_assigned(&format!("{ns}ns2"), "foo1", "bar1")],
        },
    ];
    for (i, tt) in cases.iter().enumerate() {
        let namespace = format!("t{i}-");
        let mut keys = std::collections::BTreeSet::new();
        for p in (tt.input)(&namespace) {
            keys.insert(pod_key(&p));
            create(ctx, &p).await;
        }
        let mut path = "/pods/".to_string();
        if !tt.requested_namespace.is_empty() {
            path.push_str(&format!("{namespace}{}", tt.requested_namespace));
        }
        let out = list(
            ctx,
            &path,
            &list_opts("", pod_pred((tt.field_selector)(&namespace)), true),
        )
        .await;
        let got: Vec<Value> = out
            .items
            .iter()
            .filter(|p| keys.contains(&pod_key(p)))
            .map(without_rv)
            .collect();
        assert_items(
            ctx,
            &format!("{}: incorrect list pods", tt.name),
            &(tt.expect)(&namespace),
            &got,
        );
    }
}

/// `RunTestCompactRevision`: `compact_revision()` reports a compaction, and an Exact list at a
/// revision below it fails with "too old". Needs a backend of its own.
pub async fn run_test_compact_revision(ctx: &TestContext) {
    let out = list(ctx, "/pods/", &list_opts("", everything(), true)).await;
    let current_rv = out.resource_version;
    let compacted = ctx.storage.compact_revision();
    assert!(
        compacted < current_rv,
        "[{}] Expected current RV not be compacted, current: {current_rv}, compacted: {compacted}",
        ctx.name
    );
    let exact = ListOptions {
        resource_version: current_rv.to_string(),
        resource_version_match: ResourceVersionMatch::Exact,
        recursive: true,
        ..ListOptions::default()
    };
    list(ctx, "/pods/", &exact).await;
    ctx.increase_rv().await;
    let expect_compacted = current_rv + 1;
    ctx.compact(expect_compacted).await;
    match ctx.storage.get_list_owned("/pods/", &exact).await {
        Err(e)
            if e.to_string()
                .contains("The resourceVersion for the provided list is too old") => {}
        other => panic!(
            "[{}] Expected \"The resourceVersion for the provided list is too old\", got {other:?}",
            ctx.name
        ),
    }
    assert_eq!(
        ctx.storage.compact_revision(),
        expect_compacted,
        "[{}] CompactRevision()",
        ctx.name
    );
}

/// `RunTestStats`: the object count follows creates, updates and deletes (the size estimate is
/// not part of this API).
pub async fn run_test_stats(ctx: &TestContext) {
    async fn assert_count(ctx: &TestContext, want: i64) {
        // Execute consistent LIST to refresh the state of a cache.
        list(ctx, "/pods/", &list_opts("", everything(), true)).await;
        let got = ctx
            .storage
            .count("/pods")
            .await
            .unwrap_or_else(|e| panic!("[{}] Stats failed: {e}", ctx.name));
        assert_eq!(got, want, "[{}] ObjectCount", ctx.name);
    }
    assert_count(ctx, 0).await;
    let foo_pod = pod("", "foo");
    let foo_key = pod_key(&foo_pod);
    create(ctx, &foo_pod).await;
    assert_count(ctx, 1).await;
    let bar = pod("", "bar");
    let bar_key = pod_key(&bar);
    create(ctx, &bar).await;
    assert_count(ctx, 2).await;
    update_with(ctx, &bar_key, |mut p| {
        set_labels(&mut p, &[("foo", "bar")]);
        Ok(p)
    })
    .await;
    assert_count(ctx, 2).await;
    delete_plain(&*ctx.storage, &foo_key, None)
        .await
        .unwrap_or_else(|e| panic!("[{}] Delete failed: {e}", ctx.name));
    assert_count(ctx, 1).await;
    assert!(
        delete_plain(&*ctx.storage, &foo_key, None).await.is_err(),
        "[{}] Delete expected to fail",
        ctx.name
    );
    assert_count(ctx, 1).await;
    delete_plain(&*ctx.storage, &bar_key, None)
        .await
        .unwrap_or_else(|e| panic!("[{}] Delete failed: {e}", ctx.name));
    assert_count(ctx, 0).await;
}

/// `RunTestKeySchema`: key validation for every verb ("empty key", "invalid key" for `.` and
/// `..`, "lacks resource prefix"), and which forms are accepted recursively or not. All
/// mismatches are reported together.
pub async fn run_test_key_schema(ctx: &TestContext) {
    let s = &ctx.storage;
    let empty_pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {}});
    let mut problems: Vec<String> = Vec::new();
    fn check<T: std::fmt::Debug>(
        problems: &mut Vec<String>,
        call: String,
        res: Result<T>,
        want_err: Option<&str>,
    ) {
        match (want_err, &res) {
            (None, Ok(_)) => {}
            (Some(want), Err(e)) if e.to_string().contains(want) => {}
            (None, Err(e)) => problems.push(format!("{call}: expected no error, got {e:?}")),
            (Some(want), Ok(v)) => problems.push(format!(
                "{call}: expected an error containing {want:?}, got Ok({v:?})"
            )),
            (Some(want), Err(e)) => problems.push(format!(
                "{call}: expected an error containing {want:?}, got {e:?}"
            )),
        }
    }
    const EMPTY: Option<&str> = Some("empty key");
    const INVALID: Option<&str> = Some("invalid key");
    const LACKS: Option<&str> = Some("lacks resource prefix");

    for (key, want) in [
        ("", EMPTY),
        ("/", EMPTY),
        (".", INVALID),
        ("..", INVALID),
        ("pods", LACKS),
        ("/pods", LACKS),
        ("/pods.apps", LACKS),
        ("/foo/", LACKS),
        ("/pods/", None),
        ("/pods/name", None),
        ("/pods/namespace", None),
        ("/pods/namespace/name", None),
    ] {
        let r = s.create(key, empty_pod.clone(), 0).await;
        check(&mut problems, format!("Create({key:?})"), r, want);
    }

    let rec = list_opts("", everything(), true);
    let non_rec = list_opts("", everything(), false);
    for (key, recursive, want) in [
        ("", true, EMPTY),
        ("/", true, EMPTY),
        (".", true, INVALID),
        ("..", true, INVALID),
        ("pods", true, LACKS),
        ("/pods.apps", true, LACKS),
        ("/foo/", true, LACKS),
        ("/pods", false, LACKS),
        ("/pods", true, None),
        ("/pods/", true, None),
        ("/pods/namespace", true, None),
        ("/pods/namespace/name", true, None),
    ] {
        let opts = if recursive { &rec } else { &non_rec };
        let r = s.get_list_owned(key, opts).await.map(|_| ());
        check(
            &mut problems,
            format!("GetList({key:?}, recursive={recursive})"),
            r,
            want,
        );
    }

    for (key, want) in [
        ("", EMPTY),
        ("/", EMPTY),
        (".", INVALID),
        ("..", INVALID),
        ("pods", LACKS),
        ("/pods", LACKS),
        ("/pods.apps", LACKS),
        ("/foo/", LACKS),
        ("/pods/", None),
        ("/pods/namespace", None),
        ("/pods/namespace/name", None),
    ] {
        let r = s.get_owned(key, &GetOptions::default()).await.map(|_| ());
        check(&mut problems, format!("Get({key:?})"), r, want);
    }

    for (key, recursive, want) in [
        ("", true, EMPTY),
        ("/", true, EMPTY),
        (".", true, INVALID),
        ("..", true, INVALID),
        ("pods", true, LACKS),
        ("/pods.apps", true, LACKS),
        ("/foo/", true, LACKS),
        ("/pods", false, LACKS),
        ("/pods", true, None),
        ("/pods/namespace", true, None),
        ("/pods/namespace/name", true, None),
    ] {
        let opts = if recursive {
            rec.clone()
        } else {
            non_rec.clone()
        };
        // The watch stops when the receiver is dropped.
        let r = s.watch(key, opts).await.map(|_| ());
        check(
            &mut problems,
            format!("Watch({key:?}, recursive={recursive})"),
            r,
            want,
        );
    }

    for (key, want) in [
        ("", EMPTY),
        ("/", EMPTY),
        (".", INVALID),
        ("..", INVALID),
        ("pods", LACKS),
        ("/pods", LACKS),
        ("/pods.apps", LACKS),
        ("/foo/", LACKS),
        ("/pods/", None),
        ("/pods/namespace", None),
        ("/pods/namespace/name", None),
    ] {
        let r = s
            .guaranteed_update(
                key,
                false,
                &Preconditions::default(),
                &mut replace_with(empty_pod.clone(), None),
                None,
            )
            .await
            .map(|_| ());
        check(&mut problems, format!("GuaranteedUpdate({key:?})"), r, want);
    }

    for (key, want) in [
        ("", EMPTY),
        ("/", EMPTY),
        (".", INVALID),
        ("..", INVALID),
        ("pods", LACKS),
        ("/pods", LACKS),
        ("/pods.apps", LACKS),
        ("/foo", LACKS),
        ("/pods/", None),
        ("/pods/namespace", None),
        ("/pods/namespace/name", None),
    ] {
        let r = delete_plain(&**s, key, None).await.map(|_| ());
        check(&mut problems, format!("Delete({key:?})"), r, want);
    }
    assert!(
        problems.is_empty(),
        "[{}] RunTestKeySchema: {} mismatch(es):\n  - {}",
        ctx.name,
        problems.len(),
        problems.join("\n  - ")
    );
}

// ---------------------------------------------------------------------------------------------
// store_tests.go: guaranteed updates and transformers.
// ---------------------------------------------------------------------------------------------

/// `RunTestGuaranteedUpdate`: a missing key with `ignore_not_found` false and true, an existing
/// key, identical data (no write, no new resourceVersion, also when only `selfLink` differs),
/// stale data (written anyway), UID preconditions.
pub async fn run_test_guaranteed_update(ctx: &TestContext) {
    let mut input = pod("test-ns", "foo");
    set_uid(&mut input, "A");
    let key = pod_key(&input);
    struct Case {
        name: &'static str,
        key: String,
        ignore_not_found: bool,
        precondition: Option<&'static str>,
        expect_not_found: bool,
        expect_invalid_obj: bool,
        expect_no_update: bool,
        transform_stale: bool,
        has_self_link: bool,
    }
    let base = |name, key: &str| Case {
        name,
        key: key.to_string(),
        ignore_not_found: false,
        precondition: None,
        expect_not_found: false,
        expect_invalid_obj: false,
        expect_no_update: false,
        transform_stale: false,
        has_self_link: false,
    };
    let cases = vec![
        Case {
            expect_not_found: true,
            ..base(
                "non-existing key, ignoreNotFound=false",
                "/pods/non-existing",
            )
        },
        Case {
            ignore_not_found: true,
            ..base(
                "non-existing key, ignoreNotFound=true",
                "/pods/non-existing",
            )
        },
        base("existing key", &key),
        Case {
            expect_no_update: true,
            ..base("same data", &key)
        },
        Case {
            expect_no_update: true,
            has_self_link: true,
            ..base("same data, a selfLink", &key)
        },
        Case {
            transform_stale: true,
            ..base("same data, stale", &key)
        },
        Case {
            precondition: Some("A"),
            expect_no_update: true,
            ..base("UID match", &key)
        },
        Case {
            precondition: Some("B"),
            expect_invalid_obj: true,
            expect_no_update: true,
            ..base("UID mismatch", &key)
        },
    ];
    for (i, tt) in cases.into_iter().enumerate() {
        let (key, store_obj) = propagate(ctx, &input).await;
        let annotations: Vec<(String, String)> = if tt.expect_no_update {
            vec![]
        } else {
            vec![("version".into(), i.to_string())]
        };
        let _revert = if tt.transform_stale {
            match ctx.transformer(&format!("RunTestGuaranteedUpdate/{}", tt.name)) {
                Some(t) => Some(t.update(|s| s.stale = true)),
                None => continue,
            }
        } else {
            None
        };
        let version = rv_of(&store_obj);
        let zero_violation = Arc::new(AtomicBool::new(false));
        let zv = zero_violation.clone();
        let expect_zero = tt.expect_not_found && tt.ignore_not_found;
        let (so, ann, self_link) = (store_obj.clone(), annotations.clone(), tt.has_self_link);
        let mut update = simple_update(move |current| {
            if expect_zero && !current.is_null() {
                zv.store(true, Ordering::SeqCst);
            }
            let mut p = so.clone();
            if self_link {
                set_meta(&mut p, "selfLink", json!("testlink"));
            }
            let pairs: Vec<(&str, &str)> =
                ann.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
            set_annotations(&mut p, &pairs);
            Ok(p)
        });
        let pre = Preconditions {
            uid: tt.precondition.map(str::to_string),
            resource_version: None,
        };
        let res = ctx
            .storage
            .guaranteed_update(&tt.key, tt.ignore_not_found, &pre, &mut update, None)
            .await;
        assert!(
            !zero_violation.load(Ordering::SeqCst),
            "[{}] {}: expecting a zero value for a missing object",
            ctx.name,
            tt.name
        );
        if tt.expect_not_found {
            assert!(
                matches!(&res, Err(e) if e.is_not_found()),
                "[{}] {}: expecting not found error, got {res:?}",
                ctx.name,
                tt.name
            );
            continue;
        }
        if tt.expect_invalid_obj {
            assert!(
                matches!(&res, Err(e) if e.is_invalid_obj()),
                "[{}] {}: expecting invalid UID error, got {res:?}",
                ctx.name,
                tt.name
            );
            continue;
        }
        let out = res
            .unwrap_or_else(|e| panic!("[{}] {}: GuaranteedUpdate failed: {e}", ctx.name, tt.name));
        let want_annotations: Option<Value> = if annotations.is_empty() {
            None
        } else {
            Some(Value::Object(
                annotations
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect(),
            ))
        };
        assert_eq!(
            out.pointer("/metadata/annotations").cloned(),
            want_annotations,
            "[{}] {}: pod annotations",
            ctx.name,
            tt.name
        );
        assert!(
            out.pointer("/metadata/selfLink").is_none(),
            "[{}] {}: selfLink should not be set",
            ctx.name,
            tt.name
        );
        // the stored data matches expectations
        ctx.validate_key(&key).await;
        if tt.expect_no_update {
            assert_eq!(
                version,
                rv_of(&out),
                "[{}] {}: expect no version change",
                ctx.name,
                tt.name
            );
        } else {
            assert_ne!(
                version,
                rv_of(&out),
                "[{}] {}: expect version change",
                ctx.name,
                tt.name
            );
        }
    }
}

/// `RunTestGuaranteedUpdateWithTTL`: an update with a TTL makes the object expire; a watch
/// sees DELETED.
pub async fn run_test_guaranteed_update_with_ttl(ctx: &TestContext) {
    let input = pod("test-ns", "foo");
    let key = pod_key(&input);
    let out = ctx
        .storage
        .guaranteed_update(
            &key,
            true,
            &Preconditions::default(),
            &mut replace_with(input, Some(1)),
            None,
        )
        .await
        .unwrap_or_else(|e| panic!("[{}] Create failed: {e}", ctx.name));
    let mut w = watch(ctx, &key, list_opts(&rv_of(&out), everything(), false)).await;
    expect_event_type(ctx, &mut w, "DELETED", TTL_TIMEOUT).await;
}

/// `RunTestGuaranteedUpdateChecksStoredData`: the update compares stored bytes, not decoded
/// objects: non-canonical stored bytes are rewritten, canonical ones are not, stale ones are.
pub async fn run_test_guaranteed_update_checks_stored_data(ctx: &TestContext) {
    let Some(transformer) = ctx.transformer("RunTestGuaranteedUpdateChecksStoredData") else {
        return;
    };
    let mut input = pod("test-ns", "foo");
    let key = pod_key(&input);
    // Serialize input with data that a write would normalize: leading whitespace.
    let revert = transformer.update(|s| s.prefix.push(b' '));
    let (_, initial) = propagate(ctx, &input).await;
    revert.revert();

    // This update writes the canonical value because the new serialization differs.
    set_rv(&mut input, &rv_of(&initial));
    let out = ctx
        .storage
        .guaranteed_update(
            &key,
            true,
            &Preconditions::default(),
            &mut replace_with(input.clone(), None),
            Some(input.clone()),
        )
        .await
        .unwrap_or_else(|e| panic!("[{}] Update failed: {e}", ctx.name));
    assert_ne!(
        rv_of(&out),
        rv_of(&initial),
        "[{}] guaranteed update should have updated the serialized data",
        ctx.name
    );
    let last_version = rv_of(&out);

    // This update does not write because the input matches the stored data.
    let input = out.clone();
    let out = ctx
        .storage
        .guaranteed_update(
            &key,
            true,
            &Preconditions::default(),
            &mut replace_with(input.clone(), None),
            Some(input.clone()),
        )
        .await
        .unwrap_or_else(|e| panic!("[{}] Update failed: {e}", ctx.name));
    assert_eq!(
        rv_of(&out),
        last_version,
        "[{}] guaranteed update should have short-circuited the write",
        ctx.name
    );

    // This update writes because the transformer reports stale data.
    let _revert = transformer.update(|s| s.stale = true);
    let out = ctx
        .storage
        .guaranteed_update(
            &key,
            true,
            &Preconditions::default(),
            &mut replace_with(input.clone(), None),
            Some(input),
        )
        .await
        .unwrap_or_else(|e| panic!("[{}] Update failed: {e}", ctx.name));
    assert_ne!(
        rv_of(&out),
        last_version,
        "[{}] guaranteed update should have written when the transformer reported stale",
        ctx.name
    );
}

/// `RunTestGuaranteedUpdateWithConflict`: two concurrent updates both apply; the second one
/// retries its update function after the conflict.
pub async fn run_test_guaranteed_update_with_conflict(ctx: &TestContext) {
    let (key, _) = propagate(ctx, &pod("test-ns", "foo")).await;
    let first_to_finish = Arc::new(tokio::sync::Notify::new());
    let second_to_enter = Arc::new(tokio::sync::Notify::new());

    let storage = ctx.storage.clone();
    let (k, enter) = (key.clone(), second_to_enter.clone());
    let finish = first_to_finish.clone();
    let first = tokio::spawn(async move {
        let mut update = move |mut obj: Value,
                               _meta: ResponseMeta|
              -> BoxFuture<'static, Result<UpdateOutcome>> {
            let enter = enter.clone();
            Box::pin(async move {
                set_meta(&mut obj, "name", json!("foo-1"));
                enter.notified().await;
                Ok(UpdateOutcome {
                    object: obj,
                    ttl: None,
                })
            })
        };
        let r = storage
            .guaranteed_update(&k, false, &Preconditions::default(), &mut update, None)
            .await;
        finish.notify_one();
        r
    });

    let update_count = Arc::new(AtomicUsize::new(0));
    let uc = update_count.clone();
    let (enter, finish) = (second_to_enter.clone(), first_to_finish.clone());
    let mut update =
        move |mut obj: Value, _meta: ResponseMeta| -> BoxFuture<'static, Result<UpdateOutcome>> {
            let n = uc.fetch_add(1, Ordering::SeqCst);
            let (enter, finish) = (enter.clone(), finish.clone());
            Box::pin(async move {
                if n == 0 {
                    enter.notify_one();
                    finish.notified().await;
                }
                set_meta(&mut obj, "name", json!("foo-2"));
                Ok(UpdateOutcome {
                    object: obj,
                    ttl: None,
                })
            })
        };
    ctx.storage
        .guaranteed_update(&key, false, &Preconditions::default(), &mut update, None)
        .await
        .unwrap_or_else(|e| panic!("[{}] Second GuaranteedUpdate error: {e}", ctx.name));
    first
        .await
        .expect("first update task")
        .unwrap_or_else(|e| panic!("[{}] First GuaranteedUpdate error: {e}", ctx.name));
    assert_eq!(
        update_count.load(Ordering::SeqCst),
        2,
        "[{}] Should have conflict and called update func twice",
        ctx.name
    );
}

/// `RunTestGuaranteedUpdateWithSuggestionAndConflict`: a stale cached object leads to a live
/// read and a second update call; an error on a fresh cached object is returned without a
/// (useless) retry.
pub async fn run_test_guaranteed_update_with_suggestion_and_conflict(ctx: &TestContext) {
    let (key, original) = propagate(ctx, &pod("test-ns", "foo")).await;
    // First, update without a suggestion so the original is outdated.
    update_with(ctx, &key, |mut p| {
        set_meta(&mut p, "generation", json!(2));
        Ok(p)
    })
    .await;
    let generation = |p: &Value| {
        p.pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(0)
    };

    // Second, update with the outdated original as the suggestion: a conflict on it, then a
    // second call with the live object.
    let saw_conflict = Arc::new(AtomicBool::new(false));
    let second_conflict = Arc::new(AtomicBool::new(false));
    let (sc, sc2) = (saw_conflict.clone(), second_conflict.clone());
    let mut update = simple_update(move |mut p| {
        if generation(&p) != 2 {
            if sc.swap(true, Ordering::SeqCst) {
                sc2.store(true, Ordering::SeqCst);
            }
            // simulated stale object: a conflict
            return Err(test_error(
                "Operation cannot be fulfilled on pods \"name\": foo",
            ));
        }
        set_meta(&mut p, "generation", json!(3));
        Ok(p)
    });
    let updated2 = ctx
        .storage
        .guaranteed_update(
            &key,
            false,
            &Preconditions::default(),
            &mut update,
            Some(original),
        )
        .await
        .unwrap_or_else(|e| panic!("[{}] unexpected error: {e}", ctx.name));
    assert!(
        !second_conflict.load(Ordering::SeqCst),
        "[{}] unexpected second conflict",
        ctx.name
    );
    assert_eq!(generation(&updated2), 3, "[{}] pod generation", ctx.name);

    // Third, update with the current object as the suggestion: an error, and no second call
    // since the live read shows the suggestion was current.
    let attempts = Arc::new(AtomicUsize::new(0));
    let a = attempts.clone();
    let mut update = simple_update(move |_p| {
        a.fetch_add(1, Ordering::SeqCst);
        Err(test_error("validation or admission error"))
    });
    let res = ctx
        .storage
        .guaranteed_update(
            &key,
            false,
            &Preconditions::default(),
            &mut update,
            Some(updated2),
        )
        .await;
    assert!(res.is_err(), "[{}] expected error, got none", ctx.name);
    // Implementations may ignore the suggestion, in which case two attempts are possible.
    assert!(
        attempts.load(Ordering::SeqCst) <= 2,
        "[{}] update function should have been called at most twice, called {}",
        ctx.name,
        attempts.load(Ordering::SeqCst)
    );
}

/// `RunTestTransformationFailure`: data that cannot be transformed makes List, Get,
/// GuaranteedUpdate and Delete fail with an internal error.
pub async fn run_test_transformation_failure(ctx: &TestContext) {
    let Some(transformer) = ctx.transformer("RunTestTransformationFailure") else {
        return;
    };
    let mut bar_first = pod("first", "bar");
    bar_first["spec"] = deep_equal_safe_pod_spec();
    let mut baz_second = pod("second", "baz");
    baz_second["spec"] = deep_equal_safe_pod_spec();
    create(ctx, &bar_first).await;
    // create a second resource with an invalid prefix
    let revert = transformer.update(|s| {
        *s = TransformerState {
            prefix: b"otherprefix!".to_vec(),
            ..TransformerState::default()
        }
    });
    create(ctx, &baz_second).await;
    revert.revert();
    let baz_key = pod_key(&baz_second);

    // List should fail
    let r = ctx
        .storage
        .get_list_owned("/pods/", &list_opts("", everything(), true))
        .await;
    assert!(
        matches!(&r, Err(e) if is_internal(e)),
        "[{}] List: unexpected result {r:?}",
        ctx.name
    );
    // Get should fail
    let r = get(ctx, &baz_key).await;
    assert!(
        matches!(&r, Err(e) if is_internal(e)),
        "[{}] Get: unexpected result {r:?}",
        ctx.name
    );
    // GuaranteedUpdate without suggestion should return an error
    let identity = || simple_update(Ok);
    let r = ctx
        .storage
        .guaranteed_update(
            &baz_key,
            false,
            &Preconditions::default(),
            &mut identity(),
            None,
        )
        .await;
    assert!(
        matches!(&r, Err(e) if is_internal(e)),
        "[{}] GuaranteedUpdate: unexpected result {r:?}",
        ctx.name
    );
    // GuaranteedUpdate with suggestion should return an error if we don't change the object
    let r = ctx
        .storage
        .guaranteed_update(
            &baz_key,
            false,
            &Preconditions::default(),
            &mut identity(),
            Some(baz_second.clone()),
        )
        .await;
    assert!(
        r.is_err(),
        "[{}] GuaranteedUpdate with suggestion: unexpected result {r:?}",
        ctx.name
    );
    // Delete fails with internal error.
    let r = delete_plain(&*ctx.storage, &baz_key, None).await;
    assert!(
        matches!(&r, Err(e) if is_internal(e)),
        "[{}] Delete: unexpected result {r:?}",
        ctx.name
    );
    let r = get(ctx, &baz_key).await;
    assert!(
        matches!(&r, Err(e) if is_internal(e)),
        "[{}] Get: unexpected result {r:?}",
        ctx.name
    );
}
