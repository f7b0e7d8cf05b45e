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
/// before decoding). The parser bounds nesting (128) and alias expansion itself, but only
/// after it has tokenized the whole document, keeping state for every open collection:
/// measured, a 3 MB body of `[` cost it ~560 MB and one of `- - - …` 800 MB and minutes of
/// CPU. So nesting is bounded by [`nesting_within`] first, in one pass over the bytes. A
/// flat 3 MB YAML document still costs ~100× its size while it is converted (~290 MB; the
/// same document as JSON ~96 MB). Errors: 400 for a body that is not one YAML document or
/// nests too deeply.
pub fn decode_yaml(body: &[u8]) -> ApiResult<Value> {
    if !nesting_within(body, crate::limits::MAX_DEPTH) {
        return Err(ApiError::bad_request(format!(
            "error decoding the request body as YAML: nested deeper than the limit of {} levels",
            crate::limits::MAX_DEPTH
        )));
    }
    serde_yaml_ng::from_slice::<Value>(body)
        .map_err(|e| ApiError::bad_request(format!("error decoding the request body as YAML: {e}")))
}

/// The most columns a YAML line may be indented: block nesting is at most one level per
/// column, so this bounds it (1,024 columns are 512 levels at two spaces per level).
const MAX_YAML_INDENT: usize = 1024;

/// Whether `body`'s YAML nesting is bounded, conservatively (a document this accepts may still
/// nest too deeply for the parser's own limit; one it refuses always nests deeper than
/// `max_depth`, unless brackets stand unbalanced in plain or multi-line quoted scalars):
/// - flow collections (`[`, `{`) open at most `max_depth` deep, outside quoted scalars and
///   comments — a quote opens a scalar only where YAML starts a node (line start, after `: `,
///   `- `, `? `, or inside a flow collection after `[`, `{`, `,`) and, for this count, ends at
///   the line's end at the latest, so a quote inside a plain scalar cannot hide brackets on
///   later lines;
/// - a line starts with at most `max_depth` compact block indicators (`- - - x`);
/// - no line is indented more than [`MAX_YAML_INDENT`] columns.
pub fn nesting_within(body: &[u8], max_depth: usize) -> bool {
    let mut depth = 0usize;
    for line in body.split(|&b| b == b'\n') {
        let indent = line.iter().take_while(|&&b| b == b' ').count();
        if indent > MAX_YAML_INDENT {
            return false;
        }
        let mut i = indent;
        let mut compact = 0;
        while i + 1 < line.len() && matches!(line[i], b'-' | b'?' | b':') && line[i + 1] == b' ' {
            compact += 1;
            i += 2;
            while i < line.len() && line[i] == b' ' {
                i += 1;
            }
        }
        if compact > max_depth {
            return false;
        }
        // The last significant byte before `i` on this line (`\n`: none yet), and whether
        // blanks separate it from `i`.
        let mut last = if compact > 0 { b'-' } else { b'\n' };
        let mut blank = compact > 0;
        while i < line.len() {
            let c = line[i];
            let starts_node = last == b'\n'
                || (blank && matches!(last, b':' | b'-' | b'?'))
                || (depth > 0 && matches!(last, b'[' | b'{' | b','));
            match c {
                b' ' | b'\t' | b'\r' => {
                    blank = true;
                    i += 1;
                    continue;
                }
                b'"' if starts_node => {
                    i += 1;
                    while i < line.len() && line[i] != b'"' {
                        i += if line[i] == b'\\' { 2 } else { 1 };
                    }
                }
                b'\'' if starts_node => {
                    i += 1;
                    while i < line.len() {
                        if line[i] == b'\'' && line.get(i + 1) != Some(&b'\'') {
                            break;
                        }
                        i += if line[i] == b'\'' { 2 } else { 1 };
                    }
                }
                b'#' if blank || last == b'\n' => break,
                b'[' | b'{' => {
                    depth += 1;
                    if depth > max_depth {
                        return false;
                    }
                }
                b']' | b'}' => depth = depth.saturating_sub(1),
                _ => {}
            }
            last = c;
            blank = false;
            i += 1;
        }
    }
    true
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
    fn nesting_is_bounded_before_parsing() {
        let ok = |b: &str| nesting_within(b.as_bytes(), 3);
        assert!(ok("a: [1, {b: [2]}]"));
        assert!(!ok("a: [1, {b: [[2]]}]"));
        assert!(ok("a: \"[[[[\\\"[\"\nb: '[[''[[['\nc: 1 # [[[[\n"));
        // A quote inside a plain scalar does not hide brackets, on its line or the next.
        assert!(!ok("a: it's [[[[\n"));
        assert!(!ok("a: it's\nb: [[[[\n"));
        assert!(!ok("a: x - \"\nb: [[[[\n"));
        assert!(ok("- - - x\n"));
        assert!(!ok("- - - - x\n"));
        assert!(!ok(&format!("{}a: 1\n", " ".repeat(MAX_YAML_INDENT + 1))));
        for deep in [
            "[".repeat(101) + &"]".repeat(101),
            format!("a: it's\nb: {}", "[".repeat(200)),
            "- ".repeat(200) + "x",
        ] {
            assert!(decode_yaml(deep.as_bytes()).is_err(), "{deep:.40}");
        }
        let doc = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a # it's\n  labels: {a: \"[\"}\ndata:\n  k: |\n    [[[ text ]\n";
        assert_eq!(
            decode_yaml(doc.as_bytes()).unwrap()["data"]["k"],
            "[[[ text ]\n"
        );
    }
}
