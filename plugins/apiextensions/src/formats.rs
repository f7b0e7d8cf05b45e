//! The string formats kube validates custom resources against: kube-openapi's default
//! `strfmt` registry (`k8s.io/kube-openapi/pkg/validation/strfmt/default.go`). A format not
//! listed is not checked, as kube-openapi ignores formats it does not know.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// Whether `s` is valid in `format`.
pub fn is_valid(format: &str, s: &str) -> bool {
    match format {
        "byte" => {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD.decode(s).is_ok()
        }
        "date" => chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok() && s.len() == 10,
        "date-time" | "datetime" => chrono::DateTime::parse_from_rfc3339(s).is_ok(),
        "duration" => wasm_apiserver_apimachinery::duration::parse_strfmt_duration(s).is_some(),
        "email" => is_email(s),
        "hostname" => is_hostname(s),
        "ipv4" => s.parse::<Ipv4Addr>().is_ok(),
        "ipv6" => s.parse::<Ipv6Addr>().is_ok(),
        "cidr" => is_cidr(s),
        "mac" => is_mac(s),
        "uuid" => is_uuid(s, None),
        "uuid3" => is_uuid(s, Some('3')),
        "uuid4" => is_uuid(s, Some('4')),
        "uuid5" => is_uuid(s, Some('5')),
        "uri" => is_uri(s),
        _ => true,
    }
}

/// An address `local@domain` (strfmt checks with Go's `mail.ParseAddress`; this is its
/// plain-address subset).
fn is_email(s: &str) -> bool {
    match s.rsplit_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && !domain.is_empty()
                && !s.chars().any(|c| c.is_whitespace() || c == '<' || c == '>')
                && !domain.starts_with('.')
                && !domain.ends_with('.')
        }
        None => false,
    }
}

/// strfmt's `rxHostname`: dot-separated labels of letters, digits and inner dashes, each at
/// most 63 characters, at most 255 in all.
fn is_hostname(s: &str) -> bool {
    s.len() <= 255
        && !s.is_empty()
        && s.split('.').all(|label| {
            !label.is_empty()
                && label.chars().count() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.chars().all(|c| c.is_alphanumeric() || c == '-')
        })
}

/// Go's `net.ParseCIDR`.
fn is_cidr(s: &str) -> bool {
    let Some((ip, bits)) = s.split_once('/') else {
        return false;
    };
    let Ok(ip) = ip.parse::<IpAddr>() else {
        return false;
    };
    let max = if ip.is_ipv4() { 32 } else { 128 };
    !bits.is_empty()
        && bits.len() <= 3
        && bits.bytes().all(|b| b.is_ascii_digit())
        && bits.parse::<u32>().is_ok_and(|b| b <= max)
}

/// Go's `net.ParseMAC`: 6, 8 or 20 bytes as `xx:xx…`, `xx-xx…` or `xxxx.xxxx…`.
fn is_mac(s: &str) -> bool {
    let hex = |p: &str, n: usize| p.len() == n && p.bytes().all(|b| b.is_ascii_hexdigit());
    let bytes = if s.contains('.') {
        let groups: Vec<&str> = s.split('.').collect();
        if !groups.iter().all(|g| hex(g, 4)) {
            return false;
        }
        groups.len() * 2
    } else {
        let sep = if s.contains(':') { ':' } else { '-' };
        let groups: Vec<&str> = s.split(sep).collect();
        if !groups.iter().all(|g| hex(g, 2)) {
            return false;
        }
        groups.len()
    };
    matches!(bytes, 6 | 8 | 20)
}

/// strfmt's UUID patterns: 8-4-4-4-12 hex digits; `version`'s digit where a versioned UUID
/// has it (and the variant 8, 9, a or b).
fn is_uuid(s: &str, version: Option<char>) -> bool {
    let groups: Vec<&str> = s.split('-').collect();
    let shape = groups.len() == 5
        && groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12])
        && groups
            .iter()
            .all(|g| g.bytes().all(|b| b.is_ascii_hexdigit()));
    match version {
        None => shape,
        Some(v) => {
            shape
                && groups[2].starts_with(v)
                && groups[3]
                    .chars()
                    .next()
                    .is_some_and(|c| "89abAB".contains(c))
        }
    }
}

/// strfmt's `uri`: Go's `url.Parse` succeeds — a scheme-less reference too; what fails is
/// a control character, a bad escape, a bad port or a missing `]`.
fn is_uri(s: &str) -> bool {
    !s.bytes().any(|b| b < 0x20 || b == 0x7f)
        && s.split('%')
            .skip(1)
            .all(|rest| rest.len() >= 2 && rest.as_bytes()[..2].iter().all(u8::is_ascii_hexdigit))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_accept_and_refuse_as_strfmt() {
        for (format, good, bad) in [
            ("byte", "aGk=", "not base64!"),
            ("date", "2024-01-31", "2024-1-31"),
            ("date-time", "2024-01-31T10:00:00Z", "2024-01-31"),
            ("duration", "1h30m", "an hour"),
            ("email", "a@b.c", "a.b.c"),
            ("hostname", "a-b.example.com", "-a.example.com"),
            ("ipv4", "10.0.0.1", "10.0.0.256"),
            ("ipv6", "::1", "10.0.0.1"),
            ("cidr", "10.0.0.0/8", "10.0.0.0/33"),
            ("mac", "01:23:45:67:89:ab", "01:23:45"),
            ("uuid", "123e4567-e89b-12d3-a456-426614174000", "123e4567"),
            (
                "uuid4",
                "123e4567-e89b-42d3-a456-426614174000",
                "123e4567-e89b-12d3-a456-426614174000",
            ),
            (
                "uri",
                "https://example.com/a%20b",
                "https://example.com/%zz",
            ),
        ] {
            assert!(is_valid(format, good), "{format}: {good}");
            assert!(!is_valid(format, bad), "{format}: {bad}");
        }
        assert!(is_valid("something-else", "anything"));
    }
}
