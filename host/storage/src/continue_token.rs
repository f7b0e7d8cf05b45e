//! Continue tokens, encoded exactly as kube-apiserver encodes them
//! (`k8s.io/apiserver/pkg/storage/continue.go`): `base64.RawURLEncoding` of
//! `{"v":"meta.k8s.io/v1","rv":<revision>,"start":"<next key relative to the list prefix>"}`.
//! `rv = -1` means "continue at the latest revision" (issued after the pinned revision was
//! compacted). The start key is relative, so a token cannot reach outside the prefix it is used
//! with (path traversal is refused).

use crate::errors::StorageError;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
struct Token {
    v: String,
    rv: i64,
    start: String,
}

fn invalid(detail: String, token: &str) -> StorageError {
    StorageError::Invalid {
        field: "continue".into(),
        value: token.into(),
        detail,
    }
}

/// `EncodeContinue(key, keyPrefix, rv)`: `key` (the next key to read, i.e. the last evaluated
/// key + `"\0"`) must start with `key_prefix`. Errors: it does not.
pub fn encode(key: &str, key_prefix: &str, revision: i64) -> Result<String, StorageError> {
    let Some(next) = key.strip_prefix(key_prefix) else {
        return Err(StorageError::Internal(
            "unable to encode next field: the key and key prefix do not match".into(),
        ));
    };
    let token = Token {
        v: "meta.k8s.io/v1".into(),
        rv: revision,
        start: next.into(),
    };
    Ok(URL_SAFE_NO_PAD.encode(serde_json::to_vec(&token).expect("token serializes")))
}

/// `DecodeContinue(token, keyPrefix)`: the absolute key to start from and the revision
/// (`-1` = latest). Errors (`Invalid` on field `continue`, 400 at the edge): not base64, not
/// JSON, an unknown version, `rv == 0`, an empty start key, or a start key that `path.Clean`
/// would change.
pub fn decode(token: &str, key_prefix: &str) -> Result<(String, i64), StorageError> {
    let bytes = URL_SAFE_NO_PAD
        .decode(token)
        .map_err(|e| invalid(format!("continue key is not valid: {e}"), token))?;
    let t: Token = serde_json::from_slice(&bytes)
        .map_err(|e| invalid(format!("continue key is not valid: {e}"), token))?;
    if t.v != "meta.k8s.io/v1" {
        return Err(invalid(
            format!(
                "continue key is not valid: server does not recognize this encoded version {}",
                t.v
            ),
            token,
        ));
    }
    if t.rv == 0 {
        return Err(invalid(
            "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)".into(),
            token,
        ));
    }
    if t.start.is_empty() {
        return Err(invalid(
            "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)".into(),
            token,
        ));
    }
    let key = if t.start.starts_with('/') {
        t.start.clone()
    } else {
        format!("/{}", t.start)
    };
    if clean(&key) != key {
        return Err(invalid(
            format!("continue key is not valid: {}", t.start),
            token,
        ));
    }
    Ok((format!("{key_prefix}{}", &key[1..]), t.rv))
}

/// Go's `path.Clean` for absolute paths: collapse `//`, drop `.`, resolve `..`, no trailing `/`.
fn clean(p: &str) -> String {
    let mut out: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            s => out.push(s),
        }
    }
    format!("/{}", out.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_relative_to_the_prefix() {
        let t = encode("/registry/pods/ns/b\0", "/registry/pods/", 42).unwrap();
        assert_eq!(
            decode(&t, "/registry/pods/").unwrap(),
            ("/registry/pods/ns/b\0".to_string(), 42)
        );
        // The same token applied to another resource stays inside that resource's prefix.
        assert_eq!(
            decode(&t, "/registry/widgets/").unwrap().0,
            "/registry/widgets/ns/b\0"
        );
    }

    #[test]
    fn matches_kube_apiserver_encoding() {
        // {"v":"meta.k8s.io/v1","rv":1,"start":"a\u0000"} as Go's encoding/json + RawURLEncoding
        // produce it; Go escapes NUL as \u0000, serde_json too.
        let t = encode("/p/a\0", "/p/", 1).unwrap();
        let raw = URL_SAFE_NO_PAD.decode(&t).unwrap();
        assert_eq!(
            std::str::from_utf8(&raw).unwrap(),
            r#"{"v":"meta.k8s.io/v1","rv":1,"start":"a\u0000"}"#
        );
    }

    #[test]
    fn garbage_and_traversal_are_refused() {
        for bad in [
            "%%%",
            &URL_SAFE_NO_PAD.encode("not json"),
            &URL_SAFE_NO_PAD.encode(r#"{"v":"v2","rv":1,"start":"a"}"#),
            &URL_SAFE_NO_PAD.encode(r#"{"v":"meta.k8s.io/v1","rv":0,"start":"a"}"#),
            &URL_SAFE_NO_PAD.encode(r#"{"v":"meta.k8s.io/v1","rv":1,"start":""}"#),
            &URL_SAFE_NO_PAD.encode(r#"{"v":"meta.k8s.io/v1","rv":1,"start":"../secrets/x"}"#),
        ] {
            let e = decode(bad, "/registry/pods/").unwrap_err();
            assert!(
                matches!(e, StorageError::Invalid { ref field, .. } if field == "continue"),
                "{bad}: {e}"
            );
        }
    }
}
