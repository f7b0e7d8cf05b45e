//! The watch cache proper (`k8s.io/apiserver/pkg/storage/cacher/watch_cache.go`): the current
//! objects of one resource by key, optional field indexes, the cache's resourceVersion, and a
//! bounded ring buffer of recent events (`watch_cache_history.go`) from which watches resume.
//!
//! Everything here is synchronous and runs under the cacher's lock; nothing awaits. The work
//! per object — decoding, `GetAttrs`, index values — is done before the lock is taken
//! ([`prepare_entry`], [`prepare_event`]).
//!
//! Objects are kept as the storage handed them out: a [`SharedObject::Stored`] is the stored
//! JSON bytes (about 1× the object's size), where a decoded `serde_json::Value` takes ~3× (a
//! 1.27 KB ConfigMap: 3.7 KB), so the cache decodes an object only to compute its key and
//! attributes and then drops the decoded form. Readers get the bytes shared; JSON responses
//! are written from them ([`SharedObject::write_json`]), other encodings decode them.

use super::cacher::CacherConfig;
use crate::continue_token;
use crate::errors::{Result, StorageError};
use crate::interfaces::{ListResult, WatchEvent};
use crate::selection::{Attrs, SelectionPredicate};
use crate::stored::SharedObject;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::Arc;

/// One cached object: the object as the storage handed it out (its stored bytes, or a decoded
/// object, either with its resourceVersion), its attributes as the resource's `GetAttrs`
/// computes them (`None` when `GetAttrs` failed; matching then falls back to the predicate's
/// own function on the decoded object), and its value for each of the cacher's indexes
/// ([`CacherConfig::indexes`], in order).
#[derive(Clone, Debug)]
pub(crate) struct Entry {
    pub obj: SharedObject,
    pub attrs: Option<Arc<Attrs>>,
    pub index_values: Box<[String]>,
}

/// A backend watch event made ready for the cache outside its lock ([`prepare_event`]).
pub(crate) enum Prepared {
    /// A create, update or delete of `key` at `rv`.
    Change {
        kind: EventKind,
        key: String,
        entry: Entry,
        rv: u64,
    },
    /// An event whose object has no usable key: it only advances the cache to `rv`.
    Keyless(u64),
    /// A bookmark (progress notification) at this resourceVersion.
    Bookmark(u64),
    /// The backend watch failed.
    Error(StorageError),
}

/// Whether a [`CacheEvent`] wrote or removed its key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EventKind {
    /// A create or update: `obj` is the new state.
    Put,
    /// A delete: `obj` is the last state with the delete revision as its resourceVersion.
    Delete,
}

/// `watchCacheEvent`: one change with the previous state, so each watcher can map it through
/// its own predicate (`cache_watcher.go` `convertToWatchEvent`).
#[derive(Debug)]
pub(crate) struct CacheEvent {
    pub kind: EventKind,
    pub key: String,
    pub obj: SharedObject,
    pub attrs: Option<Arc<Attrs>>,
    pub prev: Option<Entry>,
    pub rv: u64,
}

/// A key range a read or watch covers: one key, or every key below `key` (which then ends with
/// `/`, as etcd3's `prepareKey` makes it, so `foo` never matches `foobar`).
#[derive(Clone, Debug)]
pub(crate) struct Scope {
    pub key: String,
    pub recursive: bool,
}

impl Scope {
    pub fn contains(&self, key: &str) -> bool {
        if self.recursive {
            key.starts_with(&self.key)
        } else {
            key == self.key
        }
    }
}

/// The state behind the cacher's lock.
pub(crate) struct CacheState {
    /// Whether the cache holds a complete list plus every event since (false while listing
    /// or after the backend watch failed).
    pub ready: bool,
    /// Bumped whenever the cache is invalidated (re-list, shutdown): cache watchers of an older
    /// generation end their stream.
    pub generation: u64,
    /// The resourceVersion the cache has caught up to.
    pub rv: u64,
    /// The current objects by storage key (without the path prefix).
    pub objects: BTreeMap<String, Entry>,
    /// Field path → value → keys, for the configured indexes.
    pub index: HashMap<String, HashMap<String, BTreeSet<String>>>,
    /// Recent events in resourceVersion order.
    pub history: VecDeque<Arc<CacheEvent>>,
    /// Every event with a resourceVersion above this one is in `history` (the list's
    /// resourceVersion after a (re)list, then the resourceVersion of the last evicted event).
    pub floor: u64,
}

/// The resourceVersion of an object (`0` when missing or not a number).
pub(crate) fn rv_of(obj: &Value) -> u64 {
    wasm_apiserver_apimachinery::meta::accessor(obj)
        .resource_version()
        .parse()
        .unwrap_or(0)
}

/// `SelectionPredicate.Matches` on cached attributes when they cover every field the selector
/// uses (what kube's cacher does with `ObjLabels`/`ObjFields`), else with the predicate's own
/// `GetAttrs`. Errors: `GetAttrs` failed (500).
pub(crate) fn matches(
    pred: &SelectionPredicate,
    obj: &SharedObject,
    attrs: Option<&Attrs>,
) -> Result<bool> {
    if pred.is_empty() {
        return Ok(true);
    }
    if let Some(a) = attrs.filter(|_| !pred.converted) {
        if pred
            .field
            .requirements
            .iter()
            .all(|r| a.fields.contains_key(&r.field))
        {
            return Ok(pred.label.matches(&a.labels) && pred.field.matches(&a.fields));
        }
    }
    let obj = obj.to_arc()?;
    pred.matches(&obj)
        .map_err(|e| StorageError::Internal(format!("unable to compute object attributes: {e}")))
}

/// The cache entry of `keep` (an object as the storage handed it out) and its key; `decoded`
/// is the decoded object when `keep` is stored bytes. `None`: the object has no usable key
/// (logged).
pub(crate) fn prepare_entry(
    config: &CacherConfig,
    keep: SharedObject,
    decoded: Option<Value>,
) -> Option<(String, Entry)> {
    let value: Arc<Value> = match (&keep, decoded) {
        (_, Some(v)) => Arc::new(v),
        (SharedObject::Decoded(v), None) => v.clone(),
        // A stored object comes with its decoded form (`prepare_event`, `prepare_list`).
        (SharedObject::Stored(s), None) => Arc::new(s.decode().ok()?),
    };
    let key = match (config.key_func)(&value) {
        Ok(k) => k,
        Err(e) => {
            tracing::warn!(error = %e, "watch cache: object has no key; skipped");
            return None;
        }
    };
    let attrs = match (config.get_attrs)(&value) {
        Ok(a) => Some(Arc::new(a)),
        Err(e) => {
            tracing::warn!(error = %e, "watch cache: GetAttrs failed; selectors will recompute");
            None
        }
    };
    let index_values = config
        .indexes
        .iter()
        .map(|field| index_value(field, &value, attrs.as_deref()))
        .collect();
    Some((
        key,
        Entry {
            obj: keep,
            attrs,
            index_values,
        },
    ))
}

/// Decode and key a backend watch event outside the cache's lock. Errors: a stored object that
/// does not decode (`CorruptObj`; the caller restarts the watch).
pub(crate) fn prepare_event(config: &CacherConfig, ev: WatchEvent) -> Result<Prepared> {
    let (kind, obj) = match ev {
        WatchEvent::Added(o) | WatchEvent::Modified(o) => (EventKind::Put, o),
        WatchEvent::Deleted(o) => (EventKind::Delete, o),
        WatchEvent::Bookmark(o) => return Ok(Prepared::Bookmark(rv_of(&o))),
        WatchEvent::Error(e) => return Ok(Prepared::Error(e)),
    };
    let decoded = match &obj {
        SharedObject::Stored(s) => Some(s.decode()?),
        SharedObject::Decoded(_) => None,
    };
    let rv = match &obj {
        SharedObject::Stored(s) => s.resource_version,
        SharedObject::Decoded(v) => rv_of(v),
    };
    Ok(match prepare_entry(config, obj, decoded) {
        Some((key, entry)) => Prepared::Change {
            kind,
            key,
            entry,
            rv,
        },
        None => Prepared::Keyless(rv),
    })
}

/// [`prepare_entry`] for every listed object. Errors: a stored object that does not decode.
pub(crate) fn prepare_list(
    config: &CacherConfig,
    items: Vec<SharedObject>,
) -> Result<Vec<(String, Entry)>> {
    let mut out = Vec::with_capacity(items.len());
    for obj in items {
        let decoded = match &obj {
            SharedObject::Stored(s) => Some(s.decode()?),
            SharedObject::Decoded(_) => None,
        };
        out.extend(prepare_entry(config, obj, decoded));
    }
    Ok(out)
}

/// The value an index keeps for `field` of an object: its attribute when `GetAttrs` reports it,
/// else the value at that dotted JSON path (`""` when absent, as field selectors read it).
fn index_value(field: &str, obj: &Value, attrs: Option<&Attrs>) -> String {
    if let Some(v) = attrs.and_then(|a| a.fields.get(field)) {
        return v.clone();
    }
    match obj.pointer(&format!("/{}", field.replace('.', "/"))) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

impl CacheState {
    pub fn new() -> CacheState {
        CacheState {
            ready: false,
            generation: 0,
            rv: 0,
            objects: BTreeMap::new(),
            index: HashMap::new(),
            history: VecDeque::new(),
            floor: 0,
        }
    }

    fn index_add(&mut self, config: &CacherConfig, key: &str, e: &Entry) {
        for (field, v) in config.indexes.iter().zip(e.index_values.iter()) {
            self.index
                .entry(field.clone())
                .or_default()
                .entry(v.clone())
                .or_default()
                .insert(key.to_string());
        }
    }

    fn index_remove(&mut self, config: &CacherConfig, key: &str, e: &Entry) {
        for (field, v) in config.indexes.iter().zip(e.index_values.iter()) {
            if let Some(values) = self.index.get_mut(field) {
                if let Some(keys) = values.get_mut(v) {
                    keys.remove(key);
                    if keys.is_empty() {
                        values.remove(v);
                    }
                }
            }
        }
    }

    /// `watchCache.Replace`: install a fresh list at `rv`; the history restarts empty, so
    /// watches can resume from `rv` on.
    pub fn replace(&mut self, config: &CacherConfig, items: Vec<(String, Entry)>, rv: u64) {
        self.objects.clear();
        self.index.clear();
        self.history.clear();
        for (key, e) in items {
            self.index_add(config, &key, &e);
            self.objects.insert(key, e);
        }
        self.rv = rv;
        self.floor = rv;
        self.ready = true;
    }

    /// Apply one event of the backend watch (`watchCache.processEvent`). Returns whether the
    /// cache changed (an event was recorded or the resourceVersion advanced). Events at or
    /// below the cache's resourceVersion are ignored (never applied twice). Errors: the
    /// watch reported an error (the caller restarts the watch).
    pub fn apply(&mut self, config: &CacherConfig, ev: Prepared) -> Result<bool> {
        let (kind, key, e, rv) = match ev {
            Prepared::Change {
                kind,
                key,
                entry,
                rv,
            } => (kind, key, entry, rv),
            Prepared::Bookmark(rv) | Prepared::Keyless(rv) => {
                if rv > self.rv {
                    self.rv = rv;
                    return Ok(true);
                }
                return Ok(false);
            }
            Prepared::Error(e) => return Err(e),
        };
        if rv <= self.rv {
            return Ok(false);
        }
        self.rv = rv;
        let event = match kind {
            EventKind::Put => {
                let prev = self.objects.insert(key.clone(), e.clone());
                if let Some(p) = &prev {
                    self.index_remove(config, &key, p);
                }
                self.index_add(config, &key, &e);
                CacheEvent {
                    kind,
                    key,
                    obj: e.obj,
                    attrs: e.attrs,
                    prev,
                    rv,
                }
            }
            EventKind::Delete => {
                let prev = self.objects.remove(&key);
                if let Some(p) = &prev {
                    self.index_remove(config, &key, p);
                }
                // The deleted object is the last state: its attributes are the previous ones.
                let attrs = match prev.as_ref().and_then(|p| p.attrs.clone()) {
                    Some(a) => Some(a),
                    None => e.attrs,
                };
                CacheEvent {
                    kind,
                    key,
                    obj: e.obj,
                    attrs,
                    prev,
                    rv,
                }
            }
        };
        self.history.push_back(Arc::new(event));
        while self.history.len() > config.capacity.max(1) {
            if let Some(old) = self.history.pop_front() {
                self.floor = old.rv;
            }
        }
        Ok(true)
    }

    /// Drop history up to `rv` (a compaction of the watch cache): watches from an older
    /// resourceVersion get 410 Expired.
    pub fn compact(&mut self, rv: u64) {
        while self.history.front().is_some_and(|e| e.rv <= rv) {
            self.history.pop_front();
        }
        self.floor = self.floor.max(rv.min(self.rv));
    }

    /// The index of the first history event with a resourceVersion above `rv`.
    pub fn history_after(&self, rv: u64) -> usize {
        self.history.partition_point(|e| e.rv <= rv)
    }

    /// Candidate keys of a read in key order: through an index when the field selector pins an
    /// indexed field with `=` (`requires_exact_match`), else every key of the scope.
    fn candidates<'a>(
        &'a self,
        config: &CacherConfig,
        scope: &'a Scope,
        pred: &SelectionPredicate,
    ) -> Box<dyn Iterator<Item = (&'a String, &'a Entry)> + 'a> {
        for field in &config.indexes {
            if let Some(v) = pred.field.requires_exact_match(field) {
                let keys = self.index.get(field).and_then(|m| m.get(v));
                return match keys {
                    None => Box::new(std::iter::empty()),
                    Some(keys) => Box::new(
                        keys.iter()
                            .filter(|k| scope.contains(k))
                            .filter_map(|k| self.objects.get_key_value(k)),
                    ),
                };
            }
        }
        if scope.recursive {
            Box::new(
                self.objects
                    .range::<String, _>(scope.key.clone()..)
                    .take_while(|(k, _)| k.starts_with(&scope.key)),
            )
        } else {
            Box::new(self.objects.get_key_value(&scope.key).into_iter())
        }
    }

    /// Whether a read used an index.
    pub fn uses_index(config: &CacherConfig, pred: &SelectionPredicate) -> bool {
        config
            .indexes
            .iter()
            .any(|f| pred.field.requires_exact_match(f).is_some())
    }

    /// `cacher.GetList` from memory: the matching objects of `scope` in key order, at most
    /// `limit` of them (0 = all) with a continue token (`PrepareContinueToken`, the etcd3
    /// format pinned at the cache's resourceVersion) and, for unfiltered lists, the number of
    /// remaining items. Errors: `GetAttrs` failed.
    /// The matching objects are returned shared (`Arc`), with an empty `items`: the caller
    /// copies them after releasing the cache lock, so a large list never holds the lock (or an
    /// async worker) for the time of the copy.
    pub fn list(
        &self,
        config: &CacherConfig,
        scope: &Scope,
        pred: &SelectionPredicate,
        limit: i64,
    ) -> Result<(ListResult, Vec<SharedObject>)> {
        let candidates = self
            .candidates(config, scope, pred)
            .map(|(k, e)| (k, &e.obj, e.attrs.as_deref()));
        select(candidates, scope, pred, limit, self.rv)
    }

    /// The candidates of `scope` for `pred`, with their keys, shared: what a list or a watch's
    /// snapshot whose predicate calls out ([`matches_unlocked`]) matches after the cache's
    /// lock is released ([`list_candidates`], [`snapshot_candidates`]).
    pub fn candidates_shared(
        &self,
        config: &CacherConfig,
        scope: &Scope,
        pred: &SelectionPredicate,
    ) -> Vec<(String, SharedObject)> {
        self.candidates(config, scope, pred)
            .map(|(k, e)| (k.clone(), e.obj.clone()))
            .collect()
    }

    /// The objects of `scope` matching `pred` in key order (the initial events of a watch).
    pub fn snapshot(
        &self,
        config: &CacherConfig,
        scope: &Scope,
        pred: &SelectionPredicate,
    ) -> Result<Vec<SharedObject>> {
        let mut out = Vec::new();
        for (_, e) in self.candidates(config, scope, pred) {
            if matches(pred, &e.obj, e.attrs.as_deref())? {
                out.push(e.obj.clone());
            }
        }
        Ok(out)
    }
}

/// Whether matching `pred` may call out of the cache — its `GetAttrs` reads objects converted
/// to another version, which may call a plugin or a CRD's conversion webhook — so the match is
/// made after the cache's lock is released, off the async workers: a slow conversion then
/// delays its own request, not the writes and reads of the resource.
pub fn matches_unlocked(pred: &SelectionPredicate) -> bool {
    pred.converted && !pred.is_empty()
}

/// [`CacheState::list`] of candidates taken under the lock at resourceVersion `rv`
/// ([`CacheState::candidates_shared`]), matched now. Blocking when the match converts.
pub fn list_candidates(
    candidates: &[(String, SharedObject)],
    scope: &Scope,
    pred: &SelectionPredicate,
    limit: i64,
    rv: u64,
) -> Result<(ListResult, Vec<SharedObject>)> {
    let candidates = candidates.iter().map(|(k, o)| (k, o, None));
    select(candidates, scope, pred, limit, rv)
}

/// [`CacheState::snapshot`] of candidates taken under the lock, matched now. Blocking when
/// the match converts.
pub fn snapshot_candidates(
    candidates: Vec<(String, SharedObject)>,
    pred: &SelectionPredicate,
) -> Result<Vec<SharedObject>> {
    let mut out = Vec::new();
    for (_, o) in candidates {
        if matches(pred, &o, None)? {
            out.push(o);
        }
    }
    Ok(out)
}

/// The matching objects of `candidates` (in key order), at most `limit` (0 = all), with the
/// continue token pinned at `rv` and, for unfiltered lists, the number of remaining items.
fn select<'a>(
    candidates: impl Iterator<Item = (&'a String, &'a SharedObject, Option<&'a Attrs>)>,
    scope: &Scope,
    pred: &SelectionPredicate,
    limit: i64,
    rv: u64,
) -> Result<(ListResult, Vec<SharedObject>)> {
    let mut items: Vec<SharedObject> = Vec::new();
    let mut last_key: Option<&String> = None;
    let mut has_more = false;
    let mut remaining: i64 = 0;
    let mut iter = candidates;
    for (k, obj, attrs) in iter.by_ref() {
        if matches(pred, obj, attrs)? {
            items.push(obj.clone());
            last_key = Some(k);
        }
        if limit > 0 && items.len() as i64 >= limit {
            break;
        }
    }
    if limit > 0 && items.len() as i64 >= limit {
        remaining = iter.count() as i64;
        has_more = remaining > 0;
    }
    let (continue_token, remaining_item_count) = match (has_more, last_key) {
        (true, Some(k)) => {
            let token = continue_token::encode(&format!("{k}\0"), &scope.key, rv as i64)?;
            (Some(token), pred.is_empty().then_some(remaining))
        }
        _ => (None, None),
    };
    Ok((
        ListResult {
            items: Vec::new(),
            resource_version: rv,
            continue_token,
            remaining_item_count,
        },
        items,
    ))
}
