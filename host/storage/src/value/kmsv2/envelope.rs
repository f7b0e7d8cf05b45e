//! The KMS v2 envelope transformer and its probe, as kube-apiserver runs them
//! (`k8s.io/apiserver/pkg/storage/value/encrypt/envelope/kmsv2/envelope.go`,
//! `k8s.io/apiserver/pkg/server/options/encryptionconfig/config.go`: `kmsv2PluginProbe`):
//! - **state**: a random 32-byte seed, encrypted once by the plugin (`Encrypt`), with the
//!   plugin's key id and annotations. Every write derives its own key from the seed
//!   ([`HkdfExtendedNonceGcm`]) and stores an `EncryptedObject` (the encrypted data, the
//!   encrypted seed, key id, annotations, source type) after `k8s:enc:kms:v2:<name>:` — so
//!   the plugin is called once per seed, not per object;
//! - **reads** open the stored object's seed from a cache, else ask the plugin (`Decrypt`)
//!   and cache it; an object whose key id or source type differs from the state's is stale
//!   (its next update re-encrypts it under the current seed);
//! - **the probe** calls `Status` on start (inline, once), then every minute (every 10 s
//!   while failing): `healthz` must be `ok`, the version `v2`, the key id valid; a new key id
//!   makes a new seed. A write needs a state younger than 3 minutes past its last good probe
//!   (`kmsv2PluginWriteDEKSourceMaxTTL`): a plugin down for longer stops writes, never
//!   reads of cached seeds. The health check (`kms-providers` in `/readyz`) reuses a probe's
//!   answer for 20 s (3 s when it failed).
//!
//! Not ported: KMS v1, the `AES_GCM_KEY` write mode (read only), tracing.

use super::api::{DecryptRequest, EncryptedObject, AES_GCM_KEY, HKDF_SHA256_XNONCE_AES_GCM_SEED};
use super::grpc_service::GrpcService;
use crate::errors::{Result, StorageError};
use crate::store::ValueTransformer;
use crate::value::{random_bytes, AesGcmTransformer, HkdfExtendedNonceGcm};
use prost::Message;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock, Weak};
use std::time::{Duration, Instant};

/// The prefix of a provider's stored objects, before its name (`kmsTransformerPrefixV2`).
pub const PREFIX: &str = "k8s:enc:kms:v2:";

const POSITIVE_INTERVAL: Duration = Duration::from_secs(60);
const NEGATIVE_INTERVAL: Duration = Duration::from_secs(10);
const WRITE_MAX_TTL: Duration = Duration::from_secs(180);
const HEALTH_POSITIVE_TTL: Duration = Duration::from_secs(20);
const HEALTH_NEGATIVE_TTL: Duration = Duration::from_secs(3);
const KEY_ID_MAX: usize = 1024;
const DEK_SOURCE_MAX: usize = 1024;
const ANNOTATIONS_MAX: usize = 32 * 1024;
/// Seeds kept for reads; the oldest half is dropped when full.
const CACHE_MAX: usize = 1024;

type Read = Arc<dyn ValueTransformer>;

struct State {
    transformer: Arc<HkdfExtendedNonceGcm>,
    object: EncryptedObject,
    cache_key: Vec<u8>,
    expires: Instant,
}

struct Health {
    checked: Option<Instant>,
    ttl: Duration,
    last: std::result::Result<(), String>,
}

/// One `kms` provider (API version v2): its plugin, state, seed cache and health.
pub struct KmsV2 {
    name: String,
    service: GrpcService,
    state: RwLock<Option<State>>,
    cache: Mutex<HashMap<Vec<u8>, (Read, Instant)>>,
    health: tokio::sync::Mutex<Health>,
    version: Mutex<String>,
}

impl KmsV2 {
    /// The provider `name` whose plugin listens at `endpoint` (`unix://…`), each call within
    /// `timeout`. Nothing is called until [`KmsV2::start`]. Errors: the endpoint.
    pub fn new(
        name: &str,
        endpoint: &str,
        timeout: Duration,
    ) -> std::result::Result<Arc<KmsV2>, String> {
        Ok(Arc::new(KmsV2 {
            name: name.to_string(),
            service: GrpcService::new(endpoint, timeout)?,
            state: RwLock::new(None),
            cache: Mutex::new(HashMap::new()),
            health: tokio::sync::Mutex::new(Health {
                checked: None,
                ttl: HEALTH_NEGATIVE_TTL,
                last: Err("not probed yet".into()),
            }),
            version: Mutex::new(String::new()),
        }))
    }

    /// The provider's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The stored prefix, `k8s:enc:kms:v2:<name>:`.
    pub fn prefix(&self) -> Vec<u8> {
        format!("{PREFIX}{}:", self.name).into_bytes()
    }

    /// kube's `primeAndProbeKMSv2`: probe once now (waiting for it), then every minute in
    /// the background — every 10 s while failing — for as long as the provider is in use.
    pub fn start(self: &Arc<KmsV2>) {
        let kms = self.clone();
        let first = self
            .service
            .run_blocking(async move { Ok(kms.probe(true).await) })
            .and_then(|r| r);
        if let Err(e) = &first {
            tracing::warn!(provider = %self.name, error = %e, "kms plugin failed health check probe");
        }
        let weak: Weak<KmsV2> = Arc::downgrade(self);
        self.service.spawn(async move {
            let mut failing = first.is_err();
            loop {
                let wait = if failing { NEGATIVE_INTERVAL } else { POSITIVE_INTERVAL };
                tokio::time::sleep(wait).await;
                let Some(kms) = weak.upgrade() else { return };
                let r = kms.probe(true).await;
                if let Err(e) = &r {
                    tracing::warn!(provider = %kms.name, error = %e, "kms plugin failed health check probe");
                }
                failing = r.is_err();
            }
        });
    }

    /// Whether the provider has a seed (it has been probed successfully once).
    pub fn ready(&self) -> bool {
        self.state
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .is_some()
    }

    /// The health check: the last probe's answer while fresh (20 s, 3 s after a failure),
    /// else a new probe (on the client's runtime; one at a time).
    pub async fn check(self: &Arc<KmsV2>) -> std::result::Result<(), String> {
        let (tx, rx) = futures::channel::oneshot::channel();
        let kms = self.clone();
        self.service.spawn(async move {
            let _ = tx.send(kms.probe(false).await);
        });
        rx.await
            .unwrap_or_else(|_| Err("the KMS client stopped".into()))
    }

    /// kube's `kmsv2PluginProbe.check`: the last answer while fresh (unless `force`d), else
    /// `Status`, its validation, and a new seed when the key id moved. Probes wait for each
    /// other: a queue of health checks makes one call.
    async fn probe(&self, force: bool) -> std::result::Result<(), String> {
        let mut health = self.health.lock().await;
        if !force && health.checked.is_some_and(|t| t.elapsed() < health.ttl) {
            return health.last.clone();
        }
        let outcome = match self.service.status().await {
            Err(e) => Err(format!(
                "failed to perform status section of the healthz check for KMS Provider {}, error: {e}",
                self.name
            )),
            Ok(status) => self.healthy_and_maybe_rotate(status).await,
        };
        health.checked = Some(Instant::now());
        health.ttl = if outcome.is_ok() {
            HEALTH_POSITIVE_TTL
        } else {
            HEALTH_NEGATIVE_TTL
        };
        health.last = outcome.clone();
        outcome
    }

    /// `isKMSv2ProviderHealthyAndMaybeRotateDEK`.
    async fn healthy_and_maybe_rotate(
        &self,
        status: super::api::StatusResponse,
    ) -> std::result::Result<(), String> {
        let mut errs = Vec::new();
        if status.healthz != "ok" {
            errs.push(format!("got unexpected healthz status: {}", status.healthz));
        }
        if status.version != "v2" && status.version != "v2beta1" {
            errs.push(format!(
                "expected KMSv2 API version v2, got {}",
                status.version
            ));
        } else {
            let mut v = self.version.lock().unwrap_or_else(|e| e.into_inner());
            if v.is_empty() {
                *v = status.version.clone();
            } else if *v != status.version {
                errs.push(format!(
                    "KMSv2 API version should not change after the initial status response version {}, got {}",
                    v, status.version
                ));
            }
        }
        if let Err(e) = validate_key_id(&status.key_id) {
            errs.push(format!(
                "got invalid KMSv2 KeyID hash {:?}: {e}",
                hash_if_not_empty(&status.key_id)
            ));
        } else if let Err(e) = self.rotate_on_key_id_change(&status.key_id).await {
            errs.push(e);
        }
        if errs.is_empty() {
            return Ok(());
        }
        let joined = if errs.len() == 1 {
            errs.remove(0)
        } else {
            format!("[{}]", errs.join(", "))
        };
        Err(format!(
            "kmsv2 Provider {} is not healthy, error: {joined}",
            self.name
        ))
    }

    /// `rotateDEKOnKeyIDChange`: the same key id extends the state's write window; another
    /// (or no state) makes a new seed encrypted by the plugin.
    async fn rotate_on_key_id_change(&self, key_id: &str) -> std::result::Result<(), String> {
        let expires = Instant::now() + WRITE_MAX_TTL;
        {
            let mut state = self.state.write().unwrap_or_else(|e| e.into_inner());
            if let Some(s) = state.as_mut().filter(|s| s.object.key_id == key_id) {
                s.expires = expires;
                return Ok(());
            }
        }
        let seed = random_bytes(32).map_err(|e| e.to_string())?;
        let transformer = Arc::new(HkdfExtendedNonceGcm::new(&seed).map_err(|e| e.to_string())?);
        let uid = hex::encode(random_bytes(16).map_err(|e| e.to_string())?);
        let resp = self.service.encrypt(uid.clone(), seed).await.map_err(|e| {
            format!("failed to rotate DEK uid={uid:?}: failed to encrypt DEK, error: {e}")
        })?;
        if resp.key_id != key_id {
            return Err(format!(
                "failed to rotate DEK uid={uid:?}: the key id of Encrypt ({:?}) is not the one of Status ({:?})",
                hash_if_not_empty(&resp.key_id),
                hash_if_not_empty(key_id)
            ));
        }
        let object = EncryptedObject {
            encrypted_data: vec![0], // any non-empty value to pass validation
            key_id: resp.key_id,
            encrypted_dek_source: resp.ciphertext,
            annotations: resp.annotations,
            encrypted_dek_source_type: HKDF_SHA256_XNONCE_AES_GCM_SEED,
        };
        validate(&object)?;
        let cache_key = cache_key(&object);
        *self.state.write().unwrap_or_else(|e| e.into_inner()) = Some(State {
            transformer,
            object: EncryptedObject {
                encrypted_data: Vec::new(),
                ..object
            },
            cache_key,
            expires,
        });
        tracing::info!(provider = %self.name, key_id_hash = %hash_if_not_empty(key_id), "kms v2: new seed encrypted by the plugin");
        Ok(())
    }

    fn cached(&self, key: &[u8]) -> Option<Read> {
        self.cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(key)
            .map(|(t, _)| t.clone())
    }

    fn remember(&self, key: Vec<u8>, t: Read) {
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        if cache.len() >= CACHE_MAX {
            let mut by_age: Vec<(Vec<u8>, Instant)> =
                cache.iter().map(|(k, (_, at))| (k.clone(), *at)).collect();
            by_age.sort_by_key(|(_, at)| *at);
            for (k, _) in by_age.into_iter().take(CACHE_MAX / 2) {
                cache.remove(&k);
            }
        }
        cache.insert(key, (t, Instant::now()));
    }
}

/// The provider as a value transformer (behind its prefix in the provider list).
pub struct EnvelopeTransformer(pub Arc<KmsV2>);

impl ValueTransformer for EnvelopeTransformer {
    fn to_storage(&self, data: Vec<u8>, key: &str) -> Result<Vec<u8>> {
        let kms = &self.0;
        let state = kms.state.read().unwrap_or_else(|e| e.into_inner());
        let Some(state) = state.as_ref() else {
            return Err(StorageError::Internal(
                "got unexpected nil transformer".into(),
            ));
        };
        if Instant::now() > state.expires {
            return Err(StorageError::Internal(format!(
                "encryptedDEKSource with keyID hash {:?} expired",
                hash_if_not_empty(&state.object.key_id)
            )));
        }
        if kms.cached(&state.cache_key).is_none() {
            kms.remember(state.cache_key.clone(), state.transformer.clone());
        }
        let encrypted_data = state.transformer.to_storage(data, key)?;
        let object = EncryptedObject {
            encrypted_data,
            ..state.object.clone()
        };
        validate(&object).map_err(StorageError::Internal)?;
        Ok(object.encode_to_vec())
    }

    fn from_storage(&self, data: &[u8], key: &str) -> Result<(Vec<u8>, bool)> {
        let kms = &self.0;
        let object = EncryptedObject::decode(data).map_err(|e| {
            StorageError::Internal(format!("failed to decode the encrypted object: {e}"))
        })?;
        validate(&object).map_err(StorageError::Internal)?;
        let (state_key_id, state_type) = {
            let state = kms.state.read().unwrap_or_else(|e| e.into_inner());
            let Some(s) = state.as_ref() else {
                return Err(StorageError::Internal(
                    "got unexpected nil transformer".into(),
                ));
            };
            (s.object.key_id.clone(), s.object.encrypted_dek_source_type)
        };
        let cache_key = cache_key(&object);
        let transformer = match kms.cached(&cache_key) {
            Some(t) => t,
            None => {
                let uid = hex::encode(random_bytes(16)?);
                let resp = kms
                    .service
                    .decrypt_blocking(DecryptRequest {
                        ciphertext: object.encrypted_dek_source.clone(),
                        uid,
                        key_id: object.key_id.clone(),
                        annotations: object.annotations.clone(),
                    })
                    .map_err(|e| {
                        StorageError::Internal(format!("failed to decrypt DEK, error: {e}"))
                    })?;
                let t: Read = if object.encrypted_dek_source_type == HKDF_SHA256_XNONCE_AES_GCM_SEED
                {
                    Arc::new(HkdfExtendedNonceGcm::new(&resp.plaintext)?)
                } else {
                    Arc::new(AesGcmTransformer::new(&resp.plaintext)?)
                };
                kms.remember(cache_key, t.clone());
                t
            }
        };
        let (out, stale) = transformer.from_storage(&object.encrypted_data, key)?;
        Ok((
            out,
            stale
                || object.key_id != state_key_id
                || object.encrypted_dek_source_type != state_type,
        ))
    }
}

/// `ValidateEncryptedObject`, kube's texts.
fn validate(o: &EncryptedObject) -> std::result::Result<(), String> {
    if o.encrypted_dek_source_type != AES_GCM_KEY
        && o.encrypted_dek_source_type != HKDF_SHA256_XNONCE_AES_GCM_SEED
    {
        return Err(format!(
            "unknown encryptedDEKSourceType: {}",
            o.encrypted_dek_source_type
        ));
    }
    if o.encrypted_data.is_empty() {
        return Err("encrypted data is empty".into());
    }
    if o.encrypted_dek_source.is_empty() {
        return Err(
            "failed to validate encrypted DEK source: encrypted DEK source is empty".into(),
        );
    }
    if o.encrypted_dek_source.len() > DEK_SOURCE_MAX {
        return Err(format!(
            "failed to validate encrypted DEK source: encrypted DEK source is {} bytes, which exceeds the max size of {DEK_SOURCE_MAX}",
            o.encrypted_dek_source.len()
        ));
    }
    validate_key_id(&o.key_id).map_err(|e| format!("failed to validate key id: {e}"))?;
    validate_annotations(&o.annotations).map_err(|e| format!("failed to validate annotations: {e}"))
}

/// `validateAnnotations`: each key a fully qualified domain name, keys and values at most
/// 32 kB together.
fn validate_annotations(
    a: &std::collections::BTreeMap<String, Vec<u8>>,
) -> std::result::Result<(), String> {
    let mut errs = Vec::new();
    for k in a.keys() {
        // `IsFullyQualifiedDomainName`: a DNS-1123 subdomain of at least two segments.
        let subdomain = wasm_apiserver_apimachinery::validation::is_dns1123_subdomain(k);
        if let Some(e) = subdomain.first() {
            errs.push(format!("annotations: Invalid value: {k:?}: {e}"));
        } else if !k.contains('.') {
            errs.push(format!(
                "annotations: Invalid value: {k:?}: should be a domain with at least two segments separated by dots"
            ));
        }
    }
    let size: usize = a.iter().map(|(k, v)| k.len() + v.len()).sum();
    if size > ANNOTATIONS_MAX {
        errs.push(format!(
            "total size of annotations is {size}, which exceeds the max size of {ANNOTATIONS_MAX}"
        ));
    }
    match errs.len() {
        0 => Ok(()),
        1 => Err(errs.remove(0)),
        _ => Err(format!("[{}]", errs.join(", "))),
    }
}

/// `ValidateKeyID`.
fn validate_key_id(key_id: &str) -> std::result::Result<(), String> {
    if key_id.is_empty() {
        return Err("keyID is empty".into());
    }
    if key_id.len() > KEY_ID_MAX {
        return Err(format!(
            "keyID is {} bytes, which exceeds the max size of {KEY_ID_MAX}",
            key_id.len()
        ));
    }
    Ok(())
}

/// `GetHashIfNotEmpty`: `sha256:<hex>` of a key id, never the id itself in logs.
fn hash_if_not_empty(s: &str) -> String {
    if s.is_empty() {
        String::new()
    } else {
        format!("sha256:{}", hex::encode(Sha256::digest(s.as_bytes())))
    }
}

/// `generateCacheKey`: the source type, DEK source, key id and annotations, each
/// length-prefixed, hashed.
fn cache_key(o: &EncryptedObject) -> Vec<u8> {
    let mut h = Sha256::new();
    let mut put = |b: &[u8]| {
        h.update((b.len() as u64).to_be_bytes());
        h.update(b);
    };
    put(&o.encrypted_dek_source_type.to_be_bytes());
    put(&o.encrypted_dek_source);
    put(o.key_id.as_bytes());
    for (k, v) in &o.annotations {
        put(k.as_bytes());
        put(v);
    }
    h.finalize().to_vec()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object() -> EncryptedObject {
        EncryptedObject {
            encrypted_data: vec![1],
            key_id: "key-1".into(),
            encrypted_dek_source: vec![2; 40],
            annotations: [("kms.example.com".to_string(), b"x".to_vec())].into(),
            encrypted_dek_source_type: HKDF_SHA256_XNONCE_AES_GCM_SEED,
        }
    }

    #[test]
    fn kubes_encrypted_object_rules() {
        assert_eq!(validate(&object()), Ok(()));
        let mut o = object();
        o.annotations = [("plugin".to_string(), vec![])].into();
        assert_eq!(
            validate(&o).unwrap_err(),
            "failed to validate annotations: annotations: Invalid value: \"plugin\": should be a domain with at least two segments separated by dots"
        );
        let mut o = object();
        o.key_id.clear();
        assert_eq!(
            validate(&o).unwrap_err(),
            "failed to validate key id: keyID is empty"
        );
        let mut o = object();
        o.encrypted_dek_source_type = 7;
        assert_eq!(
            validate(&o).unwrap_err(),
            "unknown encryptedDEKSourceType: 7"
        );
        let mut o = object();
        o.encrypted_data.clear();
        assert_eq!(validate(&o).unwrap_err(), "encrypted data is empty");
        // The wire format: kube's field numbers (an omitted type decodes as AES_GCM_KEY).
        let bytes = object().encode_to_vec();
        assert_eq!(&bytes[..3], &[0x0a, 0x01, 0x01], "field 1, encryptedData");
        let mut no_type = object();
        no_type.encrypted_dek_source_type = AES_GCM_KEY;
        let decoded = EncryptedObject::decode(&*no_type.encode_to_vec()).unwrap();
        assert_eq!(decoded.encrypted_dek_source_type, AES_GCM_KEY);
    }

    #[test]
    fn cache_keys_tell_every_field_apart() {
        let a = cache_key(&object());
        let mut o = object();
        o.key_id = "key-2".into();
        assert_ne!(cache_key(&o), a);
        let mut o = object();
        o.annotations.insert("b.example.com".into(), vec![]);
        assert_ne!(cache_key(&o), a);
        let mut o = object();
        o.encrypted_data = vec![9, 9];
        assert_eq!(cache_key(&o), a, "the data is not part of it");
    }
}
