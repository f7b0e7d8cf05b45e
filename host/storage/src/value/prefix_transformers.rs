//! `value.NewPrefixTransformers` (`k8s.io/apiserver/pkg/storage/value/transformer.go`), each
//! transformation recorded as its `RecordTransformation` calls do (`metrics.rs`).

use super::metrics::record;
use crate::errors::{Result, StorageError};
use crate::store::ValueTransformer;
use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

/// A transformer and the prefix its output is stored under.
#[derive(Clone)]
pub struct PrefixTransformer {
    /// Written before the transformer's output; on read, selects the transformer. Empty for
    /// `identity`.
    pub prefix: Vec<u8>,
    /// What writes and reads behind the prefix.
    pub transformer: Arc<dyn ValueTransformer>,
}

/// Several transformers, each behind its prefix: writes go through the first (its prefix,
/// then its output); a read goes to every transformer whose prefix the bytes start with, in
/// order, and the first that succeeds answers — stale when it is not the first, so that an
/// update rewrites the object under the write key (the storage migration of a key rotation).
///
/// Errors of a read: an empty-prefix transformer's error is passed over (an `identity` listed
/// first must not hide the provider that encrypted the data); the errors of the others are
/// joined (`[a, b]` when several); when nothing matched, the error given to
/// [`PrefixTransformers::new`] (`no matching prefix found`, or `no matching key was found for
/// the provided AES transformer` for the keys of one provider).
pub struct PrefixTransformers {
    transformers: Vec<PrefixTransformer>,
    no_match: String,
}

impl PrefixTransformers {
    /// `transformers` in order (the first writes); `no_match` is the error of bytes none of
    /// them reads. Panics when `transformers` is empty.
    pub fn new(no_match: &str, transformers: Vec<PrefixTransformer>) -> PrefixTransformers {
        assert!(!transformers.is_empty(), "at least one transformer");
        PrefixTransformers {
            transformers,
            no_match: no_match.to_string(),
        }
    }
}

impl ValueTransformer for PrefixTransformers {
    fn to_storage(&self, data: Vec<u8>, key: &str) -> Result<Vec<u8>> {
        let first = &self.transformers[0];
        let start = super::metrics::recording().then(Instant::now);
        let out = first.transformer.to_storage(data, key);
        if let Some(start) = start {
            record("to_storage", &first.prefix, start.elapsed(), out.is_ok());
        }
        let out = out?;
        if first.prefix.is_empty() {
            return Ok(out);
        }
        let mut stored = Vec::with_capacity(first.prefix.len() + out.len());
        stored.extend_from_slice(&first.prefix);
        stored.extend_from_slice(&out);
        Ok(stored)
    }

    fn from_storage(&self, data: &[u8], key: &str) -> Result<(Vec<u8>, bool)> {
        self.from_storage_cow(data, key)
            .map(|(d, stale)| (d.into_owned(), stale))
    }

    fn from_storage_cow<'a>(&self, data: &'a [u8], key: &str) -> Result<(Cow<'a, [u8]>, bool)> {
        let mut errs = Vec::new();
        let start = super::metrics::recording().then(Instant::now);
        let elapsed = || start.map(|s| s.elapsed()).unwrap_or_default();
        for (i, t) in self.transformers.iter().enumerate() {
            let Some(rest) = data.strip_prefix(t.prefix.as_slice()) else {
                continue;
            };
            let read = t.transformer.from_storage_cow(rest, key);
            // As kube: an identity's refusal is passed over unrecorded.
            if read.is_ok() || !t.prefix.is_empty() {
                record("from_storage", &t.prefix, elapsed(), read.is_ok());
            }
            match read {
                Ok((out, stale)) => return Ok((out, stale || i != 0)),
                Err(_) if t.prefix.is_empty() => continue,
                Err(e) => {
                    // kube's aggregate drops repeated messages (two keys of one provider).
                    let m = e.to_string();
                    if !errs.contains(&m) {
                        errs.push(m);
                    }
                }
            }
        }
        if errs.is_empty() {
            record("from_storage", b"unknown", elapsed(), false);
        }
        Err(StorageError::Internal(match errs.len() {
            0 => self.no_match.clone(),
            1 => errs.remove(0),
            _ => format!("[{}]", errs.join(", ")),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::{AesCbcTransformer, EncryptCheckTransformer, SecretboxTransformer};

    fn keyed(name: &str, t: Arc<dyn ValueTransformer>) -> PrefixTransformer {
        PrefixTransformer {
            prefix: format!("{name}:").into_bytes(),
            transformer: t,
        }
    }

    fn provider(prefix: &str, keys: Vec<PrefixTransformer>) -> PrefixTransformer {
        PrefixTransformer {
            prefix: prefix.as_bytes().to_vec(),
            transformer: Arc::new(PrefixTransformers::new(
                "no matching key was found for the provided AES transformer",
                keys,
            )),
        }
    }

    fn identity() -> PrefixTransformer {
        PrefixTransformer {
            prefix: Vec::new(),
            transformer: Arc::new(EncryptCheckTransformer),
        }
    }

    #[test]
    fn first_writes_each_reads_its_own_and_others_are_stale() {
        let k1: Arc<dyn ValueTransformer> = Arc::new(AesCbcTransformer::new(&[1; 32]).unwrap());
        let k2: Arc<dyn ValueTransformer> = Arc::new(AesCbcTransformer::new(&[2; 32]).unwrap());
        let old = PrefixTransformers::new(
            "no matching prefix found",
            vec![provider(
                "k8s:enc:aescbc:v1:",
                vec![keyed("k1", k1.clone())],
            )],
        );
        let stored = old
            .to_storage(b"{}".to_vec(), "/registry/secrets/a/b")
            .unwrap();
        assert!(stored.starts_with(b"k8s:enc:aescbc:v1:k1:"));

        // Rotation: k2 first, k1 still read (stale).
        let rotated = PrefixTransformers::new(
            "no matching prefix found",
            vec![provider(
                "k8s:enc:aescbc:v1:",
                vec![keyed("k2", k2.clone()), keyed("k1", k1)],
            )],
        );
        let (plain, stale) = rotated
            .from_storage(&stored, "/registry/secrets/a/b")
            .unwrap();
        assert_eq!((plain.as_slice(), stale), (&b"{}"[..], true));
        let fresh = rotated.to_storage(b"{}".to_vec(), "k").unwrap();
        assert!(fresh.starts_with(b"k8s:enc:aescbc:v1:k2:"));
        assert!(!rotated.from_storage(&fresh, "k").unwrap().1);

        // k1 dropped: kube's message; identity listed first does not hide it.
        let dropped = PrefixTransformers::new(
            "no matching prefix found",
            vec![
                identity(),
                provider("k8s:enc:aescbc:v1:", vec![keyed("k2", k2)]),
            ],
        );
        let err = dropped.from_storage(&stored, "k").unwrap_err();
        assert_eq!(
            err.to_string(),
            "no matching key was found for the provided AES transformer"
        );
        // Plaintext is read by identity (first, so not stale)...
        assert!(!dropped.from_storage(b"{}", "k").unwrap().1);
        // ...and without identity it matches nothing.
        assert_eq!(
            rotated.from_storage(b"{}", "k").unwrap_err().to_string(),
            "no matching prefix found"
        );
    }

    #[test]
    fn identity_alone_refuses_encrypted_bytes() {
        let only = PrefixTransformers::new("no matching prefix found", vec![identity()]);
        assert_eq!(
            only.from_storage(b"k8s:enc:secretbox:v1:k:xyz", "k")
                .unwrap_err()
                .to_string(),
            "no matching prefix found"
        );
        assert_eq!(
            EncryptCheckTransformer
                .from_storage(b"k8s:enc:secretbox:v1:k:xyz", "k")
                .unwrap_err()
                .to_string(),
            "identity transformer tried to read encrypted data"
        );
        let sb: Arc<dyn ValueTransformer> = Arc::new(SecretboxTransformer::new(&[7; 32]).unwrap());
        let two = PrefixTransformers::new(
            "no matching prefix found",
            vec![
                identity(),
                PrefixTransformer {
                    prefix: b"k8s:enc:secretbox:v1:k:".to_vec(),
                    transformer: sb,
                },
            ],
        );
        // identity writes plaintext; the secretbox data stays readable (stale).
        assert_eq!(two.to_storage(b"{}".to_vec(), "k").unwrap(), b"{}");
        let sealed = SecretboxTransformer::new(&[7; 32])
            .unwrap()
            .to_storage(b"{\"a\":1}".to_vec(), "k")
            .unwrap();
        let mut stored = b"k8s:enc:secretbox:v1:k:".to_vec();
        stored.extend_from_slice(&sealed);
        assert_eq!(
            two.from_storage(&stored, "k").unwrap(),
            (b"{\"a\":1}".to_vec(), true)
        );
    }
}
