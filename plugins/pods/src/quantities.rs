//! What kube-apiserver does to a `resource.Quantity` between the request body and storage, on
//! top of apimachinery's parser and canonical form ([`wasm_apiserver_sdk::quantity`]):
//!
//! - `SetDefaults_ResourceList` (pkg/apis/core/v1/defaults.go) rounds every container resource
//!   value up to milli precision;
//! - the serializer writes the canonical form in the format the client wrote.

pub use wasm_apiserver_sdk::quantity::Quantity;
use wasm_apiserver_sdk::quantity::{self, format_of, Format};

/// Whether the suffix of `s` is one `ParseQuantity` knows (the check [`parse`] adds to the
/// SDK's parser).
pub fn has_known_format(s: &str) -> bool {
    format_of(s).is_some()
}

/// Parse a quantity string; `None` when it is not a valid quantity.
pub fn parse(s: &str) -> Option<Quantity> {
    format_of(s)?;
    quantity::parse(s).ok()
}

/// The canonical form of a quantity string as kube-apiserver would serialize it; `None` when
/// the string is not a valid quantity (left for validation to report).
pub fn canonicalize(s: &str) -> Option<String> {
    let format = format_of(s)?;
    Some(quantity::parse(s).ok()?.canonical(format))
}

/// `SetDefaults_ResourceList` followed by serialization: round up to milli precision, then
/// the canonical form. Invalid strings are returned unchanged.
pub fn default_resource_value(s: &str) -> String {
    match (format_of(s), quantity::parse(s)) {
        (Some(format), Ok(q)) => q.round_up_to_milli().canonical(format),
        _ => s.to_string(),
    }
}

/// The canonical string of a parsed quantity, in the format of `like` (for messages such as
/// "must be less than or equal to cpu limit of 1", which print `Quantity.String()`).
pub fn to_string(q: Quantity, like: &str) -> String {
    q.canonical(format_of(like).unwrap_or(Format::DecimalSI))
}
