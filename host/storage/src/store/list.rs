//! `GetList` (`k8s.io/apiserver/pkg/storage/etcd3/store.go`): the resourceVersion rules of a
//! list, paging with pinned revisions and limit doubling while filling a filtered page,
//! continue tokens, and unfiltered items handed out as their stored bytes.

use super::kv_store::{matches, KvStore};
use super::versioner::parse_resource_version;
use crate::backend::{prefix_end, Backend, KeyValue};
use crate::continue_token;
use crate::errors::{BackendError, Result, StorageError, CONTINUE_TOO_OLD, LIST_TOO_OLD};
use crate::interfaces::{ListOptions, ResourceVersionMatch, SharedListResult};
use crate::selection::SelectionPredicate;
use crate::stored::SharedObject;
use std::sync::Arc;

/// etcd3's `maxLimit`: the largest page fetched while filling a filtered page.
const MAX_LIMIT: i64 = 10_000;

impl<B: Backend> KvStore<B> {
    /// The list item of `kv` if it matches `pred`. With nothing to evaluate (no label or field
    /// selector) the item is the stored bytes, moved out of `kv` undecoded; otherwise the
    /// object is decoded to evaluate the predicate and kept decoded.
    pub(super) fn list_item(
        &self,
        kv: KeyValue,
        pred: &SelectionPredicate,
    ) -> Result<Option<SharedObject>> {
        // etcd3 store.go `GetList`: an object the transformer cannot read fails the whole
        // list, naming its key.
        if !pred.is_empty() {
            let obj = self
                .decode(&kv, kv.mod_revision)
                .map_err(|e| Self::naming_key(&kv.key, e))?;
            return Ok(matches(pred, &obj)?.then(|| SharedObject::Decoded(Arc::new(obj))));
        }
        let rev = kv.mod_revision;
        self.stored_named(kv, rev, true).map(Some)
    }

    /// `GetList` (etcd3 store.go): the items of an unfiltered list undecoded (see
    /// [`KvStore::list_item`]).
    pub(super) async fn list(&self, key: &str, opts: &ListOptions) -> Result<SharedListResult> {
        let recursive = opts.recursive;
        let prefix = self.prepare_key(key, recursive)?;
        let pred = &opts.predicate;
        let rv = parse_resource_version(&opts.resource_version)? as i64;
        let paging = pred.limit > 0;

        // storage.ValidateListOptions: the read revision and the start key.
        let mut start_key = prefix.clone();
        let mut with_rev: i64 = 0;
        let mut continuing = false;
        if !pred.continue_token.is_empty() {
            if !recursive {
                return Err(StorageError::Invalid {
                    field: "continue".into(),
                    value: pred.continue_token.clone(),
                    detail: "continue key is not supported for non-recursive lists".into(),
                });
            }
            if !(opts.resource_version.is_empty() || opts.resource_version == "0") {
                return Err(StorageError::Invalid {
                    field: "resourceVersion".into(),
                    value: opts.resource_version.clone(),
                    detail: "specifying resource version is not allowed when using continue".into(),
                });
            }
            if opts.resource_version_match != ResourceVersionMatch::Unset {
                return Err(StorageError::Invalid {
                    field: "resourceVersionMatch".into(),
                    value: format!("{:?}", opts.resource_version_match),
                    detail: "resourceVersionMatch is forbidden when continue is provided".into(),
                });
            }
            let (k, crv) = continue_token::decode(&pred.continue_token, &prefix)?;
            start_key = k;
            continuing = true;
            if crv > 0 {
                with_rev = crv;
            }
        } else {
            match opts.resource_version_match {
                ResourceVersionMatch::Exact => {
                    if rv == 0 {
                        return Err(StorageError::Invalid {
                            field: "resourceVersionMatch".into(),
                            value: "Exact".into(),
                            detail: "resourceVersionMatch \"Exact\" is forbidden for resourceVersion \"\" and \"0\"".into(),
                        });
                    }
                    with_rev = rv;
                }
                ResourceVersionMatch::NotOlderThan => {}
                ResourceVersionMatch::Unset => {
                    if paging && rv > 0 {
                        with_rev = rv;
                    }
                }
            }
        }
        let end = if recursive {
            prefix_end(&prefix)
        } else {
            String::new()
        };

        let mut items = Vec::new();
        let mut limit = if paging { pred.limit } else { 0 };
        let mut last_key: Option<String> = None;
        let mut has_more;
        let mut count_at_first_page = 0;
        let mut first = true;
        loop {
            let resp = match self.backend.range(&start_key, &end, limit, with_rev).await {
                Ok(r) => r,
                Err(BackendError::Compacted(_)) if continuing => {
                    return Err(StorageError::Expired {
                        message: CONTINUE_TOO_OLD.into(),
                        continue_token: Some(continue_token::encode(&start_key, &prefix, -1)?),
                    })
                }
                Err(BackendError::Compacted(_)) => {
                    return Err(StorageError::Expired {
                        message: LIST_TOO_OLD.into(),
                        continue_token: None,
                    })
                }
                Err(BackendError::FutureRevision(cur)) => {
                    return Err(StorageError::TooLargeResourceVersion {
                        requested: with_rev as u64,
                        current: cur as u64,
                    })
                }
                Err(e) => return Err(e.into()),
            };
            if first {
                count_at_first_page = resp.count;
                first = false;
            }
            has_more = resp.more;
            let header_revision = resp.header_revision;
            if !paging {
                // One unpaged range: take it whole.
                if let Some(kv) = resp.kvs.last() {
                    last_key = Some(kv.key.clone());
                }
                items.reserve(resp.kvs.len());
                for kv in resp.kvs {
                    items.extend(self.list_item(kv, pred)?);
                }
                if with_rev == 0 {
                    with_rev = header_revision;
                }
                break;
            }
            for kv in resp.kvs {
                if items.len() as i64 >= pred.limit {
                    has_more = true;
                    break;
                }
                last_key = Some(kv.key.clone());
                items.extend(self.list_item(kv, pred)?);
            }
            if with_rev == 0 {
                with_rev = header_revision;
            }
            if !has_more || !paging {
                break;
            }
            if items.len() as i64 >= pred.limit {
                break;
            }
            if limit < MAX_LIMIT {
                limit = (limit * 2).min(MAX_LIMIT);
            }
            match &last_key {
                Some(k) => start_key = format!("{k}\0"),
                None => break,
            }
        }

        // validateMinimumResourceVersion for the "not older than" readings.
        let exact = opts.resource_version_match == ResourceVersionMatch::Exact
            || (opts.resource_version_match == ResourceVersionMatch::Unset && paging && rv > 0);
        if !continuing && !exact && rv > with_rev {
            return Err(StorageError::TooLargeResourceVersion {
                requested: rv as u64,
                current: with_rev as u64,
            });
        }
        let (continue_token, remaining_item_count) = match (has_more, &last_key) {
            (true, Some(k)) => {
                let token = continue_token::encode(&format!("{k}\0"), &prefix, with_rev)?;
                let remaining = if pred.is_empty() {
                    Some(count_at_first_page - pred.limit)
                } else {
                    None
                };
                (Some(token), remaining)
            }
            _ => (None, None),
        };
        Ok(SharedListResult {
            items,
            resource_version: with_rev as u64,
            continue_token,
            remaining_item_count,
        })
    }
}
