//! kube's format library (`k8s.io/apiserver/pkg/cel/library/format.go`, kube 1.31): named
//! string formats and their validation.
//!
//! - `format.named(<string>) <optional<Format>>` (none for an unknown name) and one
//!   zero-argument function per format: `format.dns1123Label()`, `format.dns1123Subdomain()`,
//!   `format.dns1035Label()`, `format.qualifiedName()`, `format.dns1123LabelPrefix()`,
//!   `format.dns1123SubdomainPrefix()`, `format.dns1035LabelPrefix()`, `format.labelValue()`,
//!   `format.uri()`, `format.uuid()`, `format.byte()`, `format.date()`, `format.datetime()`;
//! - `<Format>.validate(<string>) <optional<list<string>>>`: none when the string is valid,
//!   else kube's messages (the name formats' are apimachinery's `IsDNS1123Label` … texts).
//!
//! `uri` is Go's `url.ParseRequestURI` ([`super::urls::parse_request_uri`]) and its error
//! text. `datetime` accepts RFC 3339 date-times (strfmt also accepts a few looser layouts).

use cel::common::types::{CelList, CelOptional, CelString, Type};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};
use wasm_apiserver_apimachinery::validation::{is_qualified_name, is_valid_label_value, NameRule};

/// `kubernetes.NamedFormat`, the type of [`FormatVal`].
pub static FORMAT_TYPE: Type = Type::new_unspecified_type("kubernetes.NamedFormat");

/// A named format as a CEL value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FormatVal(pub Format);

/// kube's `ConstantFormats`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `dns1123Label`.
    Dns1123Label,
    /// `dns1123Subdomain`.
    Dns1123Subdomain,
    /// `dns1035Label`.
    Dns1035Label,
    /// `qualifiedName`.
    QualifiedName,
    /// `dns1123LabelPrefix`.
    Dns1123LabelPrefix,
    /// `dns1123SubdomainPrefix`.
    Dns1123SubdomainPrefix,
    /// `dns1035LabelPrefix`.
    Dns1035LabelPrefix,
    /// `labelValue`.
    LabelValue,
    /// `uri` (an absolute URI or path, as Go's `url.ParseRequestURI` takes it).
    Uri,
    /// `uuid`.
    Uuid,
    /// `byte` (standard base64).
    Byte,
    /// `date` (RFC 3339 full-date).
    Date,
    /// `datetime` (RFC 3339 date-time).
    Datetime,
}

impl Format {
    /// The problems with `s` in this format (empty: valid), with kube's messages.
    pub fn validate(self, s: &str) -> Vec<String> {
        let one = |ok: bool, msg: &str| if ok { vec![] } else { vec![msg.to_string()] };
        match self {
            Format::Dns1123Label => NameRule::Dns1123Label.check(s, false),
            Format::Dns1123Subdomain => NameRule::Dns1123Subdomain.check(s, false),
            Format::Dns1035Label => NameRule::Dns1035Label.check(s, false),
            Format::QualifiedName => is_qualified_name(s),
            Format::Dns1123LabelPrefix => NameRule::Dns1123Label.check(s, true),
            Format::Dns1123SubdomainPrefix => NameRule::Dns1123Subdomain.check(s, true),
            Format::Dns1035LabelPrefix => NameRule::Dns1035Label.check(s, true),
            Format::LabelValue => is_valid_label_value(s),
            Format::Uri => match super::urls::parse_request_uri(s) {
                Ok(_) => vec![],
                Err(e) => vec![format!("parse {s:?}: {e}")],
            },
            Format::Uuid => one(is_uuid(s), "does not match the UUID format"),
            Format::Byte => {
                use base64::Engine;
                let ok = base64::engine::general_purpose::STANDARD.decode(s).is_ok();
                one(ok, "invalid base64")
            }
            Format::Date => one(
                chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok() && s.len() == 10,
                "invalid date",
            ),
            Format::Datetime => one(
                chrono::DateTime::parse_from_rfc3339(s).is_ok(),
                "invalid datetime",
            ),
        }
    }
}

/// strfmt's UUID pattern: 32 hex digits in groups of 8-4-4-4-12, dashes optional.
fn is_uuid(s: &str) -> bool {
    let hex: String = s.chars().filter(|c| *c != '-').collect();
    let groups: Vec<&str> = s.split('-').collect();
    hex.len() == 32
        && hex.chars().all(|c| c.is_ascii_hexdigit())
        && (groups.len() == 1 || groups.iter().map(|g| g.len()).eq([8, 4, 4, 4, 12]))
}

super::opaque_val!(FormatVal, FORMAT_TYPE);

/// Every format by its name ([`FORMATS`]) and one zero-argument `format.<name>()` function
/// per format, from one list.
macro_rules! constant_formats {
    ($($f:ident => $name:literal, $format:expr;)*) => {
        /// kube's `ConstantFormats`: each format by the name `format.named` takes.
        const FORMATS: &[(&str, Format)] = &[$(($name, $format)),*];
        /// The zero-argument functions, `format.dns1123Label` …, by name.
        pub const FUNCTIONS: &[&str] = &[$(concat!("format.", $name)),*];
        $(
            fn $f<'b, 'v>(_: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
                Ok(CowVal::owned(FormatVal($format)))
            }
        )*
        fn register_constants(env: &mut Env) -> Result<(), DeclarationError> {
            $( env.add_overload(concat!("format.", $name), concat!("format.", $name), vec![], $f)?; )*
            Ok(())
        }
    };
}

constant_formats! {
    dns1123_label => "dns1123Label", Format::Dns1123Label;
    dns1123_subdomain => "dns1123Subdomain", Format::Dns1123Subdomain;
    dns1035_label => "dns1035Label", Format::Dns1035Label;
    qualified_name => "qualifiedName", Format::QualifiedName;
    dns1123_label_prefix => "dns1123LabelPrefix", Format::Dns1123LabelPrefix;
    dns1123_subdomain_prefix => "dns1123SubdomainPrefix", Format::Dns1123SubdomainPrefix;
    dns1035_label_prefix => "dns1035LabelPrefix", Format::Dns1035LabelPrefix;
    label_value => "labelValue", Format::LabelValue;
    uri => "uri", Format::Uri;
    uuid => "uuid", Format::Uuid;
    byte => "byte", Format::Byte;
    date => "date", Format::Date;
    datetime => "datetime", Format::Datetime;
}

/// Register the format library on `env`.
pub fn extension(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_type(FORMAT_TYPE.to_owned())?;
    register_constants(env)?;
    cel::add_overload!(env, fn named: (CelString) -> CelOptional, name = "format.named")?;
    cel::add_member_overload!(env, fn validate: (FormatVal, CelString) -> CelOptional)?;
    Ok(())
}

fn named(name: &CelString<'_>) -> CelOptional<'static> {
    match FORMATS.iter().find(|(n, _)| *n == name.inner()) {
        Some((_, f)) => CelOptional::of(Box::new(FormatVal(*f))),
        None => CelOptional::none(),
    }
}

fn validate(f: &FormatVal, s: &CelString<'_>) -> CelOptional<'static> {
    let errors = f.0.validate(s.inner());
    if errors.is_empty() {
        return CelOptional::none();
    }
    let list: Vec<Box<dyn Val>> = errors
        .into_iter()
        .map(|e| Box::new(CelString::from(e)) as Box<dyn Val>)
        .collect();
    CelOptional::of(Box::new(CelList::from(list)))
}
