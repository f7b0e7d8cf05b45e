//! AES-GCM and AES-CBC (`k8s.io/apiserver/pkg/storage/value/encrypt/aes/aes.go`), the `aesgcm`
//! and `aescbc` providers of `EncryptionConfiguration`. Stored bytes are kube's, so either
//! server reads what the other wrote with the same key:
//! - GCM: a random 12-byte nonce, then the sealed object, with the storage key as
//!   authenticated data (an object copied to another key does not decrypt);
//! - CBC: a random 16-byte IV, then the object with PKCS#7 padding, encrypted (no
//!   authentication: kube rates `aescbc` weak, and so do we).

use super::{random_bytes, too_short};
use crate::errors::{Result, StorageError};
use crate::store::ValueTransformer;
use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::aes::Aes192;
use aes_gcm::{Aes128Gcm, Aes256Gcm, AesGcm};

type Aes192Gcm = AesGcm<Aes192, aes_gcm::aead::consts::U12>;

const GCM_NONCE: usize = 12;
const BLOCK: usize = 16;

/// The key lengths both providers accept (AES-128, -192, -256).
pub const AES_KEY_LENGTHS: [usize; 3] = [16, 24, 32];

fn bad_length(n: usize) -> StorageError {
    StorageError::Internal(format!(
        "secret is not of the expected length, got {n}, expected one of [16 24 32]"
    ))
}

enum Gcm {
    A128(Box<Aes128Gcm>),
    A192(Box<Aes192Gcm>),
    A256(Box<Aes256Gcm>),
}

/// `aestransformer.NewGCMTransformer`: AES-GCM with random nonces.
pub struct AesGcmTransformer(Gcm);

impl AesGcmTransformer {
    /// A transformer for a 16-, 24- or 32-byte key. Errors: another length.
    pub fn new(key: &[u8]) -> Result<AesGcmTransformer> {
        Ok(AesGcmTransformer(match key.len() {
            16 => Gcm::A128(Box::new(Aes128Gcm::new_from_slice(key).expect("16 bytes"))),
            24 => Gcm::A192(Box::new(Aes192Gcm::new_from_slice(key).expect("24 bytes"))),
            32 => Gcm::A256(Box::new(Aes256Gcm::new_from_slice(key).expect("32 bytes"))),
            n => return Err(bad_length(n)),
        }))
    }
}

impl ValueTransformer for AesGcmTransformer {
    fn to_storage(&self, data: Vec<u8>, key: &str) -> Result<Vec<u8>> {
        let nonce = random_bytes(GCM_NONCE)?;
        let payload = Payload {
            msg: &data,
            aad: key.as_bytes(),
        };
        let n = aes_gcm::Nonce::from_slice(&nonce);
        let sealed = match &self.0 {
            Gcm::A128(c) => c.encrypt(n, payload),
            Gcm::A192(c) => c.encrypt(n, payload),
            Gcm::A256(c) => c.encrypt(n, payload),
        }
        .map_err(|_| StorageError::Internal("AES-GCM encryption failed".into()))?;
        let mut out = nonce;
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    fn from_storage(&self, data: &[u8], key: &str) -> Result<(Vec<u8>, bool)> {
        if data.len() < GCM_NONCE {
            return Err(too_short());
        }
        let (nonce, sealed) = data.split_at(GCM_NONCE);
        let payload = Payload {
            msg: sealed,
            aad: key.as_bytes(),
        };
        let n = aes_gcm::Nonce::from_slice(nonce);
        let plain = match &self.0 {
            Gcm::A128(c) => c.decrypt(n, payload),
            Gcm::A192(c) => c.decrypt(n, payload),
            Gcm::A256(c) => c.decrypt(n, payload),
        }
        // Go's crypto/cipher text.
        .map_err(|_| StorageError::Internal("cipher: message authentication failed".into()))?;
        Ok((plain, false))
    }
}

enum Cbc {
    A128(aes::Aes128),
    A192(aes::Aes192),
    A256(aes::Aes256),
}

/// `aestransformer.NewCBCTransformer`: AES-CBC with a random IV and PKCS#7 padding.
pub struct AesCbcTransformer(Cbc);

impl AesCbcTransformer {
    /// A transformer for a 16-, 24- or 32-byte key. Errors: another length.
    pub fn new(key: &[u8]) -> Result<AesCbcTransformer> {
        use aes::cipher::KeyInit;
        Ok(AesCbcTransformer(match key.len() {
            16 => Cbc::A128(aes::Aes128::new_from_slice(key).expect("16 bytes")),
            24 => Cbc::A192(aes::Aes192::new_from_slice(key).expect("24 bytes")),
            32 => Cbc::A256(aes::Aes256::new_from_slice(key).expect("32 bytes")),
            n => return Err(bad_length(n)),
        }))
    }
}

impl ValueTransformer for AesCbcTransformer {
    fn to_storage(&self, data: Vec<u8>, _key: &str) -> Result<Vec<u8>> {
        use cbc::cipher::{block_padding::Pkcs7, BlockEncryptMut, InnerIvInit};
        let iv = random_bytes(BLOCK)?;
        let iv_arr = aes::cipher::generic_array::GenericArray::from_slice(&iv);
        let sealed = match &self.0 {
            Cbc::A128(k) => cbc::Encryptor::<aes::Aes128>::inner_iv_init(k.clone(), iv_arr)
                .encrypt_padded_vec_mut::<Pkcs7>(&data),
            Cbc::A192(k) => cbc::Encryptor::<aes::Aes192>::inner_iv_init(k.clone(), iv_arr)
                .encrypt_padded_vec_mut::<Pkcs7>(&data),
            Cbc::A256(k) => cbc::Encryptor::<aes::Aes256>::inner_iv_init(k.clone(), iv_arr)
                .encrypt_padded_vec_mut::<Pkcs7>(&data),
        };
        let mut out = iv;
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    fn from_storage(&self, data: &[u8], _key: &str) -> Result<(Vec<u8>, bool)> {
        use cbc::cipher::{block_padding::NoPadding, BlockDecryptMut, InnerIvInit};
        if data.len() < BLOCK {
            return Err(too_short());
        }
        let (iv, sealed) = data.split_at(BLOCK);
        if sealed.len() % BLOCK != 0 {
            return Err(StorageError::Internal(
                "the stored data is not a multiple of the block size".into(),
            ));
        }
        let iv = aes::cipher::generic_array::GenericArray::from_slice(iv);
        let mut plain = sealed.to_vec();
        let decrypted = match &self.0 {
            Cbc::A128(k) => cbc::Decryptor::<aes::Aes128>::inner_iv_init(k.clone(), iv)
                .decrypt_padded_mut::<NoPadding>(&mut plain)
                .map(<[u8]>::len),
            Cbc::A192(k) => cbc::Decryptor::<aes::Aes192>::inner_iv_init(k.clone(), iv)
                .decrypt_padded_mut::<NoPadding>(&mut plain)
                .map(<[u8]>::len),
            Cbc::A256(k) => cbc::Decryptor::<aes::Aes256>::inner_iv_init(k.clone(), iv)
                .decrypt_padded_mut::<NoPadding>(&mut plain)
                .map(<[u8]>::len),
        };
        debug_assert!(decrypted.is_ok(), "a multiple of the block size");
        // kube's PKCS#7 check, with its texts.
        let pad = *plain
            .last()
            .ok_or_else(|| StorageError::Internal(INVALID_PKCS7_DATA.into()))?
            as usize;
        if pad == 0 || pad > plain.len() {
            return Err(StorageError::Internal(INVALID_PKCS7_DATA.into()));
        }
        let size = plain.len() - pad;
        if plain[size..].iter().any(|&b| b as usize != pad) {
            return Err(StorageError::Internal("invalid padding on input".into()));
        }
        plain.truncate(size);
        Ok((plain, false))
    }
}

const INVALID_PKCS7_DATA: &str = "invalid PKCS7 data (empty or not padded)";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gcm_round_trips_with_every_key_length_and_binds_the_storage_key() {
        for n in AES_KEY_LENGTHS {
            let t = AesGcmTransformer::new(&vec![9u8; n]).unwrap();
            let stored = t
                .to_storage(b"{\"a\":1}".to_vec(), "/registry/secrets/ns/a")
                .unwrap();
            assert_eq!(stored.len(), 12 + 7 + 16);
            let (plain, stale) = t.from_storage(&stored, "/registry/secrets/ns/a").unwrap();
            assert_eq!((plain.as_slice(), stale), (&b"{\"a\":1}"[..], false));
            // Copied under another key: refused.
            assert_eq!(
                t.from_storage(&stored, "/registry/secrets/ns/b")
                    .unwrap_err()
                    .to_string(),
                "cipher: message authentication failed"
            );
            // Another key: refused.
            let other = AesGcmTransformer::new(&vec![8u8; n]).unwrap();
            assert!(other
                .from_storage(&stored, "/registry/secrets/ns/a")
                .is_err());
        }
        // Two writes of the same object differ (random nonces).
        let t = AesGcmTransformer::new(&[1; 32]).unwrap();
        assert_ne!(
            t.to_storage(b"x".to_vec(), "k").unwrap(),
            t.to_storage(b"x".to_vec(), "k").unwrap()
        );
        assert_eq!(
            AesGcmTransformer::new(&[1; 20]).err().unwrap().to_string(),
            "secret is not of the expected length, got 20, expected one of [16 24 32]"
        );
        assert_eq!(
            t.from_storage(b"short", "k").unwrap_err().to_string(),
            "the stored data was shorter than the required size"
        );
    }

    #[test]
    fn cbc_round_trips_and_checks_padding_as_kube() {
        for n in AES_KEY_LENGTHS {
            let t = AesCbcTransformer::new(&vec![3u8; n]).unwrap();
            for len in [0usize, 1, 15, 16, 17, 100] {
                let data = vec![b'x'; len];
                let stored = t.to_storage(data.clone(), "k").unwrap();
                assert_eq!(stored.len(), 16 + (len / 16 + 1) * 16);
                assert_eq!(t.from_storage(&stored, "k").unwrap().0, data);
            }
        }
        let t = AesCbcTransformer::new(&[3; 16]).unwrap();
        assert_eq!(
            t.from_storage(&[0u8; 20], "k").unwrap_err().to_string(),
            "the stored data is not a multiple of the block size"
        );
        assert_eq!(
            t.from_storage(&[0u8; 16], "k").unwrap_err().to_string(),
            INVALID_PKCS7_DATA
        );
        // (Another key decrypts to garbage whose padding usually, but not always, fails: CBC
        // is not authenticated, which is why kube rates aescbc weak.)
    }
}
