//! Service-account tokens: bound tokens issued by the TokenRequest API and the authenticator
//! that accepts them (kube's `pkg/serviceaccount/jwt.go` — the signer and `Validate` —,
//! `claims.go` — the private `kubernetes.io` claims and their checks — and
//! `pkg/kubeapiserver/authenticator` for the user).
//!
//! Tokens are JWTs signed ES256 (ECDSA P-256 with SHA-256, `ring`) or RS256 (an RSA key, as
//! kubeadm's `sa.key`) with the key of `--service-account-signing-key-file` (the server
//! generates a P-256 `<cert-dir>/sa.key` when none is given; [`super::service_account_keys`]);
//! `kid` is kube's key id (base64url of the SHA-256 of the public key's DER). A token is
//! accepted when its signature verifies with one of the keys, its issuer is one of
//! `--service-account-issuer`, one of its audiences is one of `--api-audiences` (default: the
//! issuer), it is within `nbf`/`exp` (60 s of leeway, go-jose's), and — looked up in the store
//! — its ServiceAccount and the object it is bound to (a Secret or a Pod) still exist **with
//! the uids it names**, so a re-created object of the same name does not revive it.
//! The user: `system:serviceaccount:<ns>:<name>`, its uid, groups `system:serviceaccounts`
//! and `system:serviceaccounts:<ns>`, extra `authentication.kubernetes.io/credential-id`
//! (`JTI=<jti>`) and, when bound to a Pod, `…/pod-name` and `…/pod-uid`.
//!
//! Legacy Secret-based tokens are not issued (see the README).

use super::service_account_keys::{pem_keys, SigningKey, VerificationKey};
use super::user::UserInfo;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use ring::rand::SystemRandom;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, OnceLock};

/// kube's default issuer when none is given.
pub const DEFAULT_ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

/// The group every service account is in.
pub const ALL_SERVICE_ACCOUNTS: &str = "system:serviceaccounts";

/// go-jose's default leeway on `exp` and `nbf`.
const LEEWAY_SECONDS: i64 = 60;

/// The uid of a stored object, or `None` when it does not exist: how the authenticator looks
/// up a token's ServiceAccount and bound object (`resource` is `serviceaccounts`, `secrets`
/// or `pods`, all core/v1). Implemented over the registry by the server.
pub trait ObjectLookup: Send + Sync {
    /// The object's `metadata.uid`.
    fn uid<'a>(
        &'a self,
        resource: &'a str,
        namespace: &'a str,
        name: &'a str,
    ) -> Pin<Box<dyn Future<Output = Option<String>> + Send + 'a>>;
}

/// The object a token is bound to (`TokenRequestSpec.boundObjectRef`, resolved).
#[derive(Clone, Debug, PartialEq)]
pub struct BoundObject {
    /// `Secret` or `Pod`.
    pub kind: String,
    /// Its name.
    pub name: String,
    /// Its uid.
    pub uid: String,
}

/// What a token is issued for.
#[derive(Clone, Debug)]
pub struct TokenSpec<'a> {
    /// The ServiceAccount's namespace.
    pub namespace: &'a str,
    /// The ServiceAccount's name.
    pub name: &'a str,
    /// The ServiceAccount's uid.
    pub uid: &'a str,
    /// `aud`; empty: the API audiences.
    pub audiences: Vec<String>,
    /// Lifetime in seconds.
    pub expiration_seconds: i64,
    /// The object the token dies with.
    pub bound: Option<BoundObject>,
}

/// The signing key, the verification keys and the rules of the tokens this server accepts.
pub struct ServiceAccountTokens {
    signer: SigningKey,
    key_id: String,
    /// `kid` → verification key.
    public_keys: BTreeMap<String, VerificationKey>,
    issuers: Vec<String>,
    api_audiences: Vec<String>,
    /// `--service-account-max-token-expiration` in seconds; 0: none.
    pub max_expiration_seconds: i64,
    lookup: OnceLock<Arc<dyn ObjectLookup>>,
    rng: SystemRandom,
}

impl std::fmt::Debug for ServiceAccountTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceAccountTokens")
            .field("key_id", &self.key_id)
            .field("issuers", &self.issuers)
            .field("api_audiences", &self.api_audiences)
            .finish_non_exhaustive()
    }
}

impl ServiceAccountTokens {
    /// From the flags: the signing key file (PKCS#8 P-256), extra verification keys, issuers
    /// (the first signs; default [`DEFAULT_ISSUER`]), API audiences (default: the issuers).
    /// Errors: a key file that cannot be read or holds no usable P-256 key.
    pub fn load(
        path: &Path,
        key_files: &[std::path::PathBuf],
        issuers: &[String],
        api_audiences: &[String],
        max_expiration_seconds: i64,
    ) -> anyhow::Result<ServiceAccountTokens> {
        let rng = SystemRandom::new();
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("service account signing key {}: {e}", path.display()))?;
        let (private, _) = pem_keys(&text, &rng)
            .map_err(|e| anyhow::anyhow!("service account signing key {}: {e}", path.display()))?;
        let signer = private.into_iter().next().ok_or_else(|| {
            anyhow::anyhow!(
                "service account signing key {}: no PRIVATE KEY or RSA PRIVATE KEY",
                path.display()
            )
        })?;
        let own = signer.verification_key();
        let key_id = own.key_id();
        let mut public_keys = BTreeMap::from([(key_id.clone(), own)]);
        for f in key_files {
            let text = std::fs::read_to_string(f)
                .map_err(|e| anyhow::anyhow!("service account key {}: {e}", f.display()))?;
            let (private, public) = pem_keys(&text, &rng)
                .map_err(|e| anyhow::anyhow!("service account key {}: {e}", f.display()))?;
            let keys = private
                .iter()
                .map(SigningKey::verification_key)
                .chain(public);
            for k in keys {
                public_keys.insert(k.key_id(), k);
            }
        }
        let issuers = if issuers.is_empty() {
            vec![DEFAULT_ISSUER.to_string()]
        } else {
            issuers.to_vec()
        };
        let api_audiences = if api_audiences.is_empty() {
            issuers.clone()
        } else {
            api_audiences.to_vec()
        };
        Ok(ServiceAccountTokens {
            signer,
            key_id,
            public_keys,
            issuers,
            api_audiences,
            max_expiration_seconds,
            lookup: OnceLock::new(),
            rng,
        })
    }

    /// Where the authenticator looks up ServiceAccounts and bound objects (set once the
    /// registry exists; until then every token is refused).
    pub fn set_lookup(&self, lookup: Arc<dyn ObjectLookup>) {
        let _ = self.lookup.set(lookup);
    }

    /// The API audiences (`--api-audiences`, default the issuer).
    pub fn api_audiences(&self) -> &[String] {
        &self.api_audiences
    }

    /// The issuer tokens are signed as.
    pub fn issuer(&self) -> &str {
        &self.issuers[0]
    }

    /// Sign a token for `spec` issued at `now` (Unix seconds); the token and its expiry.
    pub fn issue(&self, spec: &TokenSpec<'_>, now: i64) -> anyhow::Result<(String, i64)> {
        let exp = now + spec.expiration_seconds;
        let audiences = if spec.audiences.is_empty() {
            self.api_audiences.clone()
        } else {
            spec.audiences.clone()
        };
        let mut private = json!({
            "namespace": spec.namespace,
            "serviceaccount": {"name": spec.name, "uid": spec.uid},
        });
        if let Some(b) = &spec.bound {
            private[b.kind.to_lowercase()] = json!({"name": b.name, "uid": b.uid});
        }
        let claims = json!({
            "aud": audiences,
            "exp": exp,
            "iat": now,
            "iss": self.issuers[0],
            "jti": uuid::Uuid::new_v4().to_string(),
            "kubernetes.io": private,
            "nbf": now,
            "sub": format!("system:serviceaccount:{}:{}", spec.namespace, spec.name),
        });
        let header = json!({"alg": self.signer.alg(), "kid": self.key_id});
        let signing_input = format!(
            "{}.{}",
            B64.encode(header.to_string()),
            B64.encode(claims.to_string())
        );
        let sig = self.signer.sign(&self.rng, signing_input.as_bytes())?;
        Ok((format!("{signing_input}.{}", B64.encode(sig)), exp))
    }

    /// The JWKS of `/openid/v1/jwks`: every verification key as a JWK (EC or RSA).
    pub fn jwks(&self) -> Value {
        let keys: Vec<Value> = self.public_keys.iter().map(|(kid, k)| k.jwk(kid)).collect();
        json!({ "keys": keys })
    }

    /// The JWS algorithms of the verification keys (the discovery document's
    /// `id_token_signing_alg_values_supported`, as kube's `getAlgs`).
    fn algorithms(&self) -> Vec<&'static str> {
        let mut algs: Vec<&'static str> = self.public_keys.values().map(|k| k.alg()).collect();
        algs.sort_unstable();
        algs.dedup();
        algs
    }

    /// `/.well-known/openid-configuration` (kube's `openidmetadata.go`), with the JWKS at
    /// `<issuer>/openid/v1/jwks`.
    pub fn openid_configuration(&self) -> Value {
        let issuer = &self.issuers[0];
        json!({
            "issuer": issuer,
            "jwks_uri": format!("{}/openid/v1/jwks", issuer.trim_end_matches('/')),
            "response_types_supported": ["id_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": self.algorithms(),
        })
    }

    /// The user of `token` at `now` (Unix seconds): `None` when it is not a JWT of an issuer
    /// this server accepts (another authenticator may know it); `Some(Err)` when it is one but
    /// does not verify or its objects are gone (why, for the log).
    pub async fn authenticate(&self, token: &str, now: i64) -> Option<Result<UserInfo, String>> {
        self.authenticate_for(token, now, &self.api_audiences).await
    }

    /// [`ServiceAccountTokens::authenticate`] for `audiences` (a TokenReview's), one of which
    /// the token must carry.
    pub async fn authenticate_for(
        &self,
        token: &str,
        now: i64,
        audiences: &[String],
    ) -> Option<Result<UserInfo, String>> {
        let mut parts = token.split('.');
        let (Some(h), Some(c), Some(s), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return None;
        };
        let decode = |p: &str| B64.decode(p).ok();
        let header: Value = serde_json::from_slice(&decode(h)?).ok()?;
        let claims: Value = serde_json::from_slice(&decode(c)?).ok()?;
        let iss = claims["iss"].as_str()?;
        if !self.issuers.iter().any(|i| i == iss) {
            return None;
        }
        Some(
            self.validate(&header, &claims, (h, c, s), now, audiences)
                .await,
        )
    }

    async fn validate(
        &self,
        header: &Value,
        claims: &Value,
        (h, c, s): (&str, &str, &str),
        now: i64,
        audiences: &[String],
    ) -> Result<UserInfo, String> {
        let alg = header["alg"].as_str().unwrap_or_default();
        if alg != "ES256" && alg != "RS256" {
            return Err(format!("unsupported signing algorithm {}", header["alg"]));
        }
        let sig = B64
            .decode(s)
            .map_err(|_| "malformed signature".to_string())?;
        let input = format!("{h}.{c}");
        let keys: Vec<&VerificationKey> = match header["kid"].as_str() {
            Some(kid) => self.public_keys.get(kid).into_iter().collect(),
            None => self.public_keys.values().collect(),
        };
        let verified = keys.iter().any(|k| k.verifies(alg, input.as_bytes(), &sig));
        if !verified {
            return Err("invalid signature".into());
        }
        let exp = claims["exp"].as_i64().ok_or("no exp claim")?;
        if now > exp + LEEWAY_SECONDS {
            return Err("service account token has expired".into());
        }
        if claims["nbf"]
            .as_i64()
            .is_some_and(|nbf| now + LEEWAY_SECONDS < nbf)
        {
            return Err("service account token is not valid yet".into());
        }
        let aud: Vec<&str> = match &claims["aud"] {
            Value::String(a) => vec![a.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !aud.iter().any(|a| audiences.iter().any(|x| x == a)) {
            return Err(format!(
                "token audiences {aud:?} is invalid for the target audiences {audiences:?}"
            ));
        }
        let k = &claims["kubernetes.io"];
        let ns = k["namespace"].as_str().ok_or("no namespace claim")?;
        let sa = &k["serviceaccount"];
        let (name, uid) = (
            sa["name"].as_str().ok_or("no serviceaccount claim")?,
            sa["uid"].as_str().unwrap_or_default(),
        );
        if claims["sub"] != format!("system:serviceaccount:{ns}:{name}") {
            return Err("the subject does not match the serviceaccount claim".into());
        }
        let lookup = self.lookup.get().ok_or("the registry is not ready")?;
        match lookup.uid("serviceaccounts", ns, name).await {
            None => return Err(format!("service account {ns}/{name} has been deleted")),
            Some(u) if u != uid => {
                return Err(format!(
                    "service account UID ({u}) does not match claim ({uid})"
                ))
            }
            Some(_) => {}
        }
        let mut extra = BTreeMap::new();
        if let Some(jti) = claims["jti"].as_str() {
            extra.insert(
                "authentication.kubernetes.io/credential-id".to_string(),
                vec![format!("JTI={jti}")],
            );
        }
        for (kind, resource) in [("secret", "secrets"), ("pod", "pods")] {
            let Some(bound) = k.get(kind) else { continue };
            let (bname, buid) = (
                bound["name"].as_str().unwrap_or_default(),
                bound["uid"].as_str().unwrap_or_default(),
            );
            match lookup.uid(resource, ns, bname).await {
                None => return Err(format!("{kind} {ns}/{bname} has been deleted")),
                Some(u) if u != buid => {
                    return Err(format!("{kind} UID ({u}) does not match claim ({buid})"))
                }
                Some(_) => {}
            }
            if kind == "pod" {
                extra.insert(
                    "authentication.kubernetes.io/pod-name".into(),
                    vec![bname.to_string()],
                );
                extra.insert(
                    "authentication.kubernetes.io/pod-uid".into(),
                    vec![buid.to_string()],
                );
            }
        }
        Ok(UserInfo {
            name: format!("system:serviceaccount:{ns}:{name}"),
            uid: uid.to_string(),
            groups: vec![
                ALL_SERVICE_ACCOUNTS.to_string(),
                format!("{ALL_SERVICE_ACCOUNTS}:{ns}"),
            ],
            extra,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Objects by `resource/namespace/name` → uid.
    struct Objects(Mutex<BTreeMap<String, String>>);

    impl ObjectLookup for Objects {
        fn uid<'a>(
            &'a self,
            resource: &'a str,
            namespace: &'a str,
            name: &'a str,
        ) -> Pin<Box<dyn Future<Output = Option<String>> + Send + 'a>> {
            let uid = self
                .0
                .lock()
                .unwrap()
                .get(&format!("{resource}/{namespace}/{name}"))
                .cloned();
            Box::pin(async move { uid })
        }
    }

    fn tokens(dir: &Path) -> (ServiceAccountTokens, Arc<Objects>) {
        let key = dir.join("sa.key");
        std::fs::write(&key, rcgen::KeyPair::generate().unwrap().serialize_pem()).unwrap();
        let t = ServiceAccountTokens::load(&key, &[], &[], &[], 0).unwrap();
        let objects = Arc::new(Objects(Mutex::new(BTreeMap::from([
            ("serviceaccounts/ns/bot".to_string(), "u-bot".to_string()),
            ("secrets/ns/anchor".to_string(), "u-anchor".to_string()),
        ]))));
        t.set_lookup(objects.clone());
        (t, objects)
    }

    fn spec(bound: Option<BoundObject>) -> TokenSpec<'static> {
        TokenSpec {
            namespace: "ns",
            name: "bot",
            uid: "u-bot",
            audiences: Vec::new(),
            expiration_seconds: 3600,
            bound,
        }
    }

    #[test]
    fn an_issued_token_authenticates_while_its_objects_exist() {
        let dir = tempfile::tempdir().unwrap();
        let (t, objects) = tokens(dir.path());
        let now = 1_800_000_000;
        let (token, exp) = t.issue(&spec(None), now).unwrap();
        assert_eq!(exp, now + 3600);
        let user = futures::executor::block_on(t.authenticate(&token, now + 10))
            .unwrap()
            .unwrap();
        assert_eq!(user.name, "system:serviceaccount:ns:bot");
        assert_eq!(user.uid, "u-bot");
        assert_eq!(
            user.groups,
            ["system:serviceaccounts", "system:serviceaccounts:ns"]
        );
        assert!(user.extra["authentication.kubernetes.io/credential-id"][0].starts_with("JTI="));
        // Expired (past the leeway), tampered, another issuer's.
        let err = futures::executor::block_on(t.authenticate(&token, exp + 61))
            .unwrap()
            .unwrap_err();
        assert_eq!(err, "service account token has expired");
        let mut parts: Vec<String> = token.split('.').map(String::from).collect();
        let mut claims: Value = serde_json::from_slice(&B64.decode(&parts[1]).unwrap()).unwrap();
        claims["kubernetes.io"]["serviceaccount"]["name"] = json!("admin");
        parts[1] = B64.encode(claims.to_string());
        let tampered = parts.join(".");
        let err = futures::executor::block_on(t.authenticate(&tampered, now))
            .unwrap()
            .unwrap_err();
        assert_eq!(err, "invalid signature");
        claims["iss"] = json!("https://elsewhere");
        parts[1] = B64.encode(claims.to_string());
        let foreign = parts.join(".");
        assert!(futures::executor::block_on(t.authenticate(&foreign, now)).is_none());
        assert!(futures::executor::block_on(t.authenticate("not-a-jwt", now)).is_none());
        // Re-created with another uid: refused.
        objects
            .0
            .lock()
            .unwrap()
            .insert("serviceaccounts/ns/bot".into(), "u-new".into());
        let err = futures::executor::block_on(t.authenticate(&token, now))
            .unwrap()
            .unwrap_err();
        assert_eq!(
            err,
            "service account UID (u-new) does not match claim (u-bot)"
        );
    }

    #[test]
    fn a_bound_token_dies_with_its_object_and_the_jwks_verifies_it() {
        let dir = tempfile::tempdir().unwrap();
        let (t, objects) = tokens(dir.path());
        let bound = BoundObject {
            kind: "Secret".into(),
            name: "anchor".into(),
            uid: "u-anchor".into(),
        };
        let (token, _) = t.issue(&spec(Some(bound)), 100).unwrap();
        assert!(futures::executor::block_on(t.authenticate(&token, 100))
            .unwrap()
            .is_ok());
        objects.0.lock().unwrap().remove("secrets/ns/anchor");
        let err = futures::executor::block_on(t.authenticate(&token, 100))
            .unwrap()
            .unwrap_err();
        assert_eq!(err, "secret ns/anchor has been deleted");
        // The JWKS point is the signing key's, under its kid.
        let jwks = t.jwks();
        let header: Value =
            serde_json::from_slice(&B64.decode(token.split('.').next().unwrap()).unwrap()).unwrap();
        assert_eq!(jwks["keys"][0]["kid"], header["kid"]);
        assert_eq!(jwks["keys"][0]["crv"], "P-256");
        assert_eq!(
            t.openid_configuration()["jwks_uri"],
            "https://kubernetes.default.svc.cluster.local/openid/v1/jwks"
        );
        // An audience the API does not accept.
        let mut other = spec(None);
        other.audiences = vec!["vault".into()];
        let (token, _) = t.issue(&other, 100).unwrap();
        assert!(futures::executor::block_on(t.authenticate(&token, 100))
            .unwrap()
            .unwrap_err()
            .starts_with("token audiences [\"vault\"] is invalid"));
    }
}
