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

/// A conversion an `Accept` clause asks for (`as=<Kind>;g=meta.k8s.io;v=<version>`; kube's
/// `negotiation.MediaTypeOptions.Convert`): a `Table`, or an object's or a list's metadata
/// only (`PartialObjectMetadata`, `PartialObjectMetadataList`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Convert {
    /// `Table`, `PartialObjectMetadata` or `PartialObjectMetadataList`.
    pub kind: &'static str,
    /// `meta.k8s.io/v1`, or `meta.k8s.io/v1beta1` (metadata only).
    pub api_version: &'static str,
}

/// The JSON answer an `Accept` header asks for, as kube's `NegotiateOutputMediaType` picks
/// it (`negotiation/negotiate.go`, `goautoneg` ordering by quality, then a specific type before
/// a wildcard, ties in header order):
/// the first clause with `q > 0` whose media type this server writes (`application/json`,
/// `application/*`, `*/*`) and whose `as=` is a conversion it makes for any resource
/// (`RequestScope.AllowsMediaTypeTransform`: Table in `meta.k8s.io/v1`, PartialObjectMetadata
/// and PartialObjectMetadataList in `v1` and `v1beta1`). `Some(None)`: plain JSON;
/// `Some(Some(c))`: the conversion `c`; `None`: no clause is acceptable (kube answers 406;
/// protobuf and YAML answers are not written here).
pub fn negotiate_output(headers: &HeaderMap) -> Option<Option<Convert>> {
    let Some(accept) = headers.get(header::ACCEPT).and_then(|v| v.to_str().ok()) else {
        return Some(None);
    };
    if accept.trim().is_empty() {
        return Some(None);
    }
    let mut clauses: Vec<(f32, u8, Option<Option<Convert>>)> = accept
        .split(',')
        .map(|clause| {
            let mut parts = clause.split(';').map(str::trim);
            let media = parts.next().unwrap_or("").to_ascii_lowercase();
            let (mut q, mut as_kind, mut g, mut v) = (1.0f32, None, None, None);
            for p in parts {
                let (k, val) = p.split_once('=').unwrap_or((p, ""));
                match k.trim() {
                    "q" => q = val.trim().parse().unwrap_or(0.0),
                    "as" => as_kind = Some(val.trim()),
                    "g" => g = Some(val.trim()),
                    "v" => v = Some(val.trim()),
                    _ => {}
                }
            }
            let writable = matches!(media.as_str(), JSON | "application/*" | "*/*");
            let convert = match (as_kind, g, v) {
                (None, _, _) => Some(None),
                (Some(kind), Some("meta.k8s.io"), Some(version)) => {
                    let api_version = match version {
                        "v1" => "meta.k8s.io/v1",
                        "v1beta1" => "meta.k8s.io/v1beta1",
                        _ => "",
                    };
                    let kind = match kind {
                        "Table" if version == "v1" => Some("Table"),
                        "PartialObjectMetadata" => Some("PartialObjectMetadata"),
                        "PartialObjectMetadataList" => Some("PartialObjectMetadataList"),
                        _ => None,
                    };
                    match kind {
                        Some(kind) if !api_version.is_empty() => {
                            Some(Some(Convert { kind, api_version }))
                        }
                        _ => None,
                    }
                }
                _ => None,
            };
            // goautoneg ranks a specific type before `type/*` before `*/*`.
            let specificity = match media.as_str() {
                "*/*" => 0,
                m if m.ends_with("/*") => 1,
                _ => 2,
            };
            (q, specificity, if writable { convert } else { None })
        })
        .filter(|(q, _, c)| *q > 0.0 && c.is_some())
        .collect();
    // Stable: equal quality and specificity keep the header's order.
    clauses.sort_by(|a, b| {
        b.0.partial_cmp(&a.0)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then(b.1.cmp(&a.1))
    });
    clauses
        .into_iter()
        .next()
        .map(|(_, _, c)| c.expect("filtered"))
}

#[cfg(test)]
mod tests {
    fn accept(v: &str) -> Option<Option<Convert>> {
        let mut h = HeaderMap::new();
        h.insert("accept", v.parse().unwrap());
        negotiate_output(&h)
    }

    #[test]
    fn output_negotiation_follows_clause_order_and_quality() {
        let pom = |api_version| {
            Some(Some(Convert {
                kind: "PartialObjectMetadata",
                api_version,
            }))
        };
        // client-go's metadata client (metadata.go): protobuf first, then JSON.
        assert_eq!(
            accept("application/vnd.kubernetes.protobuf;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json"),
            pom("meta.k8s.io/v1")
        );
        assert_eq!(
            accept("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1beta1"),
            pom("meta.k8s.io/v1beta1")
        );
        // kubectl's Table request: v1 first; v1beta1 Tables are not written, JSON then.
        assert_eq!(
            accept("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"),
            Some(Some(Convert { kind: "Table", api_version: "meta.k8s.io/v1" }))
        );
        assert_eq!(
            accept("application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"),
            Some(None)
        );
        // Quality first, header order among equals; q=0 refuses.
        assert_eq!(
            accept("application/json;q=0.5,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"),
            Some(Some(Convert { kind: "PartialObjectMetadataList", api_version: "meta.k8s.io/v1" }))
        );
        assert_eq!(
            accept("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1;q=0,*/*"),
            Some(None)
        );
        // A specific type before a wildcard of the same quality.
        assert_eq!(
            accept("*/*,application/json;as=Table;g=meta.k8s.io;v=v1"),
            Some(Some(Convert {
                kind: "Table",
                api_version: "meta.k8s.io/v1"
            }))
        );
        // Nothing acceptable: an unknown conversion or group, protobuf or YAML only.
        assert_eq!(accept("application/json;as=Foo;g=meta.k8s.io;v=v1"), None);
        assert_eq!(
            accept("application/json;as=PartialObjectMetadata;g=example.dev;v=v1"),
            None
        );
        assert_eq!(accept("application/vnd.kubernetes.protobuf"), None);
        assert_eq!(accept(""), Some(None));
    }

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
