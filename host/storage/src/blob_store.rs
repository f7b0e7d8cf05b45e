//! [`BlobStore`]: content-addressed byte blobs (strategy plugin components) kept in the same
//! [`Backend`] as the objects, deflate-compressed and cut into chunks that each fit one etcd
//! request (etcd's `--max-request-bytes` defaults to 1.5 MiB; a chunk is at most
//! [`CHUNK_BYTES`]).
//!
//! Layout under the store's prefix (e.g. `/registry/wasm-apiserver.dev/components`):
//! - `<prefix>/<sha256>/<upload>/<n>`: chunk `n` (six digits) of one upload;
//! - `<prefix>/<sha256>`: the [`BlobManifest`], written last, naming the upload whose chunks
//!   make the blob. A blob exists once its manifest does, so a reader never sees a partial
//!   one; an upload that fails (size, hash, content, a lost client) deletes its own chunks, and
//!   two uploads of the same blob at once never touch each other's chunks.

use crate::backend::{prefix_end, Backend};
use crate::errors::BackendError;
use flate2::write::{DeflateDecoder, DeflateEncoder};
use flate2::Compression;
use futures::{Stream, StreamExt};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::sync::Arc;

/// The most compressed bytes in one chunk (1 MiB), well under etcd's default request limit.
pub const CHUNK_BYTES: usize = 1 << 20;

/// What is known of a stored blob: `<prefix>/<sha256>` as JSON.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BlobManifest {
    /// Lowercase hex sha256 of the uncompressed bytes.
    pub sha256: String,
    /// Uncompressed size in bytes.
    pub size: u64,
    /// Compressed size in bytes (the sum of the chunks).
    pub stored_size: u64,
    /// Number of chunks.
    pub chunks: u32,
    /// `deflate` (RFC 1951).
    pub compression: String,
    /// The upload whose chunks make the blob.
    pub upload: String,
}

/// Why an upload was refused. Nothing of it stays stored.
#[derive(Debug, thiserror::Error)]
pub enum BlobError {
    /// More than the limit (bytes) was sent.
    #[error("the upload is larger than the limit of {0} bytes")]
    TooLarge(u64),
    /// The bytes do not hash to the name they were uploaded under.
    #[error("the uploaded bytes have sha256 {actual}, not {expected}")]
    HashMismatch {
        /// The name of the upload.
        expected: String,
        /// The hash of what arrived.
        actual: String,
    },
    /// The content check refused the first bytes.
    #[error("{0}")]
    Invalid(String),
    /// The request body failed (the client went away).
    #[error("reading the upload: {0}")]
    Body(String),
    /// The backend failed.
    #[error(transparent)]
    Backend(#[from] BackendError),
}

/// Blobs under one key prefix of a backend.
#[derive(Clone)]
pub struct BlobStore {
    backend: Arc<dyn Backend>,
    prefix: String,
}

/// Whether `s` is a lowercase hex sha256 (64 characters).
pub fn is_sha256(s: &str) -> bool {
    s.len() == 64
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

impl BlobStore {
    /// Blobs under `prefix` (no trailing `/`) of `backend`.
    pub fn new(backend: Arc<dyn Backend>, prefix: &str) -> BlobStore {
        BlobStore {
            backend,
            prefix: prefix.trim_end_matches('/').to_string(),
        }
    }

    fn manifest_key(&self, sha256: &str) -> String {
        format!("{}/{sha256}", self.prefix)
    }

    fn chunk_key(&self, sha256: &str, upload: &str, n: u32) -> String {
        format!("{}/{sha256}/{upload}/{n:06}", self.prefix)
    }

    /// The manifest of `sha256`, `None` when no such blob is stored. Errors: the backend's, or
    /// a manifest that does not decode.
    pub async fn info(&self, sha256: &str) -> Result<Option<BlobManifest>, BackendError> {
        let r = self
            .backend
            .range(&self.manifest_key(sha256), "", 1, 0)
            .await?;
        match r.kvs.first() {
            None => Ok(None),
            Some(kv) => serde_json::from_slice(&kv.value)
                .map(Some)
                .map_err(|e| BackendError::Other(format!("blob manifest {sha256}: {e}"))),
        }
    }

    /// The bytes of `sha256` (decompressed and checked against the hash), `None` when no such
    /// blob is stored. Errors: the backend's; a missing chunk, a stream that does not inflate
    /// or bytes that do not hash to `sha256` (`Other`).
    pub async fn get(&self, sha256: &str) -> Result<Option<Vec<u8>>, BackendError> {
        let Some(m) = self.info(sha256).await? else {
            return Ok(None);
        };
        let corrupt = |what: String| BackendError::Other(format!("blob {sha256}: {what}"));
        let mut inflate = DeflateDecoder::new(Vec::with_capacity(m.size as usize));
        // One chunk per read: a whole blob in one response could pass the client's message
        // limit.
        for n in 0..m.chunks {
            let r = self
                .backend
                .range(&self.chunk_key(sha256, &m.upload, n), "", 1, 0)
                .await?;
            let kv = r
                .kvs
                .first()
                .ok_or_else(|| corrupt(format!("chunk {n} is missing")))?;
            inflate
                .write_all(&kv.value)
                .map_err(|e| corrupt(e.to_string()))?;
        }
        let bytes = inflate.finish().map_err(|e| corrupt(e.to_string()))?;
        let actual = hex::encode(Sha256::digest(&bytes));
        if actual != sha256 {
            return Err(corrupt(format!("stored bytes hash to {actual}")));
        }
        Ok(Some(bytes))
    }

    /// Store the bytes of `body` as the blob `sha256`, reading the stream as it arrives (at
    /// most one chunk is held compressed). `check` sees the first bytes (at least 8, or all
    /// when fewer arrive) and may refuse them. Returns the manifest and whether this call
    /// stored it (`false`: it already existed).
    ///
    /// Errors: [`BlobError::TooLarge`] past `limit` bytes, [`BlobError::HashMismatch`],
    /// [`BlobError::Invalid`] from `check`, [`BlobError::Body`], [`BlobError::Backend`]. On
    /// every error the chunks written so far are deleted.
    pub async fn put_stream<S, B, E>(
        &self,
        sha256: &str,
        body: S,
        limit: u64,
        check: impl Fn(&[u8]) -> Result<(), String>,
    ) -> Result<(BlobManifest, bool), BlobError>
    where
        S: Stream<Item = Result<B, E>>,
        B: AsRef<[u8]>,
        E: std::fmt::Display,
    {
        if let Some(m) = self.info(sha256).await? {
            return Ok((m, false));
        }
        let upload = format!("{:016x}", rand_u64());
        let mut written: Vec<(String, i64)> = Vec::new();
        let result = self
            .write_chunks(sha256, &upload, body, limit, check, &mut written)
            .await;
        let outcome = match result {
            Ok(m) => {
                let value = serde_json::to_vec(&m).expect("manifest serializes");
                match self
                    .backend
                    .put_if(&self.manifest_key(sha256), 0, value, 0)
                    .await
                {
                    Ok(r) if r.succeeded => return Ok((m, true)),
                    // Another upload of the same bytes finished first: theirs stands.
                    Ok(_) => match self.info(sha256).await {
                        Ok(Some(theirs)) => Ok((theirs, false)),
                        Ok(None) => Err(BlobError::Backend(BackendError::Other(
                            "the blob manifest changed during the upload".into(),
                        ))),
                        Err(e) => Err(e.into()),
                    },
                    // The answer was lost, not necessarily the write: if the stored manifest
                    // names this upload, its chunks are the blob and must stay.
                    Err(e) => match self.info(sha256).await {
                        Ok(Some(stored)) if stored.upload == m.upload => return Ok((stored, true)),
                        _ => Err(e.into()),
                    },
                }
            }
            Err(e) => Err(e),
        };
        for (key, rev) in written {
            if let Err(e) = self.backend.delete_if(&key, rev).await {
                tracing::warn!(%key, error = %e, "cannot delete a chunk of a refused upload");
            }
        }
        outcome
    }

    async fn write_chunks<S, B, E>(
        &self,
        sha256: &str,
        upload: &str,
        body: S,
        limit: u64,
        check: impl Fn(&[u8]) -> Result<(), String>,
        written: &mut Vec<(String, i64)>,
    ) -> Result<BlobManifest, BlobError>
    where
        S: Stream<Item = Result<B, E>>,
        B: AsRef<[u8]>,
        E: std::fmt::Display,
    {
        let mut body = std::pin::pin!(body);
        let mut hasher = Sha256::new();
        let mut deflate = DeflateEncoder::new(Vec::new(), Compression::default());
        let mut size: u64 = 0;
        let mut stored: u64 = 0;
        let mut head: Vec<u8> = Vec::new();
        let mut checked = false;
        let mut n: u32 = 0;
        while let Some(piece) = body.next().await {
            let piece = piece.map_err(|e| BlobError::Body(e.to_string()))?;
            let piece = piece.as_ref();
            size += piece.len() as u64;
            if size > limit {
                return Err(BlobError::TooLarge(limit));
            }
            if !checked {
                head.extend_from_slice(&piece[..piece.len().min(8)]);
                if head.len() >= 8 {
                    check(&head).map_err(BlobError::Invalid)?;
                    checked = true;
                }
            }
            hasher.update(piece);
            deflate
                .write_all(piece)
                .map_err(|e| BlobError::Body(e.to_string()))?;
            while deflate.get_ref().len() >= CHUNK_BYTES {
                // The encoder only appends to its output: taking finished bytes off the front
                // leaves it consistent.
                let chunk: Vec<u8> = deflate.get_mut().drain(..CHUNK_BYTES).collect();
                stored += chunk.len() as u64;
                self.put_chunk(sha256, upload, n, chunk, written).await?;
                n += 1;
            }
        }
        if !checked {
            check(&head).map_err(BlobError::Invalid)?;
        }
        let actual = hex::encode(hasher.finalize());
        if actual != sha256 {
            return Err(BlobError::HashMismatch {
                expected: sha256.to_string(),
                actual,
            });
        }
        let rest = deflate
            .finish()
            .map_err(|e| BlobError::Body(e.to_string()))?;
        for chunk in rest.chunks(CHUNK_BYTES) {
            stored += chunk.len() as u64;
            self.put_chunk(sha256, upload, n, chunk.to_vec(), written)
                .await?;
            n += 1;
        }
        Ok(BlobManifest {
            sha256: sha256.to_string(),
            size,
            stored_size: stored,
            chunks: n,
            compression: "deflate".into(),
            upload: upload.to_string(),
        })
    }

    async fn put_chunk(
        &self,
        sha256: &str,
        upload: &str,
        n: u32,
        chunk: Vec<u8>,
        written: &mut Vec<(String, i64)>,
    ) -> Result<(), BlobError> {
        let key = self.chunk_key(sha256, upload, n);
        let r = self.backend.put_if(&key, 0, chunk, 0).await?;
        if !r.succeeded {
            return Err(BlobError::Backend(BackendError::Other(format!(
                "chunk {key} exists"
            ))));
        }
        written.push((key, r.revision));
        Ok(())
    }

    /// Every chunk key of every upload of `sha256`, for tests and diagnostics.
    pub async fn chunk_keys(&self, sha256: &str) -> Result<Vec<String>, BackendError> {
        let start = format!("{}/{sha256}/", self.prefix);
        let r = self
            .backend
            .range(&start, &prefix_end(&start), 0, 0)
            .await?;
        Ok(r.kvs.into_iter().map(|kv| kv.key).collect())
    }
}

/// A random upload id: two uploads of the same blob at once write different keys.
fn rand_u64() -> u64 {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    let mut h = RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::embedded::{Embedded, EmbeddedOptions};

    async fn store() -> (tempfile::TempDir, BlobStore) {
        let dir = tempfile::tempdir().unwrap();
        let b = Embedded::open(dir.path(), EmbeddedOptions::default())
            .await
            .unwrap();
        (dir, BlobStore::new(Arc::new(b), "/registry/blobs"))
    }

    fn body(bytes: &[u8], piece: usize) -> impl Stream<Item = Result<Vec<u8>, String>> {
        futures::stream::iter(
            bytes
                .chunks(piece)
                .map(|c| Ok(c.to_vec()))
                .collect::<Vec<_>>(),
        )
    }

    fn any(_: &[u8]) -> Result<(), String> {
        Ok(())
    }

    /// Bytes that deflate poorly, so they span several chunks.
    fn noise(n: usize) -> Vec<u8> {
        let mut x: u64 = 0x9e3779b97f4a7c15;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect()
    }

    #[tokio::test]
    async fn round_trips_in_several_chunks_and_once_per_hash() {
        let (_d, s) = store().await;
        let bytes = noise(3 * CHUNK_BYTES + 12345);
        let sha = hex::encode(Sha256::digest(&bytes));
        let (m, created) = s
            .put_stream(&sha, body(&bytes, 64 * 1024), u64::MAX, any)
            .await
            .unwrap();
        assert!(created);
        assert_eq!(m.chunks, 4, "{m:?}");
        assert_eq!(m.size, bytes.len() as u64);
        assert_eq!(s.get(&sha).await.unwrap().unwrap(), bytes);
        let (_, again) = s
            .put_stream(&sha, body(&bytes, 1000), u64::MAX, any)
            .await
            .unwrap();
        assert!(!again, "a stored blob is not stored twice");
        assert_eq!(s.chunk_keys(&sha).await.unwrap().len(), 4);
        // Compressible bytes shrink.
        let text = b"wasm ".repeat(100_000);
        let tsha = hex::encode(Sha256::digest(&text));
        let (m, _) = s
            .put_stream(&tsha, body(&text, 4096), u64::MAX, any)
            .await
            .unwrap();
        assert!(m.stored_size < m.size / 50, "{m:?}");
        assert_eq!(s.get(&tsha).await.unwrap().unwrap(), text);
    }

    #[tokio::test]
    async fn refused_uploads_leave_nothing() {
        let (_d, s) = store().await;
        let bytes = noise(2 * CHUNK_BYTES + 10);
        let sha = hex::encode(Sha256::digest(&bytes));
        let wrong = hex::encode(Sha256::digest(b"other"));
        let e = s
            .put_stream(&wrong, body(&bytes, 50_000), u64::MAX, any)
            .await
            .unwrap_err();
        assert!(matches!(e, BlobError::HashMismatch { .. }), "{e}");
        assert!(s.chunk_keys(&wrong).await.unwrap().is_empty());
        assert!(s.info(&wrong).await.unwrap().is_none());
        let e = s
            .put_stream(&sha, body(&bytes, 50_000), CHUNK_BYTES as u64, any)
            .await
            .unwrap_err();
        assert!(matches!(e, BlobError::TooLarge(_)), "{e}");
        assert!(s.chunk_keys(&sha).await.unwrap().is_empty());
        let e = s
            .put_stream(&sha, body(&bytes, 3), u64::MAX, |head: &[u8]| {
                if head.starts_with(b"\0asm") {
                    Ok(())
                } else {
                    Err(format!("not wasm: {} bytes seen", head.len()))
                }
            })
            .await
            .unwrap_err();
        assert!(e.to_string().contains("not wasm: 9 bytes seen"), "{e}");
        assert!(s.get(&sha).await.unwrap().is_none());
        assert!(is_sha256(&sha) && !is_sha256(&sha.to_uppercase()) && !is_sha256("abc"));
    }
}
