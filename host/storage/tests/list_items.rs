//! `KvStore`'s list items: an unfiltered `get_list_shared` hands out the stored bytes
//! undecoded (`ListItem::Stored`), a filtered one the objects it decoded to evaluate the
//! selector; `get_list` and `ListItem::write_json` both turn them into the same objects, with
//! the resourceVersion of each key; corrupt stored bytes are an error when the item is used,
//! and a value transformer runs before the bytes are handed out. (The conformance suite runs
//! every `get_list` case through the same path.)

use serde_json::{json, Value};
use std::borrow::Cow;
use std::sync::Arc;
use wasm_apiserver_storage::backend::Backend;
use wasm_apiserver_storage::embedded::{Embedded, EmbeddedOptions};
use wasm_apiserver_storage::store::{KvStore, StoreConfig, ValueTransformer};
use wasm_apiserver_storage::{
    LabelSelector, ListItem, ListOptions, SelectionPredicate, Storage, StorageError,
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

fn written(item: &ListItem) -> Value {
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
        let shared = s.get_list_shared("/pods", &opts("", limit)).await.unwrap();
        let owned = s.get_list("/pods", &opts("", limit)).await.unwrap();
        let n = if limit == 0 { 6 } else { 4 };
        assert_eq!(shared.items.len(), n);
        assert_eq!(owned.items, created[..n].to_vec());
        assert_eq!(shared.continue_token.is_some(), limit > 0);
        assert_eq!(shared.remaining_item_count, (limit > 0).then_some(2));
        for (item, obj) in shared.items.iter().zip(&created) {
            assert!(matches!(item, ListItem::Stored(_)), "{item:?}");
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
    let shared = s
        .get_list_shared("/pods", &opts("app=web", 0))
        .await
        .unwrap();
    assert_eq!(shared.items.len(), 3);
    for (item, obj) in shared.items.iter().zip(&web) {
        assert!(matches!(item, ListItem::Decoded(_)), "{item:?}");
        assert_eq!(&written(item), obj);
    }
    let owned = s.get_list("/pods", &opts("app=web", 2)).await.unwrap();
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
    let err = s.get_list("/pods", &opts("", 0)).await.unwrap_err();
    assert!(
        matches!(&err, StorageError::CorruptObj { key, .. } if key == "/registry/pods/ns/p9"),
        "{err:?}"
    );
    let shared = s.get_list_shared("/pods", &opts("", 0)).await.unwrap();
    let bad = shared.items.last().unwrap();
    let mut out = b"[".to_vec();
    assert!(matches!(
        bad.write_json(&mut out),
        Err(StorageError::CorruptObj { .. })
    ));
    assert_eq!(out, b"[", "nothing of the corrupt object is written");
    // A selector decodes every object, so the filtered list fails at once.
    let err = s
        .get_list_shared("/pods", &opts("app=web", 0))
        .await
        .unwrap_err();
    assert!(matches!(err, StorageError::CorruptObj { .. }), "{err:?}");
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
    let shared = s.get_list_shared("/pods", &opts("", 0)).await.unwrap();
    for (item, obj) in shared.items.iter().zip(&created) {
        assert_eq!(&written(item), obj);
    }
}
