//! OIDC through `--authentication-config` (issue 34 item 4): an issuer the test runs on
//! loopback over HTTPS (its own CA, a discovery document, a JWKS it can rotate) and a second
//! one, ID tokens they sign ES256, and kubectl through a kubeconfig holding the token — over
//! TLS with RBAC. The
//! claim mappings (prefixes, a groups claim), a CEL claim validation rule and a CEL user
//! validation rule, `email_verified`, audiences and expiry, a rotated key picked up on its
//! first token, and the file reloaded while the server runs.

use crate::common;

use common::oidc_issuer::{issuer_key, sign, start_issuer};
use common::server::{Backend, TestServer};
use serde_json::{json, Value};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The configuration: the first issuer as the test's main one (email, groups, the rules), a
/// second issuer mapping `sub` under `corp:` with a CEL groups expression.
fn config(issuer: &str, ca: &str, prefix: &str, second: &str) -> String {
    let ca = ca.replace('\n', "\n      ");
    format!(
        r#"apiVersion: apiserver.config.k8s.io/v1beta1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: {issuer}
    audiences: [wasm-apiserver]
    certificateAuthority: |
      {ca}
  claimMappings:
    username: {{claim: email, prefix: "{prefix}"}}
    groups: {{claim: groups, prefix: "{prefix}"}}
  claimValidationRules:
  - expression: "claims.hd == 'example.com'"
    message: the hosted domain must be example.com
  userValidationRules:
  - expression: "!user.username.startsWith('{prefix}system:')"
    message: no system users from the identity provider
- issuer:
    url: {second}
    audiences: [wasm-apiserver, other]
    audienceMatchPolicy: MatchAny
    certificateAuthority: |
      {ca}
  claimMappings:
    username: {{claim: sub, prefix: "corp:"}}
    groups: {{expression: "claims.teams.map(t, 'corp:' + t)"}}
"#
    )
}

/// `kubectl auth whoami -o json` with `token`: the user, or the failure's text.
fn whoami(s: &TestServer, token: &str) -> Result<Value, String> {
    let (ok, out) = s.kubectl_with_token(token, &["auth", "whoami", "-o", "json"]);
    if !ok {
        return Err(out);
    }
    let v: Value = serde_json::from_str(&out).map_err(|e| format!("{e}: {out}"))?;
    Ok(v["status"]["userInfo"].clone())
}

#[test]
fn kubectl_with_an_id_token_of_a_configured_issuer() {
    let (ca, cert, key) = common::conversion_webhook::certificates("oidc-test-ca");
    let k1 = issuer_key("k1");
    let jwks = Arc::new(Mutex::new(vec![k1.jwk.clone()]));
    let issuer = start_issuer(&cert, &key, jwks.clone());
    let corp_key = issuer_key("c1");
    let corp = start_issuer(
        &cert,
        &key,
        Arc::new(Mutex::new(vec![corp_key.jwk.clone()])),
    );
    let dir = tempfile::tempdir().unwrap();
    let config_path = dir.path().join("authentication.yaml");
    std::fs::write(&config_path, config(&issuer, &ca, "oidc:", &corp)).unwrap();
    let s = TestServer::start_with(
        Backend::Embedded,
        &[
            "namespaces",
            "configmaps",
            "roles",
            "clusterroles",
            "rolebindings",
            "clusterrolebindings",
        ],
        &[
            "--authorization-mode=RBAC",
            "--authentication-config",
            config_path.to_str().unwrap(),
        ],
    );
    let now = chrono::Utc::now().timestamp();
    let claims = |email: &str| {
        json!({"iss": issuer, "aud": "wasm-apiserver", "sub": "u-1", "iat": now, "exp": now + 600,
               "email": email, "email_verified": true, "groups": ["dev", "ops"],
               "hd": "example.com", "jti": "id-1"})
    };
    let token = sign(&k1, &claims("jane@example.com"));
    // The keys are fetched in the background at start.
    let started = Instant::now();
    let user = loop {
        match whoami(&s, &token) {
            Ok(u) => break u,
            Err(e) if started.elapsed() < Duration::from_secs(30) => {
                let _ = e;
                std::thread::sleep(Duration::from_millis(200));
            }
            Err(e) => panic!("never authenticated: {e}\n{}", s.log()),
        }
    };
    assert_eq!(user["username"], "oidc:jane@example.com", "{user}");
    assert_eq!(
        user["groups"],
        json!(["oidc:dev", "oidc:ops", "system:authenticated"]),
        "{user}"
    );
    assert_eq!(
        user["extra"]["authentication.kubernetes.io/credential-id"],
        json!(["JTI=id-1"]),
        "{user}"
    );
    // The second issuer: its own mappings; a token of one issuer signed with the other's key
    // is refused.
    let corp_claims = json!({"iss": corp, "aud": ["other"], "sub": "e-42", "exp": now + 600,
                             "teams": ["payments"]});
    let user = whoami(&s, &sign(&corp_key, &corp_claims)).unwrap();
    assert_eq!(user["username"], "corp:e-42", "{user}");
    assert_eq!(
        user["groups"],
        json!(["corp:payments", "system:authenticated"]),
        "{user}"
    );
    let (ok, out) = s.kubectl_with_token(&sign(&k1, &corp_claims), &["auth", "whoami"]);
    assert!(!ok && out.contains("Unauthorized"), "{out}");
    // RBAC sees the mapped user.
    let (ok, out) = s.kubectl_with_token(&token, &["get", "configmaps"]);
    assert!(
        !ok && out.contains(r#"User "oidc:jane@example.com" cannot list resource "configmaps""#),
        "{out}"
    );
    s.ok(&[
        "create",
        "clusterrolebinding",
        "devs-view",
        "--clusterrole=view",
        "--group=oidc:dev",
    ]);
    s.eventually(Duration::from_secs(10), "the binding applies", || {
        s.kubectl_with_token(&token, &["get", "configmaps"]).0
    });

    // Refused (401): the claim rule, the user rule, email_verified, audience, expiry, a key
    // the issuer never published.
    let refused = |t: &str, why: &str| {
        let (ok, out) = s.kubectl_with_token(t, &["auth", "whoami"]);
        assert!(!ok && out.contains("Unauthorized"), "{why}: {out}");
    };
    let mut c = claims("jane@example.com");
    c["hd"] = json!("elsewhere.org");
    refused(&sign(&k1, &c), "claim validation rule");
    refused(&sign(&k1, &claims("system:admin")), "user validation rule");
    let mut c = claims("jane@example.com");
    c["email_verified"] = json!(false);
    refused(&sign(&k1, &c), "email not verified");
    let mut c = claims("jane@example.com");
    c["aud"] = json!("another-cluster");
    refused(&sign(&k1, &c), "audience");
    let mut c = claims("jane@example.com");
    c["exp"] = json!(now - 3600);
    refused(&sign(&k1, &c), "expired");
    refused(
        &sign(&issuer_key("k1"), &claims("jane@example.com")),
        "a forged key with a known kid",
    );
    // The issuer rotates to a new key: its first token makes the server fetch the JWKS again.
    let k2 = issuer_key("k2");
    *jwks.lock().unwrap() = vec![k1.jwk.clone(), k2.jwk.clone()];
    std::thread::sleep(Duration::from_millis(1100));
    let user = whoami(&s, &sign(&k2, &claims("bob@example.com"))).unwrap();
    assert_eq!(user["username"], "oidc:bob@example.com", "{user}");

    // The file changes while the server runs: the new prefix applies within seconds.
    std::fs::write(&config_path, config(&issuer, &ca, "sso:", &corp)).unwrap();
    s.eventually(Duration::from_secs(15), "the reloaded prefix", || {
        whoami(&s, &token).is_ok_and(|u| u["username"] == "sso:jane@example.com")
    });
    // A broken file is refused and the last good one keeps serving.
    std::fs::write(&config_path, "apiVersion: apiserver.config.k8s.io/v1beta1\nkind: AuthenticationConfiguration\njwt:\n- issuer: {url: http://insecure}\n").unwrap();
    std::thread::sleep(Duration::from_millis(2500));
    assert_eq!(
        whoami(&s, &token).unwrap()["username"],
        "sso:jane@example.com"
    );
    assert!(
        s.log()
            .contains("authentication configuration not reloaded"),
        "{}",
        s.log()
    );
}

/// An invalid file refuses the start with kube's field errors.
#[test]
fn an_invalid_authentication_config_refuses_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("authentication.yaml");
    std::fs::write(
        &path,
        r#"apiVersion: apiserver.config.k8s.io/v1
kind: AuthenticationConfiguration
jwt:
- issuer: {url: "http://idp.example.com", audiences: [a, b]}
  claimMappings:
    username: {claim: sub}
    groups: {claim: groups, expression: "claims.groups"}
  claimValidationRules:
  - expression: "claims.hd =="
"#,
    )
    .unwrap();
    common::plugin_dir(dir.path(), &[]);
    let err = common::server::refused_start(
        dir.path(),
        &["--authentication-config".as_ref(), path.as_os_str()],
    );
    for expected in [
        r#"jwt[0].issuer.url: Invalid value: "http://idp.example.com": URL scheme must be https"#,
        r#"jwt[0].issuer.audienceMatchPolicy: Invalid value: "": audienceMatchPolicy must be MatchAny for multiple audiences"#,
        "jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing",
        r#"jwt[0].claimMappings.groups: Invalid value: "": claim and expression can't both be set"#,
        "jwt[0].claimValidationRules[0].expression: Invalid value",
    ] {
        assert!(err.contains(expected), "{expected}:\n{err}");
    }
}
