//! `KvStore`'s shared objects: `get`, an unfiltered `get_list` or `watch` hand
//! out the stored bytes undecoded (`SharedObject::Stored`), a filtered one the objects it
//! decoded to evaluate the selector; `get_list` and `SharedObject::write_json` both turn them
//! into the same objects, with the resourceVersion of each key (a DELETED event: the delete's);
//! corrupt stored bytes are an error when the item is used, and a value transformer runs
//! before the bytes are handed out. (The conformance suite runs every `get_list` and `watch`
//! case through the same paths.)

use serde_json::{json, Value};
use std::borrow::Cow;
use std::sync::Arc;
use wasm_apiserver_storage::backend::Backend;
use wasm_apiserver_storage::embedded::{Embedded, EmbeddedOptions};
use wasm_apiserver_storage::store::{KvStore, StoreConfig, ValueTransformer};
use wasm_apiserver_storage::testing::OwnedReads;
use wasm_apiserver_storage::{
    LabelSelector, ListOptions, Preconditions, SelectionPredicate, SharedObject, Storage,
    StorageError, WatchEvent, WatchStream,
};

async fn store(
    transformer: Option<Arc<dyn ValueTransformer>>,
) -> (KvStore<Embedded>, Arc<Embedded>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let opts = EmbeddedOptions {
        synchronous_full: false,
        ..EmbeddedOptions::default()
    };
    let backend = Arc::new(Embedded::open(dir.path(), opts).await.unwrap());
    let mut cfg = StoreConfig::new("/registry", "/pods", "v1", "Pod");
    if let Some(t) = transformer {
        cfg.transformer = t;
    }
    (KvStore::new(backend.clone(), cfg), backend, dir)
}

fn pod(name: &str, app: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": name, "namespace": "ns", "labels": {"app": app}},
           "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
}

fn opts(label: &str, limit: i64) -> ListOptions {
    ListOptions {
        predicate: SelectionPredicate {
            label: LabelSelector::parse(label).unwrap(),
            limit,
            ..Default::default()
        },
        recursive: true,
        ..Default::default()
    }
}

fn written(item: &SharedObject) -> Value {
    let mut out = Vec::new();
    item.write_json(&mut out).unwrap();
    serde_json::from_slice(&out).unwrap()
}

async fn fill(s: &KvStore<Embedded>) -> Vec<Value> {
    let mut created = Vec::new();
    for i in 0..6 {
        let app = if i % 2 == 0 { "web" } else { "db" };
        created.push(
            s.create(&format!("/pods/ns/p{i}"), pod(&format!("p{i}"), app), 0)
                .await
                .unwrap(),
        );
    }
    created
}

#[tokio::test(flavor = "multi_thread")]
async fn unfiltered_lists_hand_out_stored_bytes_that_write_as_the_objects() {
    let (s, _b, _dir) = store(None).await;
    let created = fill(&s).await;
    for limit in [0, 4] {
        let shared = s.get_list("/pods", &opts("", limit)).await.unwrap();
        let owned = s.get_list_owned("/pods", &opts("", limit)).await.unwrap();
        let n = if limit == 0 { 6 } else { 4 };
        assert_eq!(shared.items.len(), n);
        assert_eq!(owned.items, created[..n].to_vec());
        assert_eq!(shared.continue_token.is_some(), limit > 0);
        assert_eq!(shared.remaining_item_count, (limit > 0).then_some(2));
        for (item, obj) in shared.items.iter().zip(&created) {
            assert!(matches!(item, SharedObject::Stored(_)), "{item:?}");
            assert_eq!(&written(item), obj);
            assert_eq!(&*item.to_arc().unwrap(), obj);
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn filtered_lists_hand_out_the_decoded_matches() {
    let (s, _b, _dir) = store(None).await;
    let created = fill(&s).await;
    let web: Vec<Value> = created.iter().step_by(2).cloned().collect();
    let shared = s.get_list("/pods", &opts("app=web", 0)).await.unwrap();
    assert_eq!(shared.items.len(), 3);
    for (item, obj) in shared.items.iter().zip(&web) {
        assert!(matches!(item, SharedObject::Decoded(_)), "{item:?}");
        assert_eq!(&written(item), obj);
    }
    let owned = s
        .get_list_owned("/pods", &opts("app=web", 2))
        .await
        .unwrap();
    assert_eq!(owned.items, web[..2].to_vec());
    assert_eq!(owned.remaining_item_count, None);
}

#[tokio::test(flavor = "multi_thread")]
async fn corrupt_stored_bytes_fail_the_list_where_the_object_is_used() {
    let (s, b, _dir) = store(None).await;
    fill(&s).await;
    b.put_if("/registry/pods/ns/p9", 0, b"{\"kind\":".to_vec(), 0)
        .await
        .unwrap();
    let err = s.get_list_owned("/pods", &opts("", 0)).await.unwrap_err();
    assert!(
        matches!(&err, StorageError::CorruptObj { key, .. } if key == "/registry/pods/ns/p9"),
        "{err:?}"
    );
    let shared = s.get_list("/pods", &opts("", 0)).await.unwrap();
    let bad = shared.items.last().unwrap();
    let mut out = b"[".to_vec();
    assert!(matches!(
        bad.write_json(&mut out),
        Err(StorageError::CorruptObj { .. })
    ));
    assert_eq!(out, b"[", "nothing of the corrupt object is written");
    // A selector decodes every object, so the filtered list fails at once.
    let err = s.get_list("/pods", &opts("app=web", 0)).await.unwrap_err();
    assert!(matches!(err, StorageError::CorruptObj { .. }), "{err:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn get_hands_out_the_stored_bytes_and_the_owned_read_decodes_them() {
    let (s, b, _dir) = store(None).await;
    let created = fill(&s).await;
    let opts = wasm_apiserver_storage::GetOptions::default();
    for (i, obj) in created.iter().enumerate() {
        let key = format!("/pods/ns/p{i}");
        let item = s.get(&key, &opts).await.unwrap().unwrap();
        assert!(matches!(item, SharedObject::Stored(_)), "{item:?}");
        assert_eq!(&written(&item), obj);
        assert_eq!(&s.get_owned(&key, &opts).await.unwrap().unwrap(), obj);
    }
    let missing = wasm_apiserver_storage::GetOptions {
        ignore_not_found: true,
        ..Default::default()
    };
    assert!(s.get("/pods/ns/nope", &missing).await.unwrap().is_none());
    assert!(matches!(
        s.get("/pods/ns/nope", &opts).await,
        Err(StorageError::KeyNotFound { .. })
    ));
    // A corrupt object: the owned read fails, the shared one fails where the object is used.
    b.put_if("/registry/pods/ns/p9", 0, b"{\"kind\":".to_vec(), 0)
        .await
        .unwrap();
    assert!(matches!(
        s.get_owned("/pods/ns/p9", &opts).await,
        Err(StorageError::CorruptObj { .. })
    ));
    let item = s.get("/pods/ns/p9", &opts).await.unwrap().unwrap();
    let mut out = Vec::new();
    assert!(matches!(
        item.write_json(&mut out),
        Err(StorageError::CorruptObj { .. })
    ));
    assert!(out.is_empty());
}

/// The next event's type and object (`None` for the object of an ERROR or BOOKMARK).
async fn next(w: &mut WatchStream) -> (&'static str, Option<SharedObject>) {
    let ev = tokio::time::timeout(std::time::Duration::from_secs(5), w.recv())
        .await
        .expect("an event within 5 s")
        .expect("the watch is open");
    match ev {
        WatchEvent::Added(o) => ("ADDED", Some(o)),
        WatchEvent::Modified(o) => ("MODIFIED", Some(o)),
        WatchEvent::Deleted(o) => ("DELETED", Some(o)),
        WatchEvent::Bookmark(_) => ("BOOKMARK", None),
        WatchEvent::Error(e) => panic!("ERROR event: {e:?}"),
    }
}

fn watch_opts(label: &str, rv: &str) -> ListOptions {
    ListOptions {
        resource_version: rv.into(),
        ..opts(label, 0)
    }
}

fn rv_of(obj: &Value) -> u64 {
    obj["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn watches_hand_out_stored_bytes_unfiltered_and_decoded_matches_filtered() {
    let (s, _b, _dir) = store(None).await;
    let created = fill(&s).await;
    // "0": the current state as ADDED (etcd3 watcher `sync`), then the changes.
    let mut all = s.watch("/pods", watch_opts("", "0")).await.unwrap();
    let mut web = s.watch("/pods", watch_opts("app=web", "0")).await.unwrap();
    for (i, obj) in created.iter().enumerate() {
        let (kind, item) = next(&mut all).await;
        let item = item.unwrap();
        assert_eq!(kind, "ADDED");
        assert!(matches!(item, SharedObject::Stored(_)), "{item:?}");
        assert_eq!(&written(&item), obj);
        if i % 2 == 0 {
            let (kind, item) = next(&mut web).await;
            let item = item.unwrap();
            assert_eq!(kind, "ADDED");
            assert!(matches!(item, SharedObject::Decoded(_)), "{item:?}");
            assert_eq!(&written(&item), obj);
        }
    }
    let mut p0 = created[0].clone();
    p0["metadata"]["labels"]["extra"] = json!("yes");
    p0["metadata"]["resourceVersion"] = json!("");
    let mut try_update = {
        let p0 = p0.clone();
        move |_old: Value, _meta| {
            let p0 = p0.clone();
            Box::pin(async move {
                Ok(wasm_apiserver_storage::UpdateOutcome {
                    object: p0,
                    ttl: None,
                })
            }) as _
        }
    };
    let updated = s
        .guaranteed_update(
            "/pods/ns/p0",
            false,
            &Preconditions::default(),
            &mut try_update,
            None,
        )
        .await
        .unwrap();
    let deleted = s
        .delete(
            "/pods/ns/p0",
            &Preconditions::default(),
            &mut |_| Box::pin(async { Ok(()) }),
            None,
        )
        .await
        .unwrap();
    assert!(rv_of(&deleted) > rv_of(&updated));
    for w in [&mut all, &mut web] {
        let (kind, item) = next(w).await;
        assert_eq!(
            (kind, written(&item.unwrap())),
            ("MODIFIED", updated.clone())
        );
        let (kind, item) = next(w).await;
        let item = item.unwrap();
        assert_eq!(kind, "DELETED");
        // The last state with the delete's resourceVersion.
        assert_eq!(written(&item), deleted);
        assert_eq!(item.into_value().unwrap(), deleted);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn corrupt_stored_bytes_fail_the_watch_event_where_the_object_is_used() {
    let (s, b, _dir) = store(None).await;
    let created = fill(&s).await;
    let rv = rv_of(created.last().unwrap()).to_string();
    let mut all = s.watch("/pods", watch_opts("", &rv)).await.unwrap();
    let mut web = s.watch("/pods", watch_opts("app=web", &rv)).await.unwrap();
    b.put_if("/registry/pods/ns/p9", 0, b"{\"kind\":".to_vec(), 0)
        .await
        .unwrap();
    let (kind, item) = next(&mut all).await;
    assert_eq!(kind, "ADDED");
    let item = item.unwrap();
    let mut out = Vec::new();
    assert!(matches!(
        item.write_json(&mut out),
        Err(StorageError::CorruptObj { ref key, .. }) if key == "/registry/pods/ns/p9"
    ));
    assert!(out.is_empty(), "nothing of the corrupt object is written");
    assert!(matches!(
        item.into_value(),
        Err(StorageError::CorruptObj { .. })
    ));
    // A selector decodes the object in storage, so the filtered watch fails at once.
    let ev = tokio::time::timeout(std::time::Duration::from_secs(5), web.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(
        matches!(ev, WatchEvent::Error(StorageError::CorruptObj { .. })),
        "{ev:?}"
    );
}

/// Stores every value reversed, so untransformed bytes are not JSON.
struct Reverse;

impl ValueTransformer for Reverse {
    fn to_storage(
        &self,
        mut data: Vec<u8>,
        _key: &str,
    ) -> wasm_apiserver_storage::errors::Result<Vec<u8>> {
        data.reverse();
        Ok(data)
    }
    fn from_storage(
        &self,
        data: &[u8],
        _key: &str,
    ) -> wasm_apiserver_storage::errors::Result<(Vec<u8>, bool)> {
        let mut v = data.to_vec();
        v.reverse();
        Ok((v, false))
    }
    fn from_storage_cow<'a>(
        &self,
        data: &'a [u8],
        key: &str,
    ) -> wasm_apiserver_storage::errors::Result<(Cow<'a, [u8]>, bool)> {
        let (v, stale) = self.from_storage(data, key)?;
        Ok((Cow::Owned(v), stale))
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn stored_items_are_the_transformed_bytes() {
    let (s, b, _dir) = store(Some(Arc::new(Reverse))).await;
    let created = fill(&s).await;
    let raw = b.range("/registry/pods/ns/p0", "", 0, 0).await.unwrap();
    assert!(
        serde_json::from_slice::<Value>(&raw.kvs[0].value).is_err(),
        "stored reversed"
    );
    let shared = s.get_list("/pods", &opts("", 0)).await.unwrap();
    for (item, obj) in shared.items.iter().zip(&created) {
        assert_eq!(&written(item), obj);
    }
}

/// Stores every value behind a header and reads it back as a borrowed slice after the header,
/// as an envelope-style transformer (`k8s:enc:…` prefixes) would.
struct Header;

const HEADER: &[u8] = b"hdr:";

impl ValueTransformer for Header {
    fn to_storage(
        &self,
        data: Vec<u8>,
        _key: &str,
    ) -> wasm_apiserver_storage::errors::Result<Vec<u8>> {
        Ok([HEADER, &data].concat())
    }
    fn from_storage(
        &self,
        data: &[u8],
        key: &str,
    ) -> wasm_apiserver_storage::errors::Result<(Vec<u8>, bool)> {
        let (v, stale) = self.from_storage_cow(data, key)?;
        Ok((v.into_owned(), stale))
    }
    fn from_storage_cow<'a>(
        &self,
        data: &'a [u8],
        _key: &str,
    ) -> wasm_apiserver_storage::errors::Result<(Cow<'a, [u8]>, bool)> {
        let body = data
            .strip_prefix(HEADER)
            .ok_or_else(|| wasm_apiserver_storage::StorageError::Internal("no header".into()))?;
        Ok((Cow::Borrowed(body), false))
    }
}

/// A transformer that borrows part of the stored bytes: reads (stored and decoded) and an
/// update's no-op check see exactly that part, not the whole stored value.
#[tokio::test(flavor = "multi_thread")]
async fn a_transformer_borrowing_part_of_the_bytes() {
    let (s, b, _dir) = store(Some(Arc::new(Header))).await;
    let created = fill(&s).await;
    let raw = b.range("/registry/pods/ns/p0", "", 0, 0).await.unwrap();
    assert!(
        raw.kvs[0].value.starts_with(HEADER),
        "stored with the header"
    );

    let got = s
        .get("/pods/ns/p0", &Default::default())
        .await
        .unwrap()
        .unwrap();
    assert!(matches!(got, SharedObject::Stored(_)));
    assert_eq!(written(&got), created[0]);
    let shared = s.get_list("/pods", &opts("", 0)).await.unwrap();
    for (item, obj) in shared.items.iter().zip(&created) {
        assert_eq!(&written(item), obj);
    }

    // An update that changes nothing is not written: the bytes compared are the object's.
    let mut same = |obj: Value, _meta| {
        Box::pin(async move {
            Ok(wasm_apiserver_storage::UpdateOutcome {
                object: obj,
                ttl: None,
            })
        }) as _
    };
    let out = s
        .guaranteed_update(
            "/pods/ns/p0",
            false,
            &Preconditions::default(),
            &mut same,
            None,
        )
        .await
        .unwrap();
    assert_eq!(out, created[0]);
    let after = b.range("/registry/pods/ns/p0", "", 0, 0).await.unwrap();
    assert_eq!(
        after.kvs[0].mod_revision, raw.kvs[0].mod_revision,
        "no write"
    );
}
