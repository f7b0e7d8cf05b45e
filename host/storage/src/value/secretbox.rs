//! `secretbox` (`k8s.io/apiserver/pkg/storage/value/encrypt/secretbox/secretbox.go`):
//! XSalsa20-Poly1305 with a 32-byte key; stored bytes are a random 24-byte nonce, then the
//! sealed object (kube's layout, so either server reads what the other wrote).

use super::{random_bytes, too_short};
use crate::errors::{Result, StorageError};
use crate::store::ValueTransformer;
use crypto_secretbox::aead::{Aead, KeyInit};
use crypto_secretbox::XSalsa20Poly1305;

const NONCE: usize = 24;
const OVERHEAD: usize = 16;

/// The `secretbox` provider's transformer.
pub struct SecretboxTransformer(Box<XSalsa20Poly1305>);

impl SecretboxTransformer {
    /// A transformer for a 32-byte key. Errors: another length.
    pub fn new(key: &[u8]) -> Result<SecretboxTransformer> {
        if key.len() != 32 {
            return Err(StorageError::Internal(format!(
                "secret is not of the expected length, got {}, expected one of [32]",
                key.len()
            )));
        }
        Ok(SecretboxTransformer(Box::new(
            XSalsa20Poly1305::new_from_slice(key).expect("32 bytes"),
        )))
    }
}

impl ValueTransformer for SecretboxTransformer {
    fn to_storage(&self, data: Vec<u8>, _key: &str) -> Result<Vec<u8>> {
        let nonce = random_bytes(NONCE)?;
        let sealed = self
            .0
            .encrypt(crypto_secretbox::Nonce::from_slice(&nonce), data.as_slice())
            .map_err(|_| StorageError::Internal("secretbox encryption failed".into()))?;
        let mut out = nonce;
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    fn from_storage(&self, data: &[u8], _key: &str) -> Result<(Vec<u8>, bool)> {
        if data.len() < OVERHEAD + NONCE {
            return Err(too_short());
        }
        let (nonce, sealed) = data.split_at(NONCE);
        let plain = self
            .0
            .decrypt(crypto_secretbox::Nonce::from_slice(nonce), sealed)
            // kube's text for a box that does not open.
            .map_err(|_| {
                StorageError::Internal("output array was not large enough for encryption".into())
            })?;
        Ok((plain, false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_another_key() {
        let t = SecretboxTransformer::new(&[5; 32]).unwrap();
        let stored = t.to_storage(b"{\"k\":\"v\"}".to_vec(), "k").unwrap();
        assert_eq!(stored.len(), 24 + 16 + 9);
        assert_eq!(t.from_storage(&stored, "k").unwrap().0, b"{\"k\":\"v\"}");
        let other = SecretboxTransformer::new(&[6; 32]).unwrap();
        assert_eq!(
            other.from_storage(&stored, "k").unwrap_err().to_string(),
            "output array was not large enough for encryption"
        );
        assert!(SecretboxTransformer::new(&[5; 16]).is_err());
        assert_eq!(
            t.from_storage(&[0; 39], "k").unwrap_err().to_string(),
            "the stored data was shorter than the required size"
        );
    }
}
