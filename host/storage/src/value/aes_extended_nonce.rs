//! `aestransformer.NewHKDFExtendedNonceGCMTransformer`
//! (`k8s.io/apiserver/pkg/storage/value/encrypt/aes/aes_extended_nonce.go`): AES-256-GCM under
//! a key derived for each write from a 32-byte seed — KMS v2's data encryption. A write draws
//! 32 random bytes of `info`, expands the seed with HKDF-SHA256 (expand only, as kube:
//! the seed is already uniformly random) into a 32-byte key, and stores `info`, then the GCM
//! output (nonce, sealed object; the storage key as authenticated data). A read takes the
//! first 32 bytes as `info` and derives the same key. Bytes are kube's.
//!
//! Kube caches the derived key per storage key for 10 minutes; here it is derived on every
//! read (an HKDF expand and an AES key schedule, ~1 µs).

use super::{random_bytes, too_short, AesGcmTransformer};
use crate::errors::{Result, StorageError};
use crate::store::ValueTransformer;
use hkdf::Hkdf;
use sha2::Sha256;

/// Length of the seed, of `info` and of the derived key (`commonSize`).
pub const SEED_LENGTH: usize = 32;

/// AES-GCM with a key derived per write from a seed.
pub struct HkdfExtendedNonceGcm {
    kdf: Hkdf<Sha256>,
}

impl HkdfExtendedNonceGcm {
    /// A transformer over `seed`. Errors: a seed shorter than 32 bytes (kube's text).
    pub fn new(seed: &[u8]) -> Result<HkdfExtendedNonceGcm> {
        if seed.len() < SEED_LENGTH {
            return Err(StorageError::Internal(format!(
                "invalid seed length {} used for key generation",
                seed.len()
            )));
        }
        let kdf = Hkdf::<Sha256>::from_prk(seed)
            .map_err(|_| StorageError::Internal("invalid seed for HKDF".into()))?;
        Ok(HkdfExtendedNonceGcm { kdf })
    }

    fn derived(&self, info: &[u8]) -> Result<AesGcmTransformer> {
        let mut key = [0u8; SEED_LENGTH];
        self.kdf
            .expand(info, &mut key)
            .map_err(|_| StorageError::Internal("failed to read a derived key from KDF".into()))?;
        AesGcmTransformer::new(&key)
    }
}

impl ValueTransformer for HkdfExtendedNonceGcm {
    fn to_storage(&self, data: Vec<u8>, key: &str) -> Result<Vec<u8>> {
        let mut out = random_bytes(SEED_LENGTH)?;
        let sealed = self.derived(&out)?.to_storage(data, key)?;
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    fn from_storage(&self, data: &[u8], key: &str) -> Result<(Vec<u8>, bool)> {
        if data.len() < SEED_LENGTH {
            return Err(too_short());
        }
        let (info, rest) = data.split_at(SEED_LENGTH);
        self.derived(info)
            .map_err(|e| {
                StorageError::Internal(format!("failed to derive read key from KDF: {e}"))
            })?
            .from_storage(rest, key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_write_has_its_own_key_and_the_seed_reads_them_all() {
        let t = HkdfExtendedNonceGcm::new(&[7; 32]).unwrap();
        let a = t
            .to_storage(b"{\"a\":1}".to_vec(), "/registry/secrets/d/a")
            .unwrap();
        let b = t
            .to_storage(b"{\"a\":1}".to_vec(), "/registry/secrets/d/a")
            .unwrap();
        assert_ne!(a[..32], b[..32], "fresh info per write");
        assert_eq!(
            t.from_storage(&a, "/registry/secrets/d/a").unwrap().0,
            b"{\"a\":1}"
        );
        assert!(
            t.from_storage(&a, "/registry/secrets/d/b").is_err(),
            "bound to its key"
        );
        let other = HkdfExtendedNonceGcm::new(&[8; 32]).unwrap();
        assert!(other.from_storage(&a, "/registry/secrets/d/a").is_err());
        assert!(HkdfExtendedNonceGcm::new(&[1; 16]).is_err());
        // The derivation is HKDF-SHA256 expand-only: RFC 5869's test case 1 PRK and info.
        let prk = hex::decode("077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5")
            .unwrap();
        let info = hex::decode("f0f1f2f3f4f5f6f7f8f9").unwrap();
        let mut okm = [0u8; 42];
        Hkdf::<Sha256>::from_prk(&prk)
            .unwrap()
            .expand(&info, &mut okm)
            .unwrap();
        assert_eq!(
            hex::encode(okm),
            "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865"
        );
    }
}
