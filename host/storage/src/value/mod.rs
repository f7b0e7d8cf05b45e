//! `k8s.io/apiserver/pkg/storage/value`: the transformers that turn encoded objects into stored
//! bytes and back — encryption at rest. The [`ValueTransformer`](crate::store::ValueTransformer)
//! seam is `store/value_transformer.rs`; here are what plugs into it:
//! - `prefix_transformers.rs`: [`PrefixTransformers`] (`value/transformer.go`): the first
//!   transformer writes, each reads what carries its prefix;
//! - `aes.rs`: AES-GCM and AES-CBC (`value/encrypt/aes/aes.go`);
//! - `aes_extended_nonce.rs`: AES-GCM under a key derived per write from a seed
//!   (`value/encrypt/aes/aes_extended_nonce.go`), KMS v2's data encryption;
//! - `kmsv2/`: the `kms` provider, API version v2 (`value/encrypt/envelope/kmsv2`);
//! - `secretbox.rs`: XSalsa20-Poly1305 (`value/encrypt/secretbox/secretbox.go`);
//! - `identity.rs`: [`EncryptCheckTransformer`] (`value/encrypt/identity/identity.go`);
//! - `resource_transformers.rs`: [`ResourceTransformers`], the transformer of each
//!   GroupResource with `*.group` and `*.*` wildcards
//!   (`server/options/encryptionconfig/config.go`, `transformerFromOverrides`);
//! - `metrics.rs`: what each transformation records, for the host's metrics;
//! - `reloadable.rs`: [`ReloadableTransformers`], what a reloaded configuration replaces
//!   under storages already built.

mod aes;
mod aes_extended_nonce;
mod identity;
pub mod kmsv2;
pub mod metrics;
mod prefix_transformers;
mod reloadable;
mod resource_transformers;
mod secretbox;

pub use aes::{AesCbcTransformer, AesGcmTransformer, AES_KEY_LENGTHS};
pub use aes_extended_nonce::HkdfExtendedNonceGcm;
pub use identity::EncryptCheckTransformer;
pub use prefix_transformers::{PrefixTransformer, PrefixTransformers};
pub use reloadable::ReloadableTransformers;
pub use resource_transformers::ResourceTransformers;
pub use secretbox::SecretboxTransformer;

use crate::errors::StorageError;

/// What every transformer answers when the stored bytes are too short for its header.
pub(crate) fn too_short() -> StorageError {
    StorageError::Internal("the stored data was shorter than the required size".into())
}

/// `n` random bytes from the operating system.
pub(crate) fn random_bytes(n: usize) -> crate::errors::Result<Vec<u8>> {
    let mut b = vec![0u8; n];
    getrandom::fill(&mut b)
        .map_err(|_| StorageError::Internal("unable to read sufficient random bytes".into()))?;
    Ok(b)
}
