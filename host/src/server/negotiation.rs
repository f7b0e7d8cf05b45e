//! Request body media types (`k8s.io/apiserver/pkg/endpoints/handlers/negotiation`): which
//! `Content-Type` a create or update body may have, and YAML decoding. kube-apiserver's
//! serializers accept JSON, YAML and, for built-in kinds, protobuf; any other type is 415
//! `UnsupportedMediaType` naming the accepted ones (`negotiation/errors.go`).

use crate::status::{ApiError, ApiResult};
use axum::http::{header, HeaderMap};
use serde_json::Value;

/// `application/json`, also assumed when a request has no `Content-Type`.
pub const JSON: &str = "application/json";
/// `application/yaml`.
pub const YAML: &str = "application/yaml";
/// `application/vnd.kubernetes.protobuf`.
pub const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// The media type of a request body: the `Content-Type` without parameters, lower-cased;
/// [`JSON`] when there is none (kube's input negotiation picks the first supported type).
/// A header that is not text yields a type no decoder accepts.
pub fn request_media_type(headers: &HeaderMap) -> ApiResult<String> {
    let Some(v) = headers.get(header::CONTENT_TYPE) else {
        return Ok(JSON.to_string());
    };
    let Ok(v) = v.to_str() else {
        return Ok(String::from("<binary>"));
    };
    let media = v
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    Ok(if media.is_empty() {
        JSON.to_string()
    } else {
        media
    })
}

/// The media types a resource's create and update bodies may have: JSON and YAML, and protobuf
/// for the core group (custom groups serve no protobuf, as CRDs do not).
pub fn accepted(core_group: bool) -> &'static [&'static str] {
    if core_group {
        &[JSON, YAML, PROTOBUF]
    } else {
        &[JSON, YAML]
    }
}

/// Decode a YAML document into JSON (kube converts YAML to JSON with `sigs.k8s.io/yaml`
/// before decoding). The parser bounds nesting (128) and alias expansion itself, but keeps
/// state for every open flow collection before it checks the nesting — ~180 bytes per `[` —
/// so flow nesting deeper than [`crate::limits::MAX_DEPTH`] is refused by a scan first.
/// Errors: 400 for a body that is not one YAML document or nests too deeply.
pub fn decode_yaml(body: &[u8]) -> ApiResult<Value> {
    if flow_depth(body) > crate::limits::MAX_DEPTH {
        return Err(ApiError::bad_request(format!(
            "error decoding the request body as YAML: nested deeper than the limit of {} levels",
            crate::limits::MAX_DEPTH
        )));
    }
    serde_yaml_ng::from_slice::<Value>(body)
        .map_err(|e| ApiError::bad_request(format!("error decoding the request body as YAML: {e}")))
}

/// The deepest nesting of YAML flow collections (`[`, `{`) in `body`, outside quoted scalars
/// and comments. `[` inside a plain scalar counts too, so this may over-count, never under.
fn flow_depth(body: &[u8]) -> usize {
    let (mut depth, mut deepest) = (0usize, 0usize);
    let mut i = 0;
    let mut prev = b'\n';
    while i < body.len() {
        let c = body[i];
        match c {
            b'"' => {
                i += 1;
                while i < body.len() && body[i] != b'"' {
                    i += if body[i] == b'\\' { 2 } else { 1 };
                }
            }
            b'\'' => {
                i += 1;
                while i < body.len() {
                    if body[i] == b'\'' {
                        if body.get(i + 1) == Some(&b'\'') {
                            i += 1;
                        } else {
                            break;
                        }
                    }
                    i += 1;
                }
            }
            b'#' if prev.is_ascii_whitespace() => {
                while i < body.len() && body[i] != b'\n' {
                    i += 1;
                }
            }
            b'[' | b'{' => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
        prev = c;
        i += 1;
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(ct: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        if let Some(ct) = ct {
            h.insert(header::CONTENT_TYPE, ct.parse().unwrap());
        }
        h
    }

    #[test]
    fn media_types() {
        assert_eq!(request_media_type(&headers(None)).unwrap(), JSON);
        assert_eq!(
            request_media_type(&headers(Some("Application/JSON; charset=utf-8"))).unwrap(),
            JSON
        );
        assert_eq!(
            request_media_type(&headers(Some("text/plain"))).unwrap(),
            "text/plain"
        );
    }

    #[test]
    fn yaml_becomes_json() {
        let v = decode_yaml(b"apiVersion: v1\nkind: ConfigMap\ndata:\n  a: \"1\"\n").unwrap();
        assert_eq!(v["data"]["a"], "1");
        assert!(decode_yaml(b"a: [").is_err());
        // An alias bomb is refused by the parser, not expanded.
        let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 0..12 {
            let prev = if i == 0 {
                "a".to_string()
            } else {
                format!("b{}", i - 1)
            };
            bomb.push_str(&format!(
                "b{i}: &b{i} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"
            ));
        }
        assert!(decode_yaml(bomb.as_bytes()).is_err());
    }

    #[test]
    fn flow_depth_skips_quotes_and_comments() {
        assert_eq!(flow_depth(b"a: [1, {b: [2]}]"), 3);
        assert_eq!(flow_depth(b"a: \"[[[\\\"[\"\nb: '[[''['\nc: 1 # [[[[\n"), 0);
        let deep = "[".repeat(101) + &"]".repeat(101);
        assert!(decode_yaml(deep.as_bytes()).is_err());
    }
}
