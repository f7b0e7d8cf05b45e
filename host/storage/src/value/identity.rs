//! `identity.NewEncryptCheckTransformer` (`k8s.io/apiserver/pkg/storage/value/encrypt/identity/identity.go`).

use crate::errors::{Result, StorageError};
use crate::store::ValueTransformer;
use std::borrow::Cow;

/// The prefix every encrypting provider's output starts with.
pub const ENCRYPTED_PREFIX: &[u8] = b"k8s:enc:";

/// The `identity` provider: writes plaintext, and refuses to hand out bytes that carry the
/// encrypted prefix (`identity transformer tried to read encrypted data`), so that a
/// configuration listing `identity` first can still fall through to the provider that
/// encrypted them.
#[derive(Clone, Copy, Debug, Default)]
pub struct EncryptCheckTransformer;

impl ValueTransformer for EncryptCheckTransformer {
    fn to_storage(&self, data: Vec<u8>, _key: &str) -> Result<Vec<u8>> {
        Ok(data)
    }

    fn from_storage(&self, data: &[u8], key: &str) -> Result<(Vec<u8>, bool)> {
        self.from_storage_cow(data, key)
            .map(|(d, stale)| (d.into_owned(), stale))
    }

    fn from_storage_cow<'a>(&self, data: &'a [u8], _key: &str) -> Result<(Cow<'a, [u8]>, bool)> {
        if data.starts_with(ENCRYPTED_PREFIX) {
            return Err(StorageError::Internal(
                "identity transformer tried to read encrypted data".into(),
            ));
        }
        Ok((Cow::Borrowed(data), false))
    }
}
