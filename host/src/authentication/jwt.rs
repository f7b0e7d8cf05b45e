//! JWT authenticators from `--authentication-config` (`AuthenticationConfiguration`,
//! `apiserver.config.k8s.io/v1`, `v1beta1`, `v1alpha1`; kube's structured authentication,
//! KEP-3331): kube's `plugin/pkg/authenticator/token/oidc/oidc.go` and the validation of
//! `pkg/apis/apiserver/validation/validation.go`.
//!
//! For each `jwt` entry: the issuer's discovery document (`<url>/.well-known/openid-
//! configuration`, or `discoveryURL`; its `issuer` must be `url`) and the JWKS it names are
//! fetched over HTTPS trusting `certificateAuthority` (else the system's roots) — at start, then
//! every 10 s until they are, again when a token names an unknown `kid` (at most once a
//! second) and every hour. A token whose `iss` is the issuer's `url` is that authenticator's: its
//! signature (RS256, ES256) verified by the JWKS, `aud` one of `audiences`, `exp` (no leeway)
//! and `nbf` (5 minutes), as go-oidc; then `claimValidationRules` (a `claim` with its `requiredValue`, or a CEL
//! `expression` over `claims` with its `message`), `claimMappings` (`username`, `groups`,
//! `uid` from a `claim` with its `prefix` or a CEL `expression`; `extra` keys from
//! `valueExpression`s; `email` as username needs `email_verified` true when present) and
//! `userValidationRules` (CEL over `user`). kube's error texts (`oidc: …`) go to the log; the
//! client sees 401.

use super::jwt_config::{ClaimRule, Mapping};
use super::service_account_keys::VerificationKey;
use super::user::UserInfo;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};
use wasm_apiserver_cel::{Expression, Value as Cel};

/// go-oidc's clock skew allowance on `nbf` (none on `exp`).
const NBF_LEEWAY_SECONDS: i64 = 300;

/// How often keys are fetched again while they could not be.
const RETRY: Duration = Duration::from_secs(10);

/// At most one fetch per this after a token names an unknown `kid` (go-oidc fetches on every
/// one; a bound keeps forged kids from making the server hammer the issuer).
const UNKNOWN_KID_REFETCH: Duration = Duration::from_secs(1);

/// How often keys are refreshed when all is well.
const REFRESH: Duration = Duration::from_secs(3600);

/// kube's `CredentialIDForJTI` extra key.
const CREDENTIAL_ID: &str = "authentication.kubernetes.io/credential-id";

/// The keys of an issuer and when they were fetched.
#[derive(Default)]
struct KeySet {
    keys: Vec<(Option<String>, VerificationKey)>,
    fetched: Option<Instant>,
    last_attempt: Option<Instant>,
    error: Option<String>,
}

/// One `jwt` entry of the configuration.
pub struct JwtAuthenticator {
    issuer: String,
    discovery_url: String,
    audiences: Vec<String>,
    client: reqwest::Client,
    keys: RwLock<KeySet>,
    /// One fetch at a time.
    fetching: tokio::sync::Mutex<()>,
    username: Mapping,
    groups: Mapping,
    uid: Mapping,
    extra: Vec<(String, String, Expression)>,
    claim_rules: Vec<ClaimRule>,
    user_rules: Vec<(String, Expression, String)>,
}

/// Every `jwt` entry of an `--authentication-config` file.
#[derive(Default)]
pub struct JwtAuthenticators {
    list: Vec<Arc<JwtAuthenticator>>,
    /// The key fetchers [`JwtAuthenticators::start`] spawned, ended with this set.
    fetchers: std::sync::Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

impl Drop for JwtAuthenticators {
    fn drop(&mut self) {
        for t in self.fetchers.lock().unwrap().drain(..) {
            t.abort();
        }
    }
}

impl std::fmt::Debug for JwtAuthenticators {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.list.iter().map(|a| &a.issuer))
            .finish()
    }
}

impl JwtAuthenticators {
    /// Read and validate `path`; `disallowed` are issuers no entry may use (the service-account
    /// issuers, as kube's `disallowedIssuers`). Errors: it cannot be read or parsed, is not an
    /// `AuthenticationConfiguration`, or fails kube's validation (every field error).
    pub fn load(path: &Path, disallowed: &[String]) -> anyhow::Result<JwtAuthenticators> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| anyhow::anyhow!("--authentication-config {}: {e}", path.display()))?;
        let config: Value = serde_yaml_ng::from_str(&text)
            .map_err(|e| anyhow::anyhow!("--authentication-config {}: {e}", path.display()))?;
        JwtAuthenticators::from_config(&config, disallowed)
            .map_err(|e| anyhow::anyhow!("--authentication-config {}: {e}", path.display()))
    }

    /// Build from a decoded configuration (see [`JwtAuthenticators::load`]).
    pub fn from_config(config: &Value, disallowed: &[String]) -> anyhow::Result<JwtAuthenticators> {
        let list = super::jwt_config::issuers(config, disallowed)?
            .into_iter()
            .map(|i| {
                Arc::new(JwtAuthenticator {
                    issuer: i.url,
                    discovery_url: i.discovery_url,
                    audiences: i.audiences,
                    client: i.client,
                    keys: RwLock::new(KeySet::default()),
                    fetching: tokio::sync::Mutex::new(()),
                    username: i.username,
                    groups: i.groups,
                    uid: i.uid,
                    extra: i.extra,
                    claim_rules: i.claim_rules,
                    user_rules: i.user_rules,
                })
            })
            .collect();
        Ok(JwtAuthenticators {
            list,
            fetchers: Default::default(),
        })
    }

    /// Fetch every issuer's keys now and keep them fresh (in the background: the server
    /// starts whether or not an issuer answers, as kube's).
    pub fn start(&self) {
        let mut fetchers = self.fetchers.lock().unwrap();
        for a in &self.list {
            let a = a.clone();
            fetchers.push(tokio::spawn(async move {
                loop {
                    let ok = a.fetch_keys(None).await;
                    tokio::time::sleep(if ok { REFRESH } else { RETRY }).await;
                }
            }));
        }
    }

    /// Wait, at most `bound`, until every issuer's keys have been fetched; whether they were.
    pub async fn ready_within(&self, bound: Duration) -> bool {
        let started = Instant::now();
        loop {
            if self
                .list
                .iter()
                .all(|a| a.keys.read().unwrap().fetched.is_some())
            {
                return true;
            }
            if started.elapsed() >= bound {
                return false;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// The issuers configured.
    pub fn issuers(&self) -> Vec<&str> {
        self.list.iter().map(|a| a.issuer.as_str()).collect()
    }

    /// The user of `token` at `now` (Unix seconds): `None` when no configured issuer is its
    /// `iss` (another authenticator may know it); `Some(Err)` with kube's reason when one is
    /// and it does not authenticate.
    pub async fn authenticate(&self, token: &str, now: i64) -> Option<Result<UserInfo, String>> {
        let iss = untrusted_issuer(token)?;
        let a = self.list.iter().find(|a| a.issuer == iss)?;
        Some(a.authenticate(token, now).await)
    }
}

/// The `iss` of a compact JWT, unverified (kube's `untrustedIssuer`).
fn untrusted_issuer(token: &str) -> Option<String> {
    let mut parts = token.split('.');
    let (_, Some(c), Some(_), None) = (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    let claims: Value = serde_json::from_slice(&B64.decode(c).ok()?).ok()?;
    let iss = claims["iss"].as_str()?;
    Some(if iss == "accounts.google.com" {
        "https://accounts.google.com".into()
    } else {
        iss.to_string()
    })
}

/// A CEL value as a string list (`convertCELValueToStringList`): a string, or a list of
/// strings.
fn string_list(v: &Cel) -> Result<Vec<String>, String> {
    match v {
        Cel::String(s) => Ok(vec![s.to_string()]),
        Cel::List(l) => l
            .iter()
            .map(|x| match x {
                Cel::String(s) => Ok(s.to_string()),
                _ => Err("expression must return a string or a list of strings".to_string()),
            })
            .collect(),
        _ => Err("expression must return a string or a list of strings".into()),
    }
}

impl JwtAuthenticator {
    /// Fetch the discovery document and the JWKS; `true` when the keys were replaced.
    /// `unless_within`: skip the fetch when one was attempted that recently (checked under the
    /// fetch lock, so requests that queued behind a fetch do not each fetch again).
    async fn fetch_keys(&self, unless_within: Option<Duration>) -> bool {
        let _one = self.fetching.lock().await;
        if let Some(min) = unless_within {
            let recent = self
                .keys
                .read()
                .unwrap()
                .last_attempt
                .is_some_and(|t| t.elapsed() < min);
            if recent {
                return false;
            }
        }
        self.keys.write().unwrap().last_attempt = Some(Instant::now());
        match self.fetch().await {
            Ok(keys) => {
                let mut k = self.keys.write().unwrap();
                k.keys = keys;
                k.fetched = Some(Instant::now());
                k.error = None;
                true
            }
            Err(e) => {
                tracing::warn!(issuer = %self.issuer, error = %e, "oidc: fetching the issuer's keys failed");
                self.keys.write().unwrap().error = Some(e);
                false
            }
        }
    }

    async fn fetch(&self) -> Result<Vec<(Option<String>, VerificationKey)>, String> {
        let get = |url: String| async move {
            let r = self
                .client
                .get(&url)
                .send()
                .await
                .map_err(|e| format!("Get {url:?}: {e}"))?;
            if !r.status().is_success() {
                return Err(format!("Get {url:?}: {}", r.status()));
            }
            r.json::<Value>()
                .await
                .map_err(|e| format!("Get {url:?}: {e}"))
        };
        let discovery = get(self.discovery_url.clone()).await?;
        let issuer = discovery["issuer"].as_str().unwrap_or("");
        if issuer != self.issuer {
            return Err(format!(
                "oidc: issuer did not match the issuer returned by provider, expected {:?} got {issuer:?}",
                self.issuer
            ));
        }
        let jwks_uri = discovery["jwks_uri"]
            .as_str()
            .ok_or("oidc: the discovery document has no jwks_uri")?;
        let jwks = get(jwks_uri.to_string()).await?;
        let keys: Vec<(Option<String>, VerificationKey)> = jwks["keys"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|k| k["use"].as_str().is_none_or(|u| u == "sig"))
            .filter_map(|k| {
                Some((
                    k["kid"].as_str().map(str::to_string),
                    VerificationKey::from_jwk(k)?,
                ))
            })
            .collect();
        if keys.is_empty() {
            return Err("oidc: the JWKS holds no RS256 or ES256 key".into());
        }
        Ok(keys)
    }

    /// Whether a signature verifies with the keys held (`None`: no key has `kid`).
    fn verify(&self, kid: Option<&str>, alg: &str, input: &[u8], sig: &[u8]) -> Option<bool> {
        let k = self.keys.read().unwrap();
        let candidates: Vec<&VerificationKey> = k
            .keys
            .iter()
            .filter(|(id, _)| kid.is_none() || id.as_deref() == kid)
            .map(|(_, key)| key)
            .collect();
        if candidates.is_empty() {
            return None;
        }
        Some(candidates.iter().any(|key| key.verifies(alg, input, sig)))
    }

    async fn authenticate(&self, token: &str, now: i64) -> Result<UserInfo, String> {
        let parts: Vec<&str> = token.split('.').collect();
        let (h, c, s) = (parts[0], parts[1], parts[2]);
        let header: Value = B64
            .decode(h)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .ok_or("oidc: verify token: malformed jwt header")?;
        let claims: Value = B64
            .decode(c)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .ok_or("oidc: verify token: malformed jwt payload")?;
        let sig = B64
            .decode(s)
            .map_err(|_| "oidc: verify token: malformed jwt signature")?;
        let alg = header["alg"].as_str().unwrap_or("");
        if alg != "RS256" && alg != "ES256" {
            return Err(format!(
                "oidc: verify token: unsupported signing alg: {alg:?}"
            ));
        }
        if self.keys.read().unwrap().fetched.is_none() {
            return Err(format!(
                "oidc: authenticator for issuer {:?} is not initialized",
                self.issuer
            ));
        }
        let kid = header["kid"].as_str();
        let input = format!("{h}.{c}");
        let mut verified = self.verify(kid, alg, input.as_bytes(), &sig);
        if verified != Some(true) {
            // An unknown key, or none of the keys verifies: the issuer may have rotated
            // (go-oidc fetches again on any failure; here at most once a second).
            if self.fetch_keys(Some(UNKNOWN_KID_REFETCH)).await {
                verified = self.verify(kid, alg, input.as_bytes(), &sig);
            }
        }
        if verified != Some(true) {
            return Err("oidc: verify token: failed to verify signature".into());
        }
        let aud: Vec<&str> = match &claims["aud"] {
            Value::String(a) => vec![a.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => Vec::new(),
        };
        if !aud.iter().any(|a| self.audiences.iter().any(|x| x == a)) {
            return Err(format!(
                "oidc: verify token: oidc: expected audience in {:?} got {aud:?}",
                self.audiences
            ));
        }
        let exp = claims["exp"]
            .as_i64()
            .ok_or("oidc: verify token: no exp claim")?;
        // go-oidc: no leeway on `exp`, five minutes on `nbf`.
        if now > exp {
            return Err(format!(
                "oidc: verify token: oidc: token is expired (Token Expiry: {exp})"
            ));
        }
        if claims["nbf"]
            .as_i64()
            .is_some_and(|nbf| now + NBF_LEEWAY_SECONDS < nbf)
        {
            return Err(
                "oidc: verify token: oidc: current time before the nbf (not before) time".into(),
            );
        }
        let name = self.username(&claims)?;
        let mut user = UserInfo {
            name,
            uid: self.uid(&claims)?,
            groups: self.groups(&claims)?,
            extra: BTreeMap::new(),
        };
        if let Some(jti) = claims["jti"].as_str() {
            user.extra
                .insert(CREDENTIAL_ID.into(), vec![format!("JTI={jti}")]);
        }
        for (key, source, e) in &self.extra {
            let v = e.evaluate(&[("claims", &claims)]).map_err(|err| {
                format!("oidc: error evaluating extra claim expression: {source}: {err}")
            })?;
            let values = string_list(&v).map_err(|err| {
                format!("oidc: error evaluating extra claim expression: {source}: {err}")
            })?;
            if !values.is_empty() {
                user.extra.insert(key.clone(), values);
            }
        }
        for rule in &self.claim_rules {
            match rule {
                ClaimRule::Required { claim, value } => match claims.get(claim) {
                    None => {
                        return Err(format!(
                            "oidc: required claim {claim} not present in ID token"
                        ))
                    }
                    Some(Value::String(got)) if got == value => {}
                    Some(Value::String(got)) => return Err(format!("oidc: required claim {claim} value does not match. Got = {got}, want = {value}")),
                    Some(_) => return Err(format!("oidc: parse claim {claim}: not a string")),
                },
                ClaimRule::Expression { source, e, message } => {
                    match e.evaluate(&[("claims", &claims)]) {
                        Ok(Cel::Bool(true)) => {}
                        Ok(Cel::Bool(false)) => return Err(format!("oidc: error evaluating claim validation expression: validation expression '{source}' failed: {message}")),
                        Ok(_) => return Err("oidc: error evaluating claim validation expression: validation expression must return a boolean".into()),
                        Err(err) => return Err(format!("oidc: error evaluating claim validation expression: {err}")),
                    }
                }
            }
        }
        if !self.user_rules.is_empty() {
            let u = serde_json::json!({"username": user.name, "uid": user.uid,
                                       "groups": user.groups, "extra": user.extra});
            for (source, e, message) in &self.user_rules {
                match e.evaluate(&[("user", &u)]) {
                    Ok(Cel::Bool(true)) => {}
                    Ok(Cel::Bool(false)) => return Err(format!("oidc: error evaluating user info validation rule: validation expression '{source}' failed: {message}")),
                    Ok(_) => return Err("oidc: error evaluating user info validation rule: validation expression must return a boolean".into()),
                    Err(err) => return Err(format!("oidc: error evaluating user info validation rule: {err}")),
                }
            }
        }
        Ok(user)
    }

    /// `getUsername`.
    fn username(&self, claims: &Value) -> Result<String, String> {
        match &self.username {
            Mapping::Expression { e, .. } => match e.evaluate(&[("claims", claims)]) {
                Ok(Cel::String(s)) if s.is_empty() => {
                    Err("oidc: empty username via CEL expression is not allowed".into())
                }
                Ok(Cel::String(s)) => Ok(s.to_string()),
                Ok(_) => Err("oidc: error evaluating username claim expression: username claim expression must return a string".into()),
                Err(err) => Err(format!("oidc: error evaluating username claim expression: {err}")),
            },
            Mapping::Claim { claim, prefix } => {
                let name = claims[claim.as_str()].as_str().ok_or_else(|| {
                    format!("oidc: parse username claims {claim:?}: not a string")
                })?;
                // A present `email_verified` must be `true` (null decodes to false in Go).
                if claim == "email" {
                    match claims.get("email_verified") {
                        None | Some(Value::Bool(true)) => {}
                        Some(Value::Bool(false) | Value::Null) => {
                            return Err("oidc: email not verified".into())
                        }
                        Some(_) => {
                            return Err("oidc: parse 'email_verified' claim: not a bool".into())
                        }
                    }
                }
                Ok(format!("{prefix}{name}"))
            }
            Mapping::None => Err("oidc: no username mapping".into()),
        }
    }

    /// `getGroups`: a claim holding a string or a list of strings, prefixed; or an expression.
    fn groups(&self, claims: &Value) -> Result<Vec<String>, String> {
        match &self.groups {
            Mapping::Claim { claim, prefix } => match &claims[claim.as_str()] {
                Value::Null => Ok(Vec::new()),
                Value::String(g) => Ok(vec![format!("{prefix}{g}")]),
                Value::Array(gs) => gs
                    .iter()
                    .map(|g| {
                        g.as_str().map(|g| format!("{prefix}{g}")).ok_or_else(|| {
                            format!("oidc: parse groups claim {claim:?}: not a string")
                        })
                    })
                    .collect(),
                _ => Err(format!(
                    "oidc: parse groups claim {claim:?}: not a string or a list"
                )),
            },
            Mapping::Expression { e, .. } => e
                .evaluate(&[("claims", claims)])
                .map_err(|err| err.to_string())
                .and_then(|v| string_list(&v))
                .map_err(|err| format!("oidc: error evaluating group claim expression: {err}")),
            Mapping::None => Ok(Vec::new()),
        }
    }

    /// `getUID`.
    fn uid(&self, claims: &Value) -> Result<String, String> {
        match &self.uid {
            Mapping::Claim { claim, .. } => claims[claim.as_str()]
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| format!("oidc: parse uid claim {claim:?}: not a string")),
            Mapping::Expression { e, .. } => match e.evaluate(&[("claims", claims)]) {
                Ok(Cel::String(s)) => Ok(s.to_string()),
                Ok(_) => Err("oidc: error evaluating uid claim expression: uid claim expression must return a string".into()),
                Err(err) => Err(format!("oidc: error evaluating uid claim expression: {err}")),
            },
            Mapping::None => Ok(String::new()),
        }
    }
}

/// The JWT authenticators in use, replaced whole when `--authentication-config` changes.
pub type SharedJwt = Arc<arc_swap::ArcSwap<JwtAuthenticators>>;

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{EcdsaKeyPair, ECDSA_P256_SHA256_FIXED_SIGNING};

    const ISSUER: &str = "https://idp.example.com";

    /// An authenticator of [`ISSUER`] holding one ES256 key, and that key's signer.
    fn authenticator(mappings: Value) -> (Arc<JwtAuthenticator>, impl Fn(&Value) -> String) {
        let config = serde_json::json!({
            "apiVersion": "apiserver.config.k8s.io/v1", "kind": "AuthenticationConfiguration",
            "jwt": [{"issuer": {"url": ISSUER, "audiences": ["k"]},
                     "claimMappings": mappings["claimMappings"],
                     "claimValidationRules": mappings["claimValidationRules"],
                     "userValidationRules": mappings["userValidationRules"]}]});
        let a = JwtAuthenticators::from_config(&config, &[]).unwrap().list[0].clone();
        let key = rcgen::KeyPair::generate().unwrap();
        let rng = ring::rand::SystemRandom::new();
        let (_, public) =
            super::super::service_account_keys::pem_keys(&key.public_key_pem(), &rng).unwrap();
        {
            let mut k = a.keys.write().unwrap();
            k.keys = vec![(Some("k".into()), public[0].clone())];
            k.fetched = Some(Instant::now());
            k.last_attempt = Some(Instant::now());
        }
        let pkcs8 = key.serialize_der();
        let sign = move |claims: &Value| {
            let rng = ring::rand::SystemRandom::new();
            let pair =
                EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &pkcs8, &rng).unwrap();
            let input = format!(
                "{}.{}",
                B64.encode(serde_json::json!({"alg": "ES256", "kid": "k"}).to_string()),
                B64.encode(claims.to_string())
            );
            let sig = pair.sign(&rng, input.as_bytes()).unwrap();
            format!("{input}.{}", B64.encode(sig.as_ref()))
        };
        (a, sign)
    }

    fn claims(extra: Value) -> Value {
        let mut c = serde_json::json!({"iss": ISSUER, "aud": ["k"], "exp": 2000, "sub": "s-1"});
        c.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        c
    }

    #[tokio::test]
    async fn cel_mappings_and_rules_give_kube_s_user_and_reasons() {
        let (a, sign) = authenticator(serde_json::json!({
            "claimMappings": {
                "username": {"expression": "claims.sub + ':' + claims.tenant"},
                "groups": {"expression": "claims.roles.map(r, 'role:' + r)"},
                "uid": {"claim": "sub"},
                "extra": [{"key": "example.com/tenant", "valueExpression": "claims.tenant"}]},
            "claimValidationRules": [{"claim": "tenant", "requiredValue": "acme"}],
            "userValidationRules": [{"expression": "user.groups.size() > 0", "message": "no roles"}]}));
        let user = a
            .authenticate(
                &sign(&claims(
                    serde_json::json!({"tenant": "acme", "roles": ["a", "b"]}),
                )),
                1000,
            )
            .await
            .unwrap();
        assert_eq!(user.name, "s-1:acme");
        assert_eq!(user.uid, "s-1");
        assert_eq!(user.groups, ["role:a", "role:b"]);
        assert_eq!(user.extra["example.com/tenant"], ["acme"]);
        let reason = |extra: Value, now: i64| {
            let token = sign(&claims(extra));
            let a = a.clone();
            async move { a.authenticate(&token, now).await.unwrap_err() }
        };
        assert_eq!(
            reason(serde_json::json!({"tenant": "other", "roles": ["a"]}), 1000).await,
            "oidc: required claim tenant value does not match. Got = other, want = acme"
        );
        assert_eq!(
            reason(serde_json::json!({"tenant": "acme", "roles": []}), 1000).await,
            "oidc: error evaluating user info validation rule: validation expression 'user.groups.size() > 0' failed: no roles"
        );
        assert_eq!(
            reason(serde_json::json!({"tenant": "acme", "roles": ["a"]}), 3000).await,
            "oidc: verify token: oidc: token is expired (Token Expiry: 2000)"
        );
        assert!(reason(serde_json::json!({"roles": ["a"]}), 1000)
            .await
            .starts_with("oidc: error evaluating username claim expression:"),);
    }

    #[test]
    fn email_as_username_in_cel_needs_email_verified() {
        let config = serde_json::json!({
            "apiVersion": "apiserver.config.k8s.io/v1", "kind": "AuthenticationConfiguration",
            "jwt": [{"issuer": {"url": ISSUER, "audiences": ["k"]},
                     "claimMappings": {"username": {"expression": "claims.email"}}}]});
        let err = JwtAuthenticators::from_config(&config, &[])
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("claims.email_verified must be used in claimMappings.username.expression"),
            "{err}"
        );
        // The service-account issuer is not an OIDC issuer's (kube's disallowed issuers).
        let err = JwtAuthenticators::from_config(&config, &[ISSUER.to_string()])
            .err()
            .unwrap()
            .to_string();
        assert!(
            err.contains("URL must not overlap with disallowed issuers: [https://idp.example.com]"),
            "{err}"
        );
    }
}
