//! kube's URL library (`k8s.io/apiserver/pkg/cel/library/urls.go`), over a port of Go's
//! `url.ParseRequestURI` (`net/url/url.go`) — what kube parses with, so what is a URL and what
//! its parts are agree with kube:
//!
//! - `url(<string>) <URL>` (`URL parse error during conversion from string: parse "…": …`),
//!   `isURL(<string>) <bool>`: an absolute URI or an absolute path, no fragment expected;
//! - `<URL>.getScheme()`, `getHost()` (with the port, IPv6 in brackets), `getHostname()`
//!   (without either), `getPort()`, `getEscapedPath()` — all `<string>`, `''` when absent;
//! - `<URL>.getQuery() <map<string, list<string>>>` (`url.ParseQuery`: pairs split at `&`,
//!   unescaped, a malformed pair skipped).

use cel::common::types::{CelBool, CelList, CelMap, CelMapKey, CelString, Type};
use cel::common::value::Val;
use cel::{DeclarationError, Env, ExecutionError};
use std::collections::HashMap;

/// `kubernetes.URL`, the type of [`UrlVal`].
pub static URL_TYPE: Type = Type::new_unspecified_type("kubernetes.URL");

/// A URL as Go's `url.URL` holds it after `ParseRequestURI`.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct UrlVal {
    scheme: String,
    /// A rootless path after the scheme (`mailto:a@b`).
    opaque: String,
    host: String,
    path: String,
    /// The path as written, when it is not the default encoding of `path`.
    raw_path: String,
    raw_query: String,
}

super::opaque_val!(UrlVal, URL_TYPE);

/// Register the URL library on `env`.
pub fn extension(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_type(URL_TYPE.to_owned())?;
    cel::add_overload!(env, fn url: (CelString) -> Result<UrlVal>)?;
    cel::add_overload!(env, fn is_url: (CelString) -> CelBool, name = "isURL")?;
    cel::add_member_overload!(env, fn get_scheme: (UrlVal) -> CelString, name = "getScheme")?;
    cel::add_member_overload!(env, fn get_host: (UrlVal) -> CelString, name = "getHost")?;
    cel::add_member_overload!(env, fn get_hostname: (UrlVal) -> CelString,
        name = "getHostname")?;
    cel::add_member_overload!(env, fn get_port: (UrlVal) -> CelString, name = "getPort")?;
    cel::add_member_overload!(env, fn get_escaped_path: (UrlVal) -> CelString,
        name = "getEscapedPath")?;
    cel::add_member_overload!(env, fn get_query: (UrlVal) -> CelMap, name = "getQuery")?;
    Ok(())
}

fn url(s: &CelString<'_>) -> Result<UrlVal, ExecutionError> {
    parse_request_uri(s.inner()).map_err(|e| {
        let message = format!(
            "URL parse error during conversion from string: parse {:?}: {e}",
            s.inner()
        );
        ExecutionError::function_error("url", message)
    })
}

fn is_url(s: &CelString<'_>) -> CelBool {
    CelBool::from(parse_request_uri(s.inner()).is_ok())
}

fn get_scheme(u: &UrlVal) -> CelString<'static> {
    CelString::from(u.scheme.clone())
}

fn get_host(u: &UrlVal) -> CelString<'static> {
    CelString::from(u.host.clone())
}

fn get_hostname(u: &UrlVal) -> CelString<'static> {
    CelString::from(split_host_port(&u.host).0.to_string())
}

fn get_port(u: &UrlVal) -> CelString<'static> {
    CelString::from(split_host_port(&u.host).1.to_string())
}

fn get_escaped_path(u: &UrlVal) -> CelString<'static> {
    CelString::from(u.escaped_path())
}

fn get_query(u: &UrlVal) -> CelMap<'static> {
    let mut query: Vec<(String, Vec<String>)> = Vec::new();
    for pair in u
        .raw_query
        .split('&')
        .filter(|p| !p.is_empty() && !p.contains(';'))
    {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let (Ok(k), Ok(v)) = (unescape(k, Mode::Query), unescape(v, Mode::Query)) else {
            continue;
        };
        match query.iter_mut().find(|(key, _)| *key == k) {
            Some((_, values)) => values.push(v),
            None => query.push((k, vec![v])),
        }
    }
    let entries: HashMap<CelMapKey<'static>, Box<dyn Val>> = query
        .into_iter()
        .map(|(k, values)| {
            let list: Vec<Box<dyn Val>> = values
                .into_iter()
                .map(|v| Box::new(CelString::from(v)) as Box<dyn Val>)
                .collect();
            (
                CelMapKey::from(k),
                Box::new(CelList::from(list)) as Box<dyn Val>,
            )
        })
        .collect();
    CelMap::from(entries)
}

impl UrlVal {
    /// Go's `URL.EscapedPath`.
    fn escaped_path(&self) -> String {
        if !self.raw_path.is_empty()
            && valid_encoded(&self.raw_path)
            && unescape(&self.raw_path, Mode::Path).as_deref() == Ok(self.path.as_str())
        {
            return self.raw_path.clone();
        }
        if self.path == "*" {
            return "*".to_string();
        }
        escape(&self.path, Mode::Path)
    }
}

/// Go's `url.ParseRequestURI`: the error's text without the `parse "…": ` prefix.
pub fn parse_request_uri(raw: &str) -> Result<UrlVal, String> {
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err("net/url: invalid control character in URL".to_string());
    }
    if raw.is_empty() {
        return Err("empty url".to_string());
    }
    let mut u = UrlVal::default();
    if raw == "*" {
        u.path = "*".to_string();
        return Ok(u);
    }
    let (scheme, rest) = split_scheme(raw)?;
    u.scheme = scheme.to_ascii_lowercase();
    let mut rest = rest;
    if rest.ends_with('?') && rest.matches('?').count() == 1 {
        rest = &rest[..rest.len() - 1];
    } else if let Some((r, q)) = rest.split_once('?') {
        rest = r;
        u.raw_query = q.to_string();
    }
    if !rest.starts_with('/') {
        if !u.scheme.is_empty() {
            // A rootless path per RFC 3986 is opaque.
            u.opaque = rest.to_string();
            return Ok(u);
        }
        return Err("invalid URI for request".to_string());
    }
    if !u.scheme.is_empty() && rest.starts_with("//") {
        let authority = &rest[2..];
        let (authority, path) = match authority.find('/') {
            Some(i) => (&authority[..i], &authority[i..]),
            None => (authority, ""),
        };
        u.host = parse_authority(authority)?;
        rest = path;
    }
    u.path = unescape(rest, Mode::Path)?;
    if escape(&u.path, Mode::Path) != rest {
        u.raw_path = rest.to_string();
    }
    Ok(u)
}

/// Go's `getScheme`: the scheme (`""` when there is none) and the rest.
fn split_scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, c) in raw.char_indices() {
        match c {
            'a'..='z' | 'A'..='Z' => {}
            '0'..='9' | '+' | '-' | '.' if i > 0 => {}
            ':' if i == 0 => return Err("missing protocol scheme".to_string()),
            ':' => return Ok((&raw[..i], &raw[i + 1..])),
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

/// Go's `parseAuthority`: the host (the user information is checked, not kept).
fn parse_authority(authority: &str) -> Result<String, String> {
    let (userinfo, host) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    let host = parse_host(host)?;
    if let Some(userinfo) = userinfo {
        let valid = userinfo
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-._:~!$&'()*+,;=%@".contains(c));
        if !valid {
            return Err("net/url: invalid userinfo".to_string());
        }
    }
    Ok(host)
}

/// Go's `parseHost` (without IPv6 zones' special unescaping).
fn parse_host(host: &str) -> Result<String, String> {
    if host.starts_with('[') {
        let Some(i) = host.rfind(']') else {
            return Err("missing ']' in host".to_string());
        };
        let port = &host[i + 1..];
        if !valid_optional_port(port) {
            return Err(format!("invalid port {port:?} after host"));
        }
    } else if let Some(i) = host.rfind(':') {
        let port = &host[i..];
        if !valid_optional_port(port) {
            return Err(format!("invalid port {port:?} after host"));
        }
    }
    unescape(host, Mode::Host)
}

fn valid_optional_port(port: &str) -> bool {
    port.is_empty() || (port.starts_with(':') && port[1..].bytes().all(|b| b.is_ascii_digit()))
}

/// Go's `splitHostPort`: host (IPv6 brackets removed) and port.
fn split_host_port(host_port: &str) -> (&str, &str) {
    let (mut host, mut port) = (host_port, "");
    if let Some(colon) = host.rfind(':') {
        if valid_optional_port(&host[colon..]) {
            (host, port) = (&host[..colon], &host[colon + 1..]);
        }
    }
    if host.starts_with('[') && host.ends_with(']') {
        host = &host[1..host.len() - 1];
    }
    (host, port)
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Path,
    Host,
    Query,
}

/// Go's `shouldEscape`.
fn should_escape(c: u8, mode: Mode) -> bool {
    if c.is_ascii_alphanumeric() {
        return false;
    }
    if mode == Mode::Host && b"!$&'()*+,;=:[]<>\"".contains(&c) {
        return false;
    }
    match c {
        b'-' | b'_' | b'.' | b'~' => false,
        b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'?' | b'@' => match mode {
            Mode::Path => c == b'?',
            _ => true,
        },
        _ => true,
    }
}

/// Go's `validEncoded` for a path.
fn valid_encoded(s: &str) -> bool {
    s.bytes()
        .all(|b| b"!$&'()*+,;=:@[]%".contains(&b) || !should_escape(b, Mode::Path))
}

/// Go's `escape` for a path: bytes that must be escaped as `%XX`.
fn escape(s: &str, mode: Mode) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if should_escape(b, mode) {
            out.push_str(&format!("%{b:02X}"));
        } else {
            out.push(b as char);
        }
    }
    out
}

/// Go's `unescape`: `%XX` decoded (`+` as a space in a query); an invalid escape, or a host
/// character that is not allowed, is an error.
fn unescape(s: &str, mode: Mode) -> Result<String, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                let Some(v) = hex else {
                    let end = (i + 3).min(s.len());
                    return Err(format!("invalid URL escape {:?}", &s[i..end]));
                };
                if mode == Mode::Host && v < 0x80 && &s[i..i + 3] != "%25" {
                    return Err(format!("invalid URL escape {:?}", &s[i..i + 3]));
                }
                out.push(v);
                i += 3;
            }
            b'+' if mode == Mode::Query => {
                out.push(b' ');
                i += 1;
            }
            b if mode == Mode::Host && b < 0x80 && should_escape(b, mode) => {
                return Err(format!("invalid character {:?} in host name", b as char));
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| "invalid UTF-8 in URL".to_string())
}
