//! What kube-apiserver does to a `resource.Quantity` between the request body and storage, on
//! top of the SDK's parser ([`wasm_apiserver_sdk::quantity::parse`]):
//!
//! - `SetDefaults_ResourceList` (pkg/apis/core/v1/defaults.go) rounds every container resource
//!   value up to milli precision;
//! - the serializer writes the canonical form, `Quantity.String()` / `CanonicalizeBytes`
//!   (k8s.io/apimachinery/pkg/api/resource/quantity.go): `1000m` is stored as `1`, `1.5Gi` as
//!   `1536Mi`, `2000` as `2k`, `0.5` as `500m`.
//!
//! The format (DecimalSI, BinarySI, DecimalExponent) is the one the client wrote, as in
//! `ParseQuantity`.

use wasm_apiserver_sdk::quantity;
pub use wasm_apiserver_sdk::quantity::Quantity;

/// `resource.Format`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    DecimalSI,
    BinarySI,
    DecimalExponent,
}

const NANOS_PER_UNIT: i128 = 1_000_000_000;
const NANOS_PER_MILLI: i128 = 1_000_000;

/// The format of a quantity string, from its suffix (`parseQuantityString` / `interpret`).
fn format_of(s: &str) -> Option<Format> {
    let s = s.trim_start_matches(['+', '-']);
    let suffix = s.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
    match suffix {
        "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" => Some(Format::BinarySI),
        "" | "n" | "u" | "m" | "k" | "M" | "G" | "T" | "P" | "E" => Some(Format::DecimalSI),
        _ if suffix.starts_with(['e', 'E']) => Some(Format::DecimalExponent),
        _ => None,
    }
}

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

/// `Quantity.RoundUp(-3)`: round away from zero to a whole number of milli-units.
fn round_up_to_milli(nanos: i128) -> i128 {
    // 64-bit remainder when the value allows (128-bit division is a library call in wasm).
    let rem = match i64::try_from(nanos) {
        Ok(n) => i128::from(n % NANOS_PER_MILLI as i64),
        Err(_) => nanos % NANOS_PER_MILLI,
    };
    if rem == 0 {
        nanos
    } else {
        nanos - rem + nanos.signum() * NANOS_PER_MILLI
    }
}

/// The canonical string of `nanos` (units of 10^-9) in `format` (`CanonicalizeBytes`).
fn canonical(nanos: i128, format: Format) -> String {
    if nanos == 0 {
        return "0".into();
    }
    let sign = if nanos < 0 { "-" } else { "" };
    // 64-bit arithmetic when the value allows: 128-bit division is a library call inside wasm.
    let (value, suffix) = match u64::try_from(nanos.unsigned_abs()) {
        Ok(abs) => canonical_parts!(abs, u64, format),
        Err(_) => canonical_parts!(nanos.unsigned_abs(), u128, format),
    };
    format!("{sign}{value}{suffix}")
}

/// The digits and suffix of the canonical form of `abs` nanos (`AsCanonicalBytes`), computed
/// in the unsigned type `$t` (`u64` or `u128`): `(String, Cow<str>)`.
macro_rules! canonical_parts {
    ($abs:expr, $t:ty, $format:expr) => {{
        let abs: $t = $abs;
        let format: Format = $format;
        let unit = NANOS_PER_UNIT as $t;
        // BinarySI only for whole values of at least 1024 (else "DecimalSI, to avoid rounding").
        if format == Format::BinarySI && abs >= 1024 * unit && abs.is_multiple_of(unit) {
            let mut value = abs / unit;
            let mut exp = 0;
            while exp < 6 && value.is_multiple_of(1024) {
                value /= 1024;
                exp += 1;
            }
            let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][exp];
            (value.to_string(), std::borrow::Cow::Borrowed(suffix))
        } else {
            // Decimal: mantissa × 10^exponent with the exponent a multiple of 3.
            let mut mantissa = abs;
            let mut exponent: i32 = -9;
            while mantissa.is_multiple_of(1000)
                && (format == Format::DecimalExponent || exponent < 18)
            {
                mantissa /= 1000;
                exponent += 3;
            }
            let suffix: std::borrow::Cow<'static, str> = match format {
                Format::DecimalExponent if exponent == 0 => "".into(),
                Format::DecimalExponent => format!("e{exponent}").into(),
                _ => match exponent {
                    -9 => "n",
                    -6 => "u",
                    -3 => "m",
                    0 => "",
                    3 => "k",
                    6 => "M",
                    9 => "G",
                    12 => "T",
                    15 => "P",
                    _ => "E",
                }
                .into(),
            };
            (mantissa.to_string(), suffix)
        }
    }};
}
use canonical_parts;

/// The canonical form of a quantity string as kube-apiserver would serialize it; `None` when
/// the string is not a valid quantity (left for validation to report).
pub fn canonicalize(s: &str) -> Option<String> {
    let format = format_of(s)?;
    let q = quantity::parse(s).ok()?;
    Some(canonical(q.nanos, format))
}

/// `SetDefaults_ResourceList` followed by serialization: round up to milli precision, then
/// the canonical form. Invalid strings are returned unchanged.
pub fn default_resource_value(s: &str) -> String {
    match (format_of(s), quantity::parse(s)) {
        (Some(format), Ok(q)) => canonical(round_up_to_milli(q.nanos), format),
        _ => s.to_string(),
    }
}

/// The canonical string of a parsed quantity, in the format of `like` (for messages such as
/// "must be less than or equal to cpu limit of 1", which print `Quantity.String()`).
pub fn to_string(q: Quantity, like: &str) -> String {
    canonical(q.nanos, format_of(like).unwrap_or(Format::DecimalSI))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(n: i128) -> i128 {
        n
    }

    #[test]
    fn canonical_forms_match_kubernetes() {
        // (input nanos, format) -> Quantity.String()
        assert_eq!(canonical(q(1_000_000_000), Format::DecimalSI), "1");
        assert_eq!(canonical(q(1_500_000_000), Format::DecimalSI), "1500m");
        assert_eq!(canonical(q(500_000_000), Format::DecimalSI), "500m");
        assert_eq!(canonical(q(2000 * NANOS_PER_UNIT), Format::DecimalSI), "2k");
        assert_eq!(
            canonical(q(1500 * NANOS_PER_UNIT), Format::DecimalSI),
            "1500"
        );
        assert_eq!(
            canonical(q(1536 * 1024 * 1024 * NANOS_PER_UNIT), Format::BinarySI),
            "1536Mi"
        );
        assert_eq!(
            canonical(q(1024 * 1024 * 1024 * NANOS_PER_UNIT), Format::BinarySI),
            "1Gi"
        );
        assert_eq!(canonical(q(512 * NANOS_PER_UNIT), Format::BinarySI), "512");
        assert_eq!(
            canonical(q(1000 * NANOS_PER_UNIT), Format::DecimalExponent),
            "1e3"
        );
        assert_eq!(
            canonical(q(1500 * NANOS_PER_UNIT), Format::DecimalExponent),
            "1500"
        );
        assert_eq!(canonical(q(0), Format::BinarySI), "0");
        assert_eq!(canonical(q(-2 * NANOS_PER_UNIT), Format::DecimalSI), "-2");
    }

    #[test]
    fn rounding_to_milli_is_away_from_zero() {
        assert_eq!(round_up_to_milli(1), 1_000_000);
        assert_eq!(round_up_to_milli(2_000_000), 2_000_000);
        assert_eq!(round_up_to_milli(-1), -1_000_000);
    }

    #[test]
    fn formats_come_from_the_suffix() {
        assert_eq!(format_of("100m"), Some(Format::DecimalSI));
        assert_eq!(format_of("1.5Gi"), Some(Format::BinarySI));
        assert_eq!(format_of("1e3"), Some(Format::DecimalExponent));
        assert_eq!(format_of("1E"), Some(Format::DecimalSI));
        assert_eq!(format_of("12x"), None);
    }
}
