//! Names and values (`k8s.io/apimachinery/pkg/util/validation/validation.go`,
//! `pkg/api/validation/generic.go`): DNS-1123/DNS-1035 labels and subdomains, qualified names,
//! label values, ConfigMap keys, path segments, ports and IP addresses, and the message helpers
//! Kubernetes words them with.

/// Maximum length of a DNS-1123 label (63).
pub const DNS1123_LABEL_MAX_LENGTH: usize = 63;
/// Maximum length of a DNS-1123 subdomain (253).
pub const DNS1123_SUBDOMAIN_MAX_LENGTH: usize = 253;
/// Maximum length of a label value (63).
pub const LABEL_VALUE_MAX_LENGTH: usize = 63;
/// Maximum total size of all annotations of one object (256 KiB), `TotalAnnotationSizeLimitB`.
pub const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// Maximum length of a DNS-1035 label (63), `DNS1035LabelMaxLength`.
pub const DNS1035_LABEL_MAX_LENGTH: usize = 63;
/// Maximum length of the name part of a qualified name (63), `qualifiedNameMaxLength`.
pub const QUALIFIED_NAME_MAX_LENGTH: usize = 63;
/// Maximum length of `managedFields[*].manager` (128), `FieldManagerMaxLength`
/// (`k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go`).
pub const FIELD_MANAGER_MAX_LENGTH: usize = 128;
/// Maximum length of `managedFields[*].subresource` (256), `MaxSubresourceNameLength`.
pub const MAX_SUBRESOURCE_NAME_LENGTH: usize = 256;

/// `FieldImmutableErrorMsg` (`k8s.io/apimachinery/pkg/api/validation/objectmeta.go`).
pub const FIELD_IMMUTABLE_ERROR_MSG: &str = "field is immutable";
/// `IsNegativeErrorMsg` (`k8s.io/apimachinery/pkg/api/validation/generic.go`).
pub const IS_NEGATIVE_ERROR_MSG: &str = "must be greater than or equal to 0";
/// `metav1.FinalizerOrphanDependents`.
pub const FINALIZER_ORPHAN_DEPENDENTS: &str = "orphan";
/// `metav1.FinalizerDeleteDependents`.
pub const FINALIZER_DELETE_DEPENDENTS: &str = "foregroundDeletion";

/// How `metadata.name` is validated (`ValidateNameFunc` in kube-apiserver).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameRule {
    /// `NameIsDNSSubdomain` (most resources, e.g. configmaps, custom resources).
    Dns1123Subdomain,
    /// `NameIsDNSLabel` (e.g. namespaces).
    Dns1123Label,
    /// `NameIsDNS1035Label` (e.g. services).
    Dns1035Label,
    /// `path.IsValidPathSegmentName`: only `.`, `..`, `/` and `%` are refused.
    PathSegment,
}

impl NameRule {
    /// The rule as a `ValidateNameFunc(name, prefix)`: the problems with `name`, worded as
    /// Kubernetes does (empty = valid). With `prefix` (used for `metadata.generateName`), the
    /// name is checked as the start of a name that will get a suffix appended: the DNS rules
    /// mask a trailing `-` (`maskTrailingDash`) and the path-segment rule only refuses `/` and
    /// `%` (`IsValidPathSegmentPrefix`).
    ///
    /// Ported from `k8s.io/apimachinery/pkg/api/validation/generic.go` (`NameIsDNSSubdomain`,
    /// `NameIsDNSLabel`, `NameIsDNS1035Label`, `maskTrailingDash`) and
    /// `k8s.io/apimachinery/pkg/api/validation/path/name.go` (`ValidatePathSegmentName`).
    pub fn check(self, name: &str, prefix: bool) -> Vec<String> {
        match self {
            NameRule::PathSegment => {
                if prefix {
                    is_valid_path_segment_prefix(name)
                } else {
                    is_valid_path_segment_name(name)
                }
            }
            dns => {
                let masked;
                let name = if prefix {
                    masked = mask_trailing_dash(name);
                    masked.as_str()
                } else {
                    name
                };
                match dns {
                    NameRule::Dns1123Subdomain => is_dns1123_subdomain(name),
                    NameRule::Dns1123Label => is_dns1123_label(name),
                    _ => is_dns1035_label(name),
                }
            }
        }
    }
}

/// `maskTrailingDash` (`generic.go`): if the name ends in `-` (and is longer than one byte),
/// Kubernetes replaces the *last two* bytes with `a` (`name[:len(name)-2] + "a"`); kept as is.
fn mask_trailing_dash(name: &str) -> String {
    if name.len() > 1 && name.ends_with('-') {
        // The byte before the dash may start a multi-byte character; Go slices bytes, so do the
        // same and let the (then invalid) name fail the rule.
        let mut bytes = name.as_bytes()[..name.len() - 2].to_vec();
        bytes.push(b'a');
        String::from_utf8_lossy(&bytes).into_owned()
    } else {
        name.to_string()
    }
}

// ---------------------------------------------------------------------------------------------
// Message helpers (`k8s.io/apimachinery/pkg/util/validation/validation.go`).
// ---------------------------------------------------------------------------------------------

/// `MaxLenError`: `must be no more than N characters`.
pub fn max_len_error(length: usize) -> String {
    format!("must be no more than {length} characters")
}

/// `EmptyError`: `must be non-empty`.
pub fn empty_error() -> String {
    "must be non-empty".to_string()
}

/// `RegexError(msg, fmt, examples...)`: `msg (e.g. 'a',  or 'b', regex used for validation is
/// 'fmt')` (the double space before `or` is Kubernetes').
pub fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{msg} (regex used for validation is '{fmt}')");
    }
    let mut out = String::from(msg);
    out.push_str(" (e.g. ");
    for (i, example) in examples.iter().enumerate() {
        if i > 0 {
            out.push_str(" or ");
        }
        out.push('\'');
        out.push_str(example);
        out.push_str("', ");
    }
    out.push_str("regex used for validation is '");
    out.push_str(fmt);
    out.push_str("')");
    out
}

// ---------------------------------------------------------------------------------------------
// Hand-written matchers for the regular expressions of validation.go.
// ---------------------------------------------------------------------------------------------

const DNS1123_LABEL_FMT: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS1123_LABEL_ERR_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_ERR_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
const DNS1035_LABEL_FMT: &str = "[a-z]([-a-z0-9]*[a-z0-9])?";
const DNS1035_LABEL_ERR_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character";
const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_ERR_MSG: &str =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const LABEL_VALUE_ERR_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const CONFIG_MAP_KEY_FMT: &str = "[-._a-zA-Z0-9]+";
const CONFIG_MAP_KEY_ERR_MSG: &str =
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.'";

fn is_lower_alnum(c: u8) -> bool {
    c.is_ascii_lowercase() || c.is_ascii_digit()
}

/// `^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
fn matches_dns1123_label(s: &[u8]) -> bool {
    match (s.first(), s.last()) {
        (Some(&first), Some(&last)) => {
            is_lower_alnum(first)
                && is_lower_alnum(last)
                && s.iter().all(|&c| is_lower_alnum(c) || c == b'-')
        }
        _ => false,
    }
}

/// `^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`
fn matches_dns1123_subdomain(s: &[u8]) -> bool {
    s.split(|&c| c == b'.').all(matches_dns1123_label)
}

/// `^[a-z]([-a-z0-9]*[a-z0-9])?$`
fn matches_dns1035_label(s: &[u8]) -> bool {
    match (s.first(), s.last()) {
        (Some(&first), Some(&last)) => {
            first.is_ascii_lowercase()
                && is_lower_alnum(last)
                && s.iter().all(|&c| is_lower_alnum(c) || c == b'-')
        }
        _ => false,
    }
}

/// `^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`
fn matches_qualified_name_part(s: &[u8]) -> bool {
    match (s.first(), s.last()) {
        (Some(&first), Some(&last)) => {
            first.is_ascii_alphanumeric()
                && last.is_ascii_alphanumeric()
                && s.iter()
                    .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// `^[-._a-zA-Z0-9]+$`
fn matches_config_map_key(s: &[u8]) -> bool {
    !s.is_empty()
        && s.iter()
            .all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// `hasChDirPrefix` (`validation.go`).
fn has_chdir_prefix(value: &str) -> Vec<String> {
    if value == "." {
        vec!["must not be '.'".to_string()]
    } else if value == ".." {
        vec!["must not be '..'".to_string()]
    } else if value.starts_with("..") {
        vec!["must not start with '..'".to_string()]
    } else {
        Vec::new()
    }
}

// ---------------------------------------------------------------------------------------------
// `is_*`: k8s.io/apimachinery/pkg/util/validation/validation.go
// ---------------------------------------------------------------------------------------------

/// `IsDNS1123Label`.
///
/// Ported from `k8s.io/apimachinery/pkg/util/validation/validation.go`: at most 63 characters
/// matching `[a-z0-9]([-a-z0-9]*[a-z0-9])?`.
pub fn is_dns1123_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_LABEL_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_LABEL_MAX_LENGTH));
    }
    if !matches_dns1123_label(value.as_bytes()) {
        errs.push(regex_error(
            DNS1123_LABEL_ERR_MSG,
            DNS1123_LABEL_FMT,
            &["my-name", "123-abc"],
        ));
    }
    errs
}

/// `IsDNS1123Subdomain`.
///
/// Ported from `k8s.io/apimachinery/pkg/util/validation/validation.go`: at most 253 characters,
/// dot-separated DNS-1123 labels.
pub fn is_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    if !matches_dns1123_subdomain(value.as_bytes()) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_ERR_MSG,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

/// `IsDNS1035Label`.
///
/// Ported from `k8s.io/apimachinery/pkg/util/validation/validation.go`: at most 63 characters
/// matching `[a-z]([-a-z0-9]*[a-z0-9])?`.
pub fn is_dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1035_LABEL_MAX_LENGTH {
        errs.push(max_len_error(DNS1035_LABEL_MAX_LENGTH));
    }
    if !matches_dns1035_label(value.as_bytes()) {
        errs.push(regex_error(
            DNS1035_LABEL_ERR_MSG,
            DNS1035_LABEL_FMT,
            &["my-name", "abc-123"],
        ));
    }
    errs
}

/// `IsQualifiedName` (label keys, annotation keys, finalizer names).
///
/// Ported from `k8s.io/apimachinery/pkg/util/validation/validation.go`: an optional DNS-1123
/// subdomain prefix and `/`, then a name part of at most 63 characters matching
/// `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`. Messages are prefixed with `prefix part ` /
/// `name part ` as in Kubernetes.
pub fn is_qualified_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push(format!("prefix part {}", empty_error()));
            } else {
                errs.extend(
                    is_dns1123_subdomain(prefix)
                        .into_iter()
                        .map(|m| format!("prefix part {m}")),
                );
            }
            *name
        }
        _ => {
            errs.push(format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(QUALIFIED_NAME_ERR_MSG, QUALIFIED_NAME_FMT, &["MyName", "my.name", "123-abc"])
            ));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push(format!("name part {}", empty_error()));
    } else if name.len() > QUALIFIED_NAME_MAX_LENGTH {
        errs.push(format!(
            "name part {}",
            max_len_error(QUALIFIED_NAME_MAX_LENGTH)
        ));
    }
    if !matches_qualified_name_part(name.as_bytes()) {
        errs.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_ERR_MSG,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// `IsValidLabelValue`.
///
/// Ported from `k8s.io/apimachinery/pkg/util/validation/validation.go`: empty, or at most 63
/// characters matching `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`.
pub fn is_valid_label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > LABEL_VALUE_MAX_LENGTH {
        errs.push(max_len_error(LABEL_VALUE_MAX_LENGTH));
    }
    if !(value.is_empty() || matches_qualified_name_part(value.as_bytes())) {
        errs.push(regex_error(
            LABEL_VALUE_ERR_MSG,
            LABEL_VALUE_FMT,
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// `IsConfigMapKey`.
///
/// Ported from `k8s.io/apimachinery/pkg/util/validation/validation.go`: at most 253 characters
/// matching `[-._a-zA-Z0-9]+`, and not `.`, `..` or starting with `..`.
pub fn is_config_map_key(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX_LENGTH {
        errs.push(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH));
    }
    if !matches_config_map_key(value.as_bytes()) {
        errs.push(regex_error(
            CONFIG_MAP_KEY_ERR_MSG,
            CONFIG_MAP_KEY_FMT,
            &["key.name", "KEY_NAME", "key-name"],
        ));
    }
    errs.extend(has_chdir_prefix(value));
    errs
}

/// `IsValidPathSegmentName`: the name can be used as one segment of a URL path (or storage
/// key): it may not be `.` or `..`, nor contain `/` or `%`.
///
/// Ported from `k8s.io/apimachinery/pkg/api/validation/path/name.go`.
pub fn is_valid_path_segment_name(name: &str) -> Vec<String> {
    for illegal in [".", ".."] {
        if name == illegal {
            return vec![format!("may not be '{illegal}'")];
        }
    }
    is_valid_path_segment_prefix(name)
}

/// `IsValidPathSegmentPrefix`: like [`is_valid_path_segment_name`] for a prefix to which a
/// suffix will be appended, so `.` and `..` are allowed.
///
/// Ported from `k8s.io/apimachinery/pkg/api/validation/path/name.go`.
pub fn is_valid_path_segment_prefix(name: &str) -> Vec<String> {
    ["/", "%"]
        .iter()
        .filter(|illegal| name.contains(**illegal))
        .map(|illegal| format!("may not contain '{illegal}'"))
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Ports and IP addresses (`validation.go`, `ip.go`; `k8s.io/utils/net` `ParseIPSloppy`).
// ---------------------------------------------------------------------------------------------

/// `validation.InclusiveRangeError`.
pub fn inclusive_range_error(lo: i64, hi: i64) -> String {
    format!("must be between {lo} and {hi}, inclusive")
}

/// `validation.IsValidPortNum`.
pub fn is_valid_port_num(port: i32) -> Vec<String> {
    if (1..=65535).contains(&port) {
        Vec::new()
    } else {
        vec![inclusive_range_error(1, 65535)]
    }
}

/// `validation.IsValidPortName` (an IANA_SVC_NAME).
pub fn is_valid_port_name(port: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if port.len() > 15 {
        errs.push("must be no more than 15 characters".to_string());
    }
    if port.is_empty()
        || !port
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        errs.push(
            "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".to_string(),
        );
    }
    if !port.chars().any(|c| c.is_ascii_lowercase()) {
        errs.push("must contain at least one letter (a-z)".to_string());
    }
    if port.contains("--") {
        errs.push("must not contain consecutive hyphens".to_string());
    }
    if port.starts_with('-') || port.ends_with('-') {
        errs.push("must not begin or end with a hyphen".to_string());
    }
    errs
}

/// `netutils.ParseIPSloppy`: an IPv4 or IPv6 address, IPv4 octets may have leading zeros.
pub fn parse_ip_sloppy(value: &str) -> Option<std::net::IpAddr> {
    if let Ok(ip) = value.parse() {
        return Some(ip);
    }
    let octets: Vec<&str> = value.split('.').collect();
    if octets.len() == 4
        && octets
            .iter()
            .all(|o| !o.is_empty() && o.len() <= 3 && o.chars().all(|c| c.is_ascii_digit()))
    {
        let parts: Vec<u8> = octets
            .iter()
            .filter_map(|o| o.parse::<u16>().ok().and_then(|n| u8::try_from(n).ok()))
            .collect();
        if parts.len() == 4 {
            return Some(std::net::IpAddr::from([
                parts[0], parts[1], parts[2], parts[3],
            ]));
        }
    }
    None
}
