//! Storage errors, mirroring `k8s.io/apiserver/pkg/storage/errors.go` (`StorageError` codes,
//! `InvalidError`, `TooLargeResourceVersionError`) plus the 410 answers etcd3 derives from
//! `ErrCompacted` (`pkg/storage/etcd3/errors.go`). The HTTP layer maps each to a
//! `metav1.Status` (`pkg/storage/errors/storage.go` `Interpret*Error`).

use std::sync::Arc;

/// Message of a 410 for a list at a compacted revision (etcd3 `errors.go`).
pub const LIST_TOO_OLD: &str = "The resourceVersion for the provided list is too old.";
/// Message of a 410 for a watch at a compacted revision.
pub const WATCH_TOO_OLD: &str = "The resourceVersion for the provided watch is too old.";
/// Message of a 410 for a continue token whose revision was compacted
/// (`RunTestListInconsistentContinuation`).
pub const CONTINUE_TOO_OLD: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

/// An error of the storage layer.
#[derive(Clone, Debug, thiserror::Error)]
pub enum StorageError {
    /// `ErrCodeKeyNotFound`: 404.
    #[error("key not found: {key}")]
    KeyNotFound {
        /// The storage key.
        key: String,
    },
    /// `ErrCodeKeyExists`: 409 AlreadyExists.
    #[error("key exists: {key}")]
    KeyExists {
        /// The storage key.
        key: String,
    },
    /// `ErrCodeResourceVersionConflicts`: 409 Conflict.
    #[error("resource version conflicts: {key}")]
    ResourceVersionConflicts {
        /// The storage key.
        key: String,
    },
    /// `ErrCodeInvalidObj`: a failed precondition (409 Conflict through
    /// `InterpretDeleteError`/`InterpretUpdateError`).
    #[error("{message}")]
    InvalidObj {
        /// The storage key.
        key: String,
        /// e.g. `Precondition failed: UID in precondition: a, UID in object meta: b`.
        message: String,
    },
    /// `storage.InvalidError`: bad input such as a resourceVersion that is not a number, a bad
    /// continue token, or an invalid resourceVersionMatch (400/422 at the HTTP edge).
    #[error("{field}: Invalid value: {value:?}: {detail}")]
    Invalid {
        /// The field, e.g. `resourceVersion`, `continue`, `resourceVersionMatch`.
        field: String,
        /// The offending value.
        value: String,
        /// What is wrong.
        detail: String,
    },
    /// A bad key (`RunTestKeySchema`): empty, `.`/`..` segments, or outside the resource prefix.
    #[error("invalid key: {key:?}: {detail}")]
    InvalidKey {
        /// The key.
        key: String,
        /// What is wrong.
        detail: String,
    },
    /// `NewTooLargeResourceVersionError`: 504 Timeout with a `ResourceVersionTooLarge` cause and
    /// Retry-After 1.
    #[error("Too large resource version: {requested}, current: {current}")]
    TooLargeResourceVersion {
        /// The requested revision.
        requested: u64,
        /// The current revision.
        current: u64,
    },
    /// The revision was compacted: 410 Expired. `continue_token` is set for an expired
    /// continue: a fresh token (rv = -1) resuming at the same key.
    #[error("{message}")]
    Expired {
        /// The Status message.
        message: String,
        /// A fresh continue token, for expired continues.
        continue_token: Option<String>,
    },
    /// `ErrCodeUnreachable`: the backend cannot be reached (500 ServerTimeout at the edge).
    #[error("storage unreachable: {0}")]
    Unreachable(String),
    /// `ErrCodeTimeout`.
    #[error("storage timeout: {0}")]
    Timeout(String),
    /// `ErrCodeCorruptObj`: stored bytes that cannot be decoded.
    #[error("corrupt object at {key}: {detail}")]
    CorruptObj {
        /// The storage key.
        key: String,
        /// The decode error.
        detail: String,
    },
    /// The backend refused the write as larger than it accepts (etcd's
    /// `ErrGRPCRequestTooLarge`, `etcdserver: request is too large`, past
    /// `--max-request-bytes`): 413 to the client.
    #[error("{0}")]
    RequestTooLarge(String),
    /// Anything else inside the storage layer (500).
    #[error("{0}")]
    Internal(String),
    /// An error raised by a caller's callback (`try_update`, `validate_deletion`), passed
    /// through unchanged so the caller can recover it with [`StorageError::aborted_as`].
    #[error("{0}")]
    Aborted(Arc<dyn std::error::Error + Send + Sync>),
}

impl StorageError {
    /// Wrap a caller's error (see [`StorageError::Aborted`]).
    pub fn aborted<E: std::error::Error + Send + Sync + 'static>(e: E) -> StorageError {
        StorageError::Aborted(Arc::new(e))
    }

    /// The caller's error inside [`StorageError::Aborted`], if it is an `E`.
    pub fn aborted_as<E: std::error::Error + 'static>(&self) -> Option<&E> {
        match self {
            StorageError::Aborted(e) => e.downcast_ref::<E>(),
            _ => None,
        }
    }

    /// `storage.IsNotFound`.
    pub fn is_not_found(&self) -> bool {
        matches!(self, StorageError::KeyNotFound { .. })
    }

    /// `storage.IsConflict`.
    pub fn is_conflict(&self) -> bool {
        matches!(self, StorageError::ResourceVersionConflicts { .. })
    }

    /// `storage.IsInvalidObj` (failed precondition).
    pub fn is_invalid_obj(&self) -> bool {
        matches!(self, StorageError::InvalidObj { .. })
    }

    /// Whether this is a 410 Expired.
    pub fn is_expired(&self) -> bool {
        matches!(self, StorageError::Expired { .. })
    }

    /// An `Invalid` for a resourceVersion that is not a number (`ParseResourceVersion`).
    pub fn invalid_resource_version(value: &str) -> StorageError {
        StorageError::Invalid {
            field: "resourceVersion".into(),
            value: value.into(),
            detail: "invalid resource version".into(),
        }
    }
}

/// Result of a storage operation.
pub type Result<T, E = StorageError> = std::result::Result<T, E>;

/// An error of a [`crate::backend::Backend`] (the etcd-like key-value layer).
#[derive(Clone, Debug, thiserror::Error)]
pub enum BackendError {
    /// The requested revision was compacted (`ErrCompacted`); carries the compacted revision.
    #[error("mvcc: required revision has been compacted (compacted at {0})")]
    Compacted(i64),
    /// The requested revision is in the future (`ErrFutureRev`); carries the current one.
    #[error("mvcc: required revision is a future revision (current {0})")]
    FutureRevision(i64),
    /// The backend cannot be reached.
    #[error("unreachable: {0}")]
    Unreachable(String),
    /// Timed out.
    #[error("timeout: {0}")]
    Timeout(String),
    /// The write is larger than the backend accepts.
    #[error("{0}")]
    RequestTooLarge(String),
    /// Anything else (disk full, locked database, …).
    #[error("{0}")]
    Other(String),
}

impl From<BackendError> for StorageError {
    fn from(e: BackendError) -> Self {
        match e {
            BackendError::Compacted(_) => StorageError::Expired {
                message: LIST_TOO_OLD.into(),
                continue_token: None,
            },
            BackendError::FutureRevision(cur) => StorageError::TooLargeResourceVersion {
                requested: 0,
                current: cur.max(0) as u64,
            },
            BackendError::Unreachable(m) => StorageError::Unreachable(m),
            BackendError::Timeout(m) => StorageError::Timeout(m),
            BackendError::RequestTooLarge(m) => StorageError::RequestTooLarge(m),
            BackendError::Other(m) => StorageError::Internal(m),
        }
    }
}
