//! Encryption at rest from `--encryption-provider-config`: kube's `EncryptionConfiguration`
//! (`apiserver.config.k8s.io/v1`, `k8s.io/apiserver/pkg/apis/apiserver/types_encryption.go`),
//! validated as `validation_encryption.go` does (its messages) and turned into a transformer
//! per resource as `k8s.io/apiserver/pkg/server/options/encryptionconfig/config.go` does:
//! - providers in order, the first writes, every one reads what carries its prefix
//!   (`k8s:enc:aesgcm:v1:<key>:`, `k8s:enc:aescbc:v1:<key>:`, `k8s:enc:secretbox:v1:<key>:`;
//!   `identity` none); within a provider, the first key writes and every key reads;
//! - `resources` entries: `secrets` (core), `deployments.apps`, `*.` (every core resource),
//!   `*.apps`, `*.*`; an exact entry wins over `*.<group>`, which wins over `*.*`; a resource
//!   in no entry is stored as is, and refuses encrypted bytes.
//!
//! **Secure by default**: without the flag, the server uses `<data-dir>/encryption-config.yaml`,
//! writing it (mode 0600) on the first start: Secrets sealed with `secretbox` under a new
//! random 32-byte key named after its fingerprint, `identity` second so Secrets written before
//! encryption was on stay readable. The key lives in that file, outside the store it protects;
//! replicas over one etcd must each be given the same file. Printed at start: the file and the
//! SHA-256 fingerprint of each write key, never a key.
//!
//! With `--encryption-provider-config-automatic-reload` the file is read again every second
//! (`encryption_reload.rs`).
//!
//! `kms` providers speak the KMS v2 plugin API over a unix socket
//! (`wasm_apiserver_storage::value::kmsv2`); KMS v1 is refused, as kube does without its
//! deprecated `KMSv1` gate.

use base64::Engine;
use serde::Deserialize;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use wasm_apiserver_storage::store::ValueTransformer;
use wasm_apiserver_storage::value::kmsv2::{EnvelopeTransformer, KmsV2};
use wasm_apiserver_storage::value::{
    AesCbcTransformer, AesGcmTransformer, EncryptCheckTransformer, PrefixTransformer,
    PrefixTransformers, ResourceTransformers, SecretboxTransformer, AES_KEY_LENGTHS,
};

/// The file name of the generated configuration under `--data-dir`.
pub const GENERATED_FILE: &str = "encryption-config.yaml";

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Document {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    resources: Vec<ResourceConfiguration>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ResourceConfiguration {
    #[serde(default)]
    resources: Vec<String>,
    #[serde(default)]
    providers: Vec<ProviderConfiguration>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ProviderConfiguration {
    aesgcm: Option<KeysConfiguration>,
    aescbc: Option<KeysConfiguration>,
    secretbox: Option<KeysConfiguration>,
    identity: Option<serde_json::Value>,
    kms: Option<KmsConfiguration>,
}

/// `KMSConfiguration` (defaults of `SetDefaults_KMSConfiguration`: `apiVersion` v1, `timeout`
/// 3s).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct KmsConfiguration {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    endpoint: String,
    cachesize: Option<i64>,
    timeout: Option<String>,
}

#[derive(Deserialize)]
struct KeysConfiguration {
    #[serde(default)]
    keys: Vec<Key>,
}

#[derive(Deserialize)]
struct Key {
    #[serde(default)]
    name: String,
    #[serde(default)]
    secret: String,
}

/// The resources of one entry (`secrets,*.apps`), the provider and key that write them
/// (`secretbox/key-…`, `identity`) and the SHA-256 fingerprint of that key (hex; empty for
/// identity).
pub type Writer = (String, String, String);

/// What the server encrypts with, for the start-up lines.
#[derive(Clone, Debug, PartialEq)]
pub struct Summary {
    /// The configuration file.
    pub path: PathBuf,
    /// Whether this start wrote it.
    pub generated: bool,
    /// Per resource entry: its writer.
    pub writers: Vec<Writer>,
    /// SHA-256 of the bytes loaded (what automatic reload compares the file against).
    pub digest: Vec<u8>,
}

/// The transformers of `--encryption-provider-config`, or of the generated default under
/// `data_dir`. Errors: the file cannot be read or written, or does not validate (the
/// messages of kube's `ValidateEncryptionConfiguration`, with the file's path).
pub fn load_or_generate(
    flag: Option<&Path>,
    data_dir: &Path,
) -> anyhow::Result<(ResourceTransformers, Summary)> {
    let (path, generated) = match flag {
        Some(p) => (p.to_path_buf(), false),
        None => {
            let p = data_dir.join(GENERATED_FILE);
            let generated = !p.exists();
            if generated {
                std::fs::create_dir_all(data_dir)?;
                super::certs::write_private(&p, &generated_config()?)?;
            }
            (p, generated)
        }
    };
    let text = std::fs::read_to_string(&path)
        .map_err(|e| anyhow::anyhow!("encryption provider config {}: {e}", path.display()))?;
    let (transformers, writers) = parse(&text)
        .map_err(|e| anyhow::anyhow!("encryption provider config {}: {e}", path.display()))?;
    Ok((
        transformers,
        Summary {
            path,
            generated,
            writers,
            digest: Sha256::digest(text.as_bytes()).to_vec(),
        },
    ))
}

/// The default configuration: Secrets with `secretbox` under a new key, then `identity`.
fn generated_config() -> anyhow::Result<String> {
    let mut key = [0u8; 32];
    getrandom::fill(&mut key).map_err(|e| anyhow::anyhow!("random key: {e}"))?;
    let name = format!("key-{}", &fingerprint(&key)[..16]);
    let secret = base64::engine::general_purpose::STANDARD.encode(key);
    Ok(format!(
        "# Written by wasm-apiserver on its first start: Secrets are encrypted at rest with this\n\
         # key. Keep this file out of the store and out of backups of it; give every replica the\n\
         # same file (--encryption-provider-config). Losing it loses every Secret.\n\
         apiVersion: apiserver.config.k8s.io/v1\n\
         kind: EncryptionConfiguration\n\
         resources:\n\
         - resources:\n\
         \x20 - secrets\n\
         \x20 providers:\n\
         \x20 - secretbox:\n\
         \x20     keys:\n\
         \x20     - name: {name}\n\
         \x20       secret: {secret}\n\
         \x20 - identity: {{}}\n"
    ))
}

/// SHA-256 of a key, hex.
fn fingerprint(key: &[u8]) -> String {
    hex::encode(Sha256::digest(key))
}

type Transformer = Arc<dyn ValueTransformer>;

/// Parse and validate a configuration; the transformers and, per resource entry, the writer.
pub(super) fn parse(text: &str) -> Result<(ResourceTransformers, Vec<Writer>), String> {
    let doc: Document = serde_yaml_ng::from_str(text).map_err(|e| e.to_string())?;
    if doc.api_version != "apiserver.config.k8s.io/v1" || doc.kind != "EncryptionConfiguration" {
        return Err(format!(
            "expected apiVersion apiserver.config.k8s.io/v1 and kind EncryptionConfiguration, got {:?} {:?}",
            doc.api_version, doc.kind
        ));
    }
    if doc.resources.is_empty() {
        return Err("resources: Required value: at least one resources is required".into());
    }
    let mut by_resource: BTreeMap<(String, String), Transformer> = BTreeMap::new();
    let mut writers = Vec::new();
    let mut kms = Vec::new();
    for (i, rc) in doc.resources.iter().enumerate() {
        let path = format!("resources[{i}]");
        if rc.resources.is_empty() {
            return Err(format!(
                "{path}.resources: Required value: at least one {path}.resources is required"
            ));
        }
        if rc.providers.is_empty() {
            return Err(format!(
                "{path}.providers: Required value: at least one {path}.providers is required"
            ));
        }
        let mut list = Vec::new();
        let mut writer = None;
        for (j, p) in rc.providers.iter().enumerate() {
            let (t, w) = provider(p, &format!("{path}.providers[{j}]"), &mut kms)?;
            writer.get_or_insert(w);
            list.push(t);
        }
        let transformer: Transformer =
            Arc::new(PrefixTransformers::new("no matching prefix found", list));
        let grs = group_resources(&rc.resources, &format!("{path}.resources"))?;
        for gr in &grs {
            // config.go: a resource an earlier `*.*` or `*.<group>` entry already covers.
            let all = ("*".to_string(), "*".to_string());
            let group = (gr.0.clone(), "*".to_string());
            let masker = if *gr != all && by_resource.contains_key(&all) {
                Some(all)
            } else if gr.1 != "*" && by_resource.contains_key(&group) {
                Some(group)
            } else {
                None
            };
            if let Some(m) = masker {
                return Err(format!(
                    "resource {:?} is masked by earlier rule {:?}",
                    gr_yaml(gr),
                    gr_yaml(&m)
                ));
            }
        }
        for (j, gr) in grs.into_iter().enumerate() {
            if by_resource.insert(gr, transformer.clone()).is_some() {
                return Err(format!(
                    "{path}.resources[{j}]: Invalid value: {:?}: the same resource cannot be specified multiple times",
                    rc.resources[j]
                ));
            }
        }
        let (name, fp) = writer.expect("at least one provider");
        writers.push((rc.resources.join(","), name, fp));
    }
    Ok((
        ResourceTransformers::new(by_resource, Arc::new(EncryptCheckTransformer)).with_kms(kms),
        writers,
    ))
}

/// A `kms` provider: validated as `validateKMSConfiguration` does (name, timeout, endpoint,
/// cachesize, apiVersion; names unique in the file), API version v2 only (kube refuses v1
/// unless its deprecated `KMSv1` gate is on). Nothing is called until the transformers are
/// started ([`start_kms`]).
fn kms_provider(
    k: &KmsConfiguration,
    path: &str,
    kms: &mut Vec<Arc<KmsV2>>,
) -> Result<(PrefixTransformer, (String, String)), String> {
    let version = if k.api_version.is_empty() {
        "v1"
    } else {
        k.api_version.as_str()
    };
    if k.name.is_empty() {
        return Err(format!(
            "{path}.name: Required value: name is a mandatory field for a provider"
        ));
    }
    if version != "v1" && k.name.contains(':') {
        return Err(format!(
            "{path}.name: Invalid value: {:?}: invalid KMS provider name {}, must not contain ':'",
            k.name, k.name
        ));
    }
    if kms.iter().any(|p| p.name() == k.name) {
        return Err(format!(
            "{path}.name: Invalid value: {:?}: duplicate KMS provider name {}, names must be unique",
            k.name, k.name
        ));
    }
    let timeout = match &k.timeout {
        None => std::time::Duration::from_secs(3),
        Some(t) => humantime::parse_duration(t)
            .ok()
            .filter(|d| !d.is_zero())
            .ok_or_else(|| {
                format!("{path}.timeout: Invalid value: {t:?}: timeout should be a positive value")
            })?,
    };
    if k.endpoint.is_empty() {
        return Err(format!(
            "{path}.endpoint: Invalid value: \"\": endpoint is a mandatory field for a kms"
        ));
    }
    let scheme = k.endpoint.split_once("://").map_or("", |(s, _)| s);
    if scheme != "unix" {
        return Err(format!(
            "{path}.endpoint: Invalid value: {:?}: unsupported scheme {scheme:?} for KMS provider, only unix is supported",
            k.endpoint
        ));
    }
    if let Some(c) = k.cachesize.filter(|_| version != "v1") {
        return Err(format!(
            "{path}.cachesize: Invalid value: {c}: cachesize is not supported in v2"
        ));
    }
    match version {
        "v2" => {}
        "v1" => return Err(format!("{path}: KMSv1 is deprecated and will only receive security updates going forward. Use KMSv2 instead.  Set --feature-gates=KMSv1=true to use the deprecated KMSv1 feature.")),
        v => {
            return Err(format!(
                "{path}.apiVersion: Invalid value: {v:?}: unsupported apiVersion apiVersion for KMS provider, only v1 and v2 are supported"
            ))
        }
    }
    let provider = KmsV2::new(&k.name, &k.endpoint, timeout).map_err(|e| {
        format!(
            "{path}: could not configure KMSv2-Plugin's probe {:?}, error: {e}",
            k.name
        )
    })?;
    kms.push(provider.clone());
    Ok((
        PrefixTransformer {
            prefix: provider.prefix(),
            transformer: Arc::new(EnvelopeTransformer(provider)),
        },
        (format!("kms/{}", k.name), String::new()),
    ))
}

/// Probe every `kms` provider of `t` once (waiting for each) and keep probing them in the
/// background: what makes their seeds, before they serve.
pub fn start_kms(t: &ResourceTransformers) {
    for p in t.kms_providers() {
        p.start();
    }
}

/// kube's `grYAMLString`: `secrets`, `deployments.apps`, `*.apps`, `*.` (every core resource).
fn gr_yaml((group, resource): &(String, String)) -> String {
    match (group.as_str(), resource.as_str()) {
        ("", "*") => "*.".into(),
        ("", r) => r.into(),
        (g, r) => format!("{r}.{g}"),
    }
}

/// `schema.ParseGroupResource` of each entry, with kube's resource rules.
fn group_resources(list: &[String], path: &str) -> Result<Vec<(String, String)>, String> {
    let mut out: Vec<(String, String)> = Vec::new();
    for (i, r) in list.iter().enumerate() {
        let bad = |msg: &str| format!("{path}[{i}]: Invalid value: {r:?}: {msg}");
        let (resource, group) = r.split_once('.').unwrap_or((r, ""));
        if r == "*" {
            return Err(bad("use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources"));
        }
        if r.chars().any(|c| c.is_ascii_uppercase()) {
            return Err(bad("resource name should not contain capital letters"));
        }
        if group == "events.k8s.io" {
            return Err(bad("'*.events.k8s.io' objects are stored using the 'events' API group in etcd. Use 'events' instead in the config file"));
        }
        if group == "extensions" {
            return Err(bad(
                "'extensions' group has been removed and cannot be used for encryption",
            ));
        }
        if group == "*" && resource != "*" {
            return Err(bad(
                "encrypting the same resource across groups is not supported",
            ));
        }
        let gr = (group.to_string(), resource.to_string());
        // `secrets` with `*.`, or `*.apps` with `*.*`, in one list: the wider masks the other.
        let overlaps = out
            .iter()
            .any(|(g, res)| (g == &gr.0 && (res == "*" || gr.1 == "*")) || g == "*" || gr.0 == "*");
        if overlaps {
            return Err(bad("using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked"));
        }
        out.push(gr);
    }
    Ok(out)
}

/// One provider element: its prefixed transformer, and (name, fingerprint) of its writer.
fn provider(
    p: &ProviderConfiguration,
    path: &str,
    kms: &mut Vec<Arc<KmsV2>>,
) -> Result<(PrefixTransformer, (String, String)), String> {
    let given = [
        p.aesgcm.is_some(),
        p.aescbc.is_some(),
        p.secretbox.is_some(),
        p.identity.is_some(),
        p.kms.is_some(),
    ]
    .iter()
    .filter(|x| **x)
    .count();
    if given == 0 {
        return Err(format!("{path}: Invalid value: \"\": provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity"));
    }
    if given > 1 {
        return Err(format!("{path}: Invalid value: \"\": more than one provider specified in a single element, should split into different list elements"));
    }
    if let Some(k) = &p.kms {
        return kms_provider(k, &format!("{path}.kms"), kms);
    }
    if p.identity.is_some() {
        return Ok((
            PrefixTransformer {
                prefix: Vec::new(),
                transformer: Arc::new(EncryptCheckTransformer),
            },
            ("identity".into(), String::new()),
        ));
    }
    type New = fn(&[u8]) -> wasm_apiserver_storage::errors::Result<Transformer>;
    let (name, keys, lengths, new, no_key): (&str, _, &[usize], New, &str) =
        if let Some(k) = &p.aesgcm {
            (
                "aesgcm",
                k,
                &AES_KEY_LENGTHS,
                |b| Ok(Arc::new(AesGcmTransformer::new(b)?)),
                "no matching key was found for the provided AES transformer",
            )
        } else if let Some(k) = &p.aescbc {
            (
                "aescbc",
                k,
                &AES_KEY_LENGTHS,
                |b| Ok(Arc::new(AesCbcTransformer::new(b)?)),
                "no matching key was found for the provided AES transformer",
            )
        } else {
            (
                "secretbox",
                p.secretbox.as_ref().expect("counted above"),
                &[32],
                |b| Ok(Arc::new(SecretboxTransformer::new(b)?)),
                "no matching key was found for the provided Secretbox transformer",
            )
        };
    let kpath = format!("{path}.{name}.keys");
    if keys.keys.is_empty() {
        return Err(format!(
            "{kpath}: Required value: at least one keys is required"
        ));
    }
    let mut list = Vec::new();
    let mut writer = None;
    let mut names = std::collections::BTreeSet::new();
    for (i, key) in keys.keys.iter().enumerate() {
        let kp = format!("{kpath}[{i}]");
        if key.name.is_empty() {
            return Err(format!(
                "{kp}.name: Required value: name is a mandatory field for a key"
            ));
        }
        if key.secret.is_empty() {
            return Err(format!(
                "{kp}.secret: Required value: secret is a mandatory field for a key"
            ));
        }
        if !names.insert(key.name.as_str()) {
            return Err(format!("{kp}.name: Duplicate value: {:?}", key.name));
        }
        let secret = base64::engine::general_purpose::STANDARD
            .decode(&key.secret)
            .map_err(|_| {
                format!("{kp}.secret: Invalid value: \"REDACTED\": secrets must be base64 encoded")
            })?;
        if !lengths.contains(&secret.len()) {
            let expected: Vec<String> = lengths.iter().map(|n| n.to_string()).collect();
            return Err(format!(
                "{kp}.secret: Invalid value: \"REDACTED\": secret is not of the expected length, got {}, expected one of [{}]",
                secret.len(),
                expected.join(" ")
            ));
        }
        let t = new(&secret).map_err(|e| format!("{kp}.secret: {e}"))?;
        writer.get_or_insert_with(|| (format!("{name}/{}", key.name), fingerprint(&secret)));
        list.push(PrefixTransformer {
            prefix: format!("{}:", key.name).into_bytes(),
            transformer: t,
        });
    }
    Ok((
        PrefixTransformer {
            prefix: format!("k8s:enc:{name}:v1:").into_bytes(),
            transformer: Arc::new(PrefixTransformers::new(no_key, list)),
        },
        writer.expect("at least one key"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(providers: &str) -> String {
        format!("apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets, '*.apps']\n  providers:\n{providers}")
    }

    const K32: &str = "AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE=";
    const K16: &str = "AgICAgICAgICAgICAgICAg==";

    #[test]
    fn each_provider_writes_kubes_prefix_and_reads_the_others() {
        let (t, writers) = parse(&config(&format!(
            "  - aesgcm: {{keys: [{{name: k1, secret: {K32}}}]}}\n  - aescbc: {{keys: [{{name: k2, secret: {K16}}}]}}\n  - secretbox: {{keys: [{{name: k3, secret: {K32}}}]}}\n  - identity: {{}}\n"
        )))
        .unwrap();
        assert_eq!(writers[0].0, "secrets,*.apps");
        assert_eq!(writers[0].1, "aesgcm/k1");
        assert_eq!(writers[0].2, fingerprint(&[1; 32]));
        let s = t.for_resource("", "secrets");
        let key = "/registry/secrets/default/a";
        let stored = s.to_storage(b"{}".to_vec(), key).unwrap();
        assert!(stored.starts_with(b"k8s:enc:aesgcm:v1:k1:"));
        assert_eq!(
            s.from_storage(&stored, key).unwrap(),
            (b"{}".to_vec(), false)
        );
        // Plaintext is read (identity, last: stale).
        assert_eq!(s.from_storage(b"{}", key).unwrap(), (b"{}".to_vec(), true));
        // *.apps shares the list; configmaps are not encrypted and refuse ciphertext.
        let apps = t.for_resource("apps", "deployments");
        assert!(apps.from_storage(&stored, key).is_ok());
        let cm = t.for_resource("", "configmaps");
        assert_eq!(cm.to_storage(b"{}".to_vec(), "k").unwrap(), b"{}");
        assert_eq!(
            cm.from_storage(&stored, key).unwrap_err().to_string(),
            "identity transformer tried to read encrypted data"
        );

        // The same key dropped: kube's message.
        let (t2, _) = parse(&config(&format!(
            "  - aesgcm: {{keys: [{{name: other, secret: {K32}}}]}}\n"
        )))
        .unwrap();
        assert_eq!(
            t2.for_resource("", "secrets")
                .from_storage(&stored, key)
                .unwrap_err()
                .to_string(),
            "no matching key was found for the provided AES transformer"
        );
    }

    #[test]
    fn validation_uses_kubes_messages() {
        let err = |providers: &str| parse(&config(providers)).err().unwrap();
        assert!(err("  - aesgcm: {keys: [{name: k, secret: 'not base64!'}]}\n")
            .ends_with("resources[0].providers[0].aesgcm.keys[0].secret: Invalid value: \"REDACTED\": secrets must be base64 encoded"));
        assert!(err(&format!(
            "  - secretbox: {{keys: [{{name: k, secret: {K16}}}]}}\n"
        ))
        .ends_with("secret is not of the expected length, got 16, expected one of [32]"));
        assert!(err(&format!(
            "  - aescbc: {{keys: [{{name: k, secret: {K16}}}]}}\n    identity: {{}}\n"
        ))
        .contains("more than one provider specified in a single element"));
        assert!(err("  - {}\n").contains("provider does not contain any of the expected providers"));
        assert!(
            err("  - kms: {name: x, endpoint: 'unix:///k.sock'}\n").contains("KMSv1 is deprecated")
        );
        assert!(err("  - kms: {apiVersion: v2, name: 'a:b', endpoint: 'unix:///k.sock'}\n")
            .contains(".kms.name: Invalid value: \"a:b\": invalid KMS provider name a:b, must not contain ':'"));
        assert!(err("  - kms: {apiVersion: v2, name: x, endpoint: 'tcp://k:1'}\n")
            .contains(".kms.endpoint: Invalid value: \"tcp://k:1\": unsupported scheme \"tcp\" for KMS provider, only unix is supported"));
        assert!(
            err("  - kms: {apiVersion: v2, name: x, endpoint: 'unix:///k', cachesize: 10}\n")
                .contains(".kms.cachesize: Invalid value: 10: cachesize is not supported in v2")
        );
        assert!(
            err("  - kms: {apiVersion: v2, name: x, endpoint: 'unix:///k', timeout: 0s}\n")
                .contains("timeout should be a positive value")
        );
        assert!(err("  - kms: {apiVersion: v2, name: x, endpoint: 'unix:///k'}\n  - kms: {apiVersion: v2, name: x, endpoint: 'unix:///j'}\n")
            .contains("duplicate KMS provider name x, names must be unique"));
        assert!(err("  - aesgcm: {keys: [{secret: x}]}\n")
            .contains("name is a mandatory field for a key"));
        let bad = |resources: &str| {
            parse(&format!("apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: {resources}\n  providers: [identity: {{}}]\n")).err().unwrap()
        };
        assert!(bad("['*']").contains("use '*.' to encrypt all the resources"));
        assert!(bad("[secrets, '*.']").contains("overlapping resources"));
        assert!(bad("[Secrets]").contains("capital letters"));
        assert!(bad("['events.events.k8s.io']").contains("Use 'events' instead"));
        assert!(bad("['deployments.*']").contains("across groups"));
        assert!(bad("[]").contains("at least one resources[0].resources is required"));
        assert!(parse("apiVersion: v1\nkind: Secret\n")
            .err()
            .unwrap()
            .contains("EncryptionConfiguration"));
        // An entry an earlier wildcard already covers: kube's config.go refuses it.
        let header =
            "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n";
        let two = |a: &str, b: &str| {
            parse(&format!("{header}- resources: [{a}]\n  providers: [identity: {{}}]\n- resources: [{b}]\n  providers: [identity: {{}}]\n"))
                .err()
        };
        assert_eq!(
            two("'*.*'", "secrets").unwrap(),
            "resource \"secrets\" is masked by earlier rule \"*.*\""
        );
        assert_eq!(
            two("'*.'", "configmaps").unwrap(),
            "resource \"configmaps\" is masked by earlier rule \"*.\""
        );
        assert!(
            two("secrets", "'*.*'").is_none(),
            "a wider rule later is fine"
        );
    }

    #[test]
    fn the_generated_default_encrypts_secrets_with_secretbox_and_reads_plaintext() {
        let dir = tempfile::tempdir().unwrap();
        let (t, summary) = load_or_generate(None, dir.path()).unwrap();
        assert!(summary.generated);
        let path = dir.path().join(GENERATED_FILE);
        assert_eq!(summary.path, path);
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let (_, name, fp) = &summary.writers[0];
        assert!(name.starts_with("secretbox/key-"), "{name}");
        assert!(
            fp.starts_with(&name["secretbox/key-".len()..]),
            "{name} {fp}"
        );
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            !text.contains(fp.as_str()),
            "the file holds the key, not its fingerprint"
        );
        let s = t.for_resource("", "secrets");
        let stored = s.to_storage(b"{\"data\":1}".to_vec(), "k").unwrap();
        assert!(stored.starts_with(b"k8s:enc:secretbox:v1:key-"));
        assert_eq!(s.from_storage(b"{}", "k").unwrap().0, b"{}");
        // A second start reuses it.
        let (t2, again) = load_or_generate(None, dir.path()).unwrap();
        assert!(!again.generated);
        assert_eq!(again.writers, summary.writers);
        assert!(t2
            .for_resource("", "secrets")
            .from_storage(&stored, "k")
            .is_ok());
    }
}
