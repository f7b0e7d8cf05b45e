//! `value.Transformer` (`k8s.io/apiserver/pkg/storage/value/transformer.go`): what turns an
//! encoded object into stored bytes and back. Encryption at rest plugs in here.

use crate::errors::Result;
use std::borrow::Cow;

/// `value.Transformer` (`k8s.io/apiserver/pkg/storage/value`): turns encoded objects into
/// stored bytes and back, with the key as authenticated data. Encryption at rest plugs in here.
#[allow(clippy::wrong_self_convention)] // named after TransformToStorage/TransformFromStorage
pub trait ValueTransformer: Send + Sync {
    /// Bytes to store for `data` at `key`.
    fn to_storage(&self, data: Vec<u8>, key: &str) -> Result<Vec<u8>>;
    /// The encoded object from stored bytes, and whether they are stale (written under an old
    /// key or format, so an update must rewrite them even if unchanged). Errors: the bytes
    /// cannot be transformed (e.g. decryption failed).
    fn from_storage(&self, data: &[u8], key: &str) -> Result<(Vec<u8>, bool)>;

    /// [`ValueTransformer::from_storage`], borrowing `data` when the stored bytes are the
    /// encoded object (the identity transformer), so reads need not copy every value (`KvStore`
    /// then keeps `data` itself, moved out of the backend's response; a borrowed part of
    /// `data` is copied). The default calls `from_storage`.
    #[allow(clippy::wrong_self_convention)]
    fn from_storage_cow<'a>(&self, data: &'a [u8], key: &str) -> Result<(Cow<'a, [u8]>, bool)> {
        let (data, stale) = self.from_storage(data, key)?;
        Ok((Cow::Owned(data), stale))
    }
}

/// The identity transformer (no encryption).
#[derive(Clone, Copy, Debug, Default)]
pub struct IdentityTransformer;

impl ValueTransformer for IdentityTransformer {
    fn to_storage(&self, data: Vec<u8>, _key: &str) -> Result<Vec<u8>> {
        Ok(data)
    }
    fn from_storage(&self, data: &[u8], _key: &str) -> Result<(Vec<u8>, bool)> {
        Ok((data.to_vec(), false))
    }
    fn from_storage_cow<'a>(&self, data: &'a [u8], _key: &str) -> Result<(Cow<'a, [u8]>, bool)> {
        Ok((Cow::Borrowed(data), false))
    }
}
