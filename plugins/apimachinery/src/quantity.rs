//! `resource.Quantity` parsing and comparison (k8s.io/apimachinery/pkg/api/resource/quantity.go),
//! enough for validation (requests ≤ limits) and QoS computation.
//!
//! Ported from `ParseQuantity` / `parseQuantityString` in
//! `k8s.io/apimachinery/pkg/api/resource/quantity.go` and the suffix table of `suffix.go`:
//!
//! ```text
//! <quantity>        ::= <signedNumber><suffix>
//! <signedNumber>    ::= <number> | <sign><number>
//! <number>          ::= <digits> | <digits>.<digits> | <digits>. | .<digits>
//! <suffix>          ::= <binarySI> | <decimalExponent> | <decimalSI>
//! <binarySI>        ::= Ki | Mi | Gi | Ti | Pi | Ei
//! <decimalSI>       ::= n | u | m | "" | k | M | G | T | P | E
//! <decimalExponent> ::= "e" <signedNumber> | "E" <signedNumber>
//! ```
//!
//! The value is kept as an `i128` count of nano-units. As in Kubernetes, a value with digits
//! below nano precision is rounded *up in magnitude* (away from zero: `0.1n` → `1n`, `-0.1n` →
//! `-1n`, `inf.RoundUp`), and a binary-SI value is capped at 2^63-1 (`8Ei` → 2^63-1).
//!
//! The canonical form (`Quantity.String()` / `CanonicalizeBytes`) is
//! [`Quantity::canonical`] in the [`Format`] the string was written in ([`format_of`]).
//!
//! Differences from Go: a [`Quantity`] does not remember its format (callers keep it); values beyond ±(2^127-1) nanos (about ±1.7×10^29, e.g. `1e30`), which
//! Go's arbitrary-precision `inf.Dec` can still hold, saturate at `i128::MAX` / `i128::MIN`.

use std::cmp::Ordering;
use std::ops::{Add, AddAssign, Sub};
use std::str::FromStr;

/// A parsed quantity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Quantity {
    /// The value in units of 10^-9, rounded up (as Kubernetes rounds up below nano precision).
    pub nanos: i128,
}

/// The regular expression Kubernetes quotes in syntax errors (`splitREString`).
pub const SPLIT_RE: &str = "^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$";
/// `ErrFormatWrong`: the string does not have the shape of a quantity.
pub const ERR_FORMAT_WRONG: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
/// `ErrNumeric`: the numeric part has no digits where Kubernetes needs some (e.g. `.Ei`).
pub const ERR_NUMERIC: &str = "unable to parse numeric part of quantity";
/// `ErrSuffix`: the suffix has the right characters but is not one of the known suffixes
/// (e.g. `1Gm`, `1e`).
pub const ERR_SUFFIX: &str = "unable to parse quantity's suffix";

const NANOS_PER_UNIT: i128 = 1_000_000_000;
/// `maxAllowed` (2^63-1 units) in nanos: the cap Kubernetes applies to binary-SI values.
const MAX_ALLOWED_NANOS: i128 = (i64::MAX as i128) * NANOS_PER_UNIT;
/// `maxInt64Factors`: decimal digits that always fit an int64.
const MAX_INT64_FACTORS: i64 = 18;

impl Quantity {
    /// A quantity of `nanos` × 10^-9.
    pub const fn from_nanos(nanos: i128) -> Quantity {
        Quantity { nanos }
    }

    /// `Quantity.IsZero`.
    pub fn is_zero(&self) -> bool {
        self.nanos == 0
    }

    /// `Quantity.Sign`: -1, 0 or 1.
    pub fn signum(&self) -> i32 {
        match self.nanos.cmp(&0) {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        }
    }
}

/// `Quantity.Add` (saturating at the bounds of the `i128` representation).
impl Add for Quantity {
    type Output = Quantity;
    fn add(self, rhs: Quantity) -> Quantity {
        Quantity {
            nanos: self.nanos.saturating_add(rhs.nanos),
        }
    }
}

impl AddAssign for Quantity {
    fn add_assign(&mut self, rhs: Quantity) {
        *self = *self + rhs;
    }
}

/// `Quantity.Sub` (saturating).
impl Sub for Quantity {
    type Output = Quantity;
    fn sub(self, rhs: Quantity) -> Quantity {
        Quantity {
            nanos: self.nanos.saturating_sub(rhs.nanos),
        }
    }
}

impl std::iter::Sum for Quantity {
    fn sum<I: Iterator<Item = Quantity>>(iter: I) -> Quantity {
        iter.fold(Quantity::default(), Add::add)
    }
}

/// `resource.ParseQuantity`, see [`parse`].
impl FromStr for Quantity {
    type Err = String;
    fn from_str(s: &str) -> Result<Quantity, String> {
        parse(s)
    }
}

/// Parse the string of a `k8s_openapi` quantity (e.g. a container's `resources.limits["cpu"]`).
impl TryFrom<&k8s_openapi::apimachinery::pkg::api::resource::Quantity> for Quantity {
    type Error = String;
    fn try_from(
        q: &k8s_openapi::apimachinery::pkg::api::resource::Quantity,
    ) -> Result<Quantity, String> {
        parse(&q.0)
    }
}

/// The pieces `parseQuantityString` cuts a quantity into.
struct Pieces<'a> {
    positive: bool,
    /// The signed number as written (`str[0:pos]`), what the slow path parses.
    value: &'a str,
    /// Integer digits without leading zeros (`"0"` if there are none).
    num: &'a str,
    /// Fraction digits.
    denom: &'a str,
    suffix: &'a str,
}

/// `parseQuantityString`: a scanner for `^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$` (with
/// Kubernetes' quirks: `+`, `-`, `.` and `5.` are numbers; a lone suffix like `Ki` has the number
/// `0`).
fn parse_quantity_string(s: &str) -> Result<Pieces<'_>, String> {
    let b = s.as_bytes();
    let end = b.len();
    let mut pos = 0;
    let mut positive = true;

    // Leading sign.
    if pos < end {
        match b[0] {
            b'-' => {
                positive = false;
                pos += 1;
            }
            b'+' => pos += 1,
            _ => {}
        }
    }

    // Leading zeros; nothing but zeros is the number 0.
    loop {
        if pos >= end {
            return Ok(Pieces {
                positive,
                value: "0",
                num: "0",
                denom: "",
                suffix: "",
            });
        }
        if b[pos] != b'0' {
            break;
        }
        pos += 1;
    }

    // Numerator.
    let start = pos;
    let mut i = pos;
    while i < end && b[i].is_ascii_digit() {
        i += 1;
    }
    if i >= end {
        return Ok(Pieces {
            positive,
            value: s,
            num: &s[start..],
            denom: "",
            suffix: "",
        });
    }
    let mut num = &s[start..i];
    pos = i;
    if num.is_empty() {
        num = "0";
    }

    // Denominator (`1.` is accepted, as in Kubernetes).
    let mut denom = "";
    if b[pos] == b'.' {
        pos += 1;
        let dstart = pos;
        let mut i = pos;
        while i < end && b[i].is_ascii_digit() {
            i += 1;
        }
        if i >= end {
            return Ok(Pieces {
                positive,
                value: s,
                num,
                denom: &s[dstart..],
                suffix: "",
            });
        }
        denom = &s[dstart..i];
        pos = i;
    }
    let value = &s[..pos];

    // Suffix: letters of [eEinumkKMGTP]*, then an optional sign and digits.
    let suffix_start = pos;
    let mut i = pos;
    while i < end && b"eEinumkKMGTP".contains(&b[i]) {
        i += 1;
    }
    if i >= end {
        return Ok(Pieces {
            positive,
            value,
            num,
            denom,
            suffix: &s[suffix_start..],
        });
    }
    pos = i;
    if b[pos] == b'-' || b[pos] == b'+' {
        pos += 1;
    }
    if b[pos..].iter().all(u8::is_ascii_digit) {
        return Ok(Pieces {
            positive,
            value,
            num,
            denom,
            suffix: &s[suffix_start..],
        });
    }
    Err(ERR_FORMAT_WRONG.to_string())
}

/// `resource.Format`: how a quantity was written, which its canonical form keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// `e`/`E` exponents (`1e3`).
    DecimalExponent,
    /// Powers of two (`Ki` … `Ei`).
    BinarySI,
    /// Powers of ten (`n` … `E`, and no suffix).
    DecimalSI,
}

/// `quantitySuffixer.interpret`: (base, exponent, format).
fn interpret_suffix(suffix: &str) -> Option<(u32, i32, Format)> {
    let dec = |e| Some((10, e, Format::DecimalSI));
    let bin = |e| Some((2, e, Format::BinarySI));
    match suffix {
        "" => dec(0),
        "n" => dec(-9),
        "u" => dec(-6),
        "m" => dec(-3),
        "k" => dec(3),
        "M" => dec(6),
        "G" => dec(9),
        "T" => dec(12),
        "P" => dec(15),
        "E" => dec(18),
        "Ki" => bin(10),
        "Mi" => bin(20),
        "Gi" => bin(30),
        "Ti" => bin(40),
        "Pi" => bin(50),
        "Ei" => bin(60),
        _ => {
            let rest = suffix.strip_prefix(['e', 'E'])?;
            // strconv.ParseInt(s, 10, 64), then Go's int32() conversion (which wraps).
            let parsed: i64 = rest.parse().ok()?;
            Some((10, parsed as i32, Format::DecimalExponent))
        }
    }
}

/// Parse a quantity such as `100m`, `1.5Gi`, `2e3`, `128974848`.
///
/// Ported from `ParseQuantity` in `k8s.io/apimachinery/pkg/api/resource/quantity.go`. Errors
/// carry Kubernetes' messages: [`ERR_FORMAT_WRONG`] for syntax errors (`""`, `abc`, `1.2.3`,
/// `1Gb`), [`ERR_SUFFIX`] for an unknown suffix made of suffix letters (`1Gm`, `1e`) and
/// [`ERR_NUMERIC`] where Kubernetes fails to parse a digit-less number (`.Ei`, `Pi`).
pub fn parse(s: &str) -> Result<Quantity, String> {
    if s.is_empty() {
        return Err(ERR_FORMAT_WRONG.to_string());
    }
    if s == "0" {
        return Ok(Quantity::default());
    }
    let p = parse_quantity_string(s)?;
    let (base, exponent, format) =
        interpret_suffix(p.suffix).ok_or_else(|| ERR_SUFFIX.to_string())?;

    // Go takes an int64 fast path when the digits surely fit; otherwise it parses `value` with
    // inf.Dec, which needs at least one digit. Only that failure is observable: the arithmetic
    // below is exact either way.
    let digit_count = (p.num.len() + p.denom.len()) as i64;
    let (scale, precision) = match format {
        Format::DecimalExponent | Format::DecimalSI => {
            (exponent as i64, MAX_INT64_FACTORS - digit_count)
        }
        Format::BinarySI if p.denom.is_empty() => {
            (0, 15 - p.num.len() as i64 - (exponent as i64 * 3 / 10) - 1)
        }
        Format::BinarySI => (0, -1),
    };
    let fast_path = precision >= 0 && scale - p.denom.len() as i64 >= -9;
    if !fast_path && !p.value.bytes().any(|c| c.is_ascii_digit()) {
        return Err(ERR_NUMERIC.to_string());
    }

    // Magnitude = digits(num ++ denom) × base^exponent × 10^-len(denom), in nanos.
    let nanos = match fast_magnitude(&p, base, exponent, format) {
        Some(nanos) => nanos,
        None => exact_magnitude(&p, base, exponent, format),
    };
    Ok(Quantity { nanos })
}

/// The signed value in nanos with a decimal digit vector: digits × base^exponent ×
/// 10^(9 - len(denom)), rounded up in magnitude, saturating, binary-SI capped at 2^63-1 units.
fn exact_magnitude(p: &Pieces<'_>, base: u32, exponent: i32, format: Format) -> i128 {
    let mut digits: Vec<u8> = p
        .num
        .bytes()
        .chain(p.denom.bytes())
        .map(|c| c - b'0')
        .collect();
    let first_nonzero = digits.iter().position(|&d| d != 0).unwrap_or(digits.len());
    digits.drain(..first_nonzero);
    if digits.is_empty() {
        return 0;
    }
    let mut pow10 = 9 - p.denom.len() as i64;
    if base == 10 {
        pow10 += exponent as i64;
    } else {
        for _ in 0..exponent {
            double_decimal(&mut digits);
        }
    }
    let mut magnitude = scale_round_up(&digits, pow10);
    if format == Format::BinarySI && magnitude > MAX_ALLOWED_NANOS {
        magnitude = MAX_ALLOWED_NANOS;
    }
    match (p.positive, magnitude) {
        (true, m) => m,
        // A saturated magnitude saturates the other way.
        (false, i128::MAX) => i128::MIN,
        (false, m) => -m,
    }
}

/// The signed value in nanos computed with machine integers, when that is exact: at most 30
/// significant digits and no intermediate overflow (else `None`, and the digit-vector path,
/// which also saturates, decides). Same result as that path: digits × base^exponent ×
/// 10^(9 - len(denom)), rounded up in magnitude, binary-SI capped at 2^63-1 units.
fn fast_magnitude(p: &Pieces<'_>, base: u32, exponent: i32, format: Format) -> Option<i128> {
    // 19 digits always fit a u64; 128-bit arithmetic is a library call inside wasm.
    if p.num.len() + p.denom.len() > 19 {
        return None;
    }
    let mut small: u64 = 0;
    for c in p.num.bytes().chain(p.denom.bytes()) {
        small = small * 10 + u64::from(c - b'0');
    }
    if small == 0 {
        return Some(0);
    }
    let mut mantissa = u128::from(small);
    let mut pow10 = 9 - p.denom.len() as i64;
    if base == 10 {
        pow10 += i64::from(exponent);
    } else {
        // Binary exponents are 10..=60; a shift that loses no bit is exact.
        let shift = u32::try_from(exponent).ok()?;
        if mantissa.leading_zeros() <= shift + 1 {
            return None;
        }
        mantissa <<= shift;
    }
    let magnitude = if pow10 >= 0 {
        mantissa.checked_mul(*POW10.get(usize::try_from(pow10).ok()?)?)?
    } else {
        let divisor = *POW10.get(usize::try_from(-pow10).ok()?)?;
        mantissa.div_ceil(divisor)
    };
    let magnitude = i128::try_from(magnitude).ok()?;
    let magnitude = if format == Format::BinarySI {
        magnitude.min(MAX_ALLOWED_NANOS)
    } else {
        magnitude
    };
    Some(if p.positive { magnitude } else { -magnitude })
}

/// 10^0 ..= 10^38, the powers of ten a `u128` holds (table lookups: 128-bit multiplication is a
/// library call inside wasm).
const POW10: [u128; 39] = {
    let mut t = [1u128; 39];
    let mut i = 1;
    while i < 39 {
        t[i] = t[i - 1] * 10;
        i += 1;
    }
    t
};

/// Multiply a big-endian decimal digit vector by 2.
fn double_decimal(digits: &mut Vec<u8>) {
    let mut carry = 0;
    for d in digits.iter_mut().rev() {
        let v = *d * 2 + carry;
        *d = v % 10;
        carry = v / 10;
    }
    if carry > 0 {
        digits.insert(0, carry);
    }
}

/// `digits × 10^pow10` (digits big-endian, no leading zero, not all zero), rounded up in
/// magnitude to an integer, saturating at `i128::MAX`.
fn scale_round_up(digits: &[u8], pow10: i64) -> i128 {
    let integer_digits = digits.len() as i64 + pow10;
    if integer_digits <= 0 {
        // Non-zero, entirely below one nano.
        return 1;
    }
    // i128::MAX has 39 digits.
    if integer_digits > 39 {
        return i128::MAX;
    }
    let integer_digits = integer_digits as usize;
    let mut acc: i128 = 0;
    for k in 0..integer_digits {
        let d = digits.get(k).copied().unwrap_or(0);
        acc = match acc.checked_mul(10).and_then(|a| a.checked_add(d as i128)) {
            Some(a) => a,
            None => return i128::MAX,
        };
    }
    if digits.len() > integer_digits && digits[integer_digits..].iter().any(|&d| d != 0) {
        acc = acc.saturating_add(1);
    }
    acc
}

// ---------------------------------------------------------------------------------------------
// The canonical form (`quantity.go` `CanonicalizeBytes`, `suffix.go`).
// ---------------------------------------------------------------------------------------------

const NANOS_PER_MILLI: i128 = 1_000_000;

/// The [`Format`] of a quantity string, from its suffix (`parseQuantityString` /
/// `interpret`); `None` for a suffix `ParseQuantity` does not know.
pub fn format_of(s: &str) -> Option<Format> {
    let s = s.trim_start_matches(['+', '-']);
    let suffix = s.trim_start_matches(|c: char| c.is_ascii_digit() || c == '.');
    match suffix {
        "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" => Some(Format::BinarySI),
        "" | "n" | "u" | "m" | "k" | "M" | "G" | "T" | "P" | "E" => Some(Format::DecimalSI),
        _ if suffix.starts_with(['e', 'E']) => Some(Format::DecimalExponent),
        _ => None,
    }
}

impl Quantity {
    /// `Quantity.RoundUp(-3)`: rounded away from zero to a whole number of milli-units.
    pub fn round_up_to_milli(self) -> Quantity {
        Quantity {
            nanos: round_up_to_milli(self.nanos),
        }
    }

    /// `Quantity.String()` (`CanonicalizeBytes`) in `format`: `1000m` → `1`, `1.5Gi` →
    /// `1536Mi`, `2000` → `2k`, `0.5` → `500m`; BinarySI only for whole values of at least
    /// 1024, else DecimalSI.
    pub fn canonical(self, format: Format) -> String {
        canonical(self.nanos, format)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn q(s: &str) -> Quantity {
        parse(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
    }

    fn nanos(s: &str) -> i128 {
        q(s).nanos
    }

    const UNIT: i128 = 1_000_000_000;

    #[test]
    fn machine_integer_path_matches_digit_vectors() {
        let mut cases = Vec::new();
        for num in [
            "0",
            "1",
            "5",
            "12",
            "999",
            "123456789",
            "000123",
            "99999999999999999999",
            "123456789012345678901234567890",
            "1234567890123456789012345678901",
        ] {
            for denom in [
                "",
                ".",
                ".5",
                ".000000001",
                ".0000000001",
                ".123456789123",
                ".00000000000000000000000000000000000000001",
            ] {
                for suffix in [
                    "", "n", "u", "m", "k", "M", "G", "T", "P", "E", "Ki", "Mi", "Gi", "Ti", "Pi",
                    "Ei", "e3", "e-3", "e-12", "E18", "e30", "e-45", "e40",
                ] {
                    for sign in ["", "-", "+"] {
                        cases.push(format!("{sign}{num}{denom}{suffix}"));
                    }
                }
            }
        }
        for c in cases {
            let Ok(p) = parse_quantity_string(&c) else {
                continue;
            };
            let Some((base, exponent, format)) = interpret_suffix(p.suffix) else {
                continue;
            };
            if let Some(fast) = fast_magnitude(&p, base, exponent, format) {
                assert_eq!(fast, exact_magnitude(&p, base, exponent, format), "{c}");
            }
        }
    }

    #[test]
    fn decimal_si() {
        assert_eq!(nanos("0"), 0);
        assert_eq!(nanos("1"), UNIT);
        assert_eq!(nanos("100m"), 100_000_000);
        assert_eq!(q("100m"), q("0.1"));
        assert_eq!(nanos("1n"), 1);
        assert_eq!(nanos("1u"), 1_000);
        assert_eq!(nanos("1k"), 1_000 * UNIT);
        assert_eq!(nanos("1M"), 1_000_000 * UNIT);
        assert_eq!(nanos("1G"), 1_000_000_000 * UNIT);
        assert_eq!(nanos("1T"), 1_000_000_000_000 * UNIT);
        assert_eq!(nanos("1P"), 1_000_000_000_000_000 * UNIT);
        assert_eq!(nanos("1E"), 1_000_000_000_000_000_000 * UNIT);
        assert_eq!(nanos("128974848"), 128_974_848 * UNIT);
        assert_eq!(q("128974848000m"), q("128974848"));
        assert_eq!(q("129e6"), q("129M"));
    }

    #[test]
    fn binary_si() {
        assert_eq!(nanos("1Ki"), 1024 * UNIT);
        assert_eq!(nanos("1Mi"), (1 << 20) * UNIT);
        assert_eq!(nanos("1Gi"), 1_073_741_824 * UNIT);
        assert_eq!(nanos("1.5Gi"), 1_610_612_736 * UNIT);
        assert_eq!(nanos("0.5Ki"), 512 * UNIT);
        assert_eq!(nanos("1Ti"), (1 << 40) * UNIT);
        assert_eq!(nanos("1Pi"), (1 << 50) * UNIT);
        assert_eq!(nanos("1Ei"), (1 << 60) * UNIT);
        assert_eq!(nanos("123Mi"), 123 * (1 << 20) * UNIT);
        // 0.1Ki = 102.4
        assert_eq!(nanos("0.1Ki"), 102_400_000_000);
        // Binary values are capped at 2^63-1.
        assert_eq!(nanos("8Ei"), i64::MAX as i128 * UNIT);
        assert_eq!(nanos("-8Ei"), -(i64::MAX as i128) * UNIT);
        assert_eq!(nanos("7Ei"), 7 * (1 << 60) * UNIT);
    }

    #[test]
    fn decimal_exponent() {
        assert_eq!(nanos("2e3"), 2_000 * UNIT);
        assert_eq!(q("1E-3"), q("1m"));
        assert_eq!(nanos("1e+3"), 1_000 * UNIT);
        assert_eq!(nanos("1.5e1"), 15 * UNIT);
        assert_eq!(nanos("1e-9"), 1);
        assert_eq!(nanos("12e-10"), 2); // 1.2n rounds up
        assert_eq!(nanos("1e0"), UNIT);
    }

    #[test]
    fn signs_and_number_shapes() {
        assert_eq!(nanos("-1"), -UNIT);
        assert_eq!(nanos("+1"), UNIT);
        assert_eq!(nanos(".5"), UNIT / 2);
        assert_eq!(nanos("5."), 5 * UNIT);
        assert_eq!(nanos("-.5"), -UNIT / 2);
        assert_eq!(nanos("007"), 7 * UNIT);
        assert_eq!(nanos("1.G"), UNIT * UNIT);
        assert_eq!(nanos("1.000"), UNIT);
        for zero in ["-0", "+0", "00", "0.0", "0m", "0Gi", "0e5", "-0.000"] {
            assert!(q(zero).is_zero(), "{zero}");
        }
        // Kubernetes quirks kept: a bare sign, a bare dot and a bare small suffix are zero.
        for zero in ["+", "-", ".", "Ki", "m"] {
            assert!(q(zero).is_zero(), "{zero}");
        }
    }

    #[test]
    fn rounds_up_below_nano() {
        assert_eq!(nanos("0.1n"), 1);
        assert_eq!(nanos("1.0000000001"), UNIT + 1);
        assert_eq!(nanos("0.0000000001"), 1);
        assert_eq!(nanos("1.5n"), 2);
        // inf.RoundUp rounds the magnitude: negative values move away from zero.
        assert_eq!(nanos("-0.1n"), -1);
        assert_eq!(nanos("-1.5n"), -2);
        assert_eq!(nanos("1e-30"), 1);
        // Exact values are not rounded.
        assert_eq!(nanos("1.000000000"), UNIT);
        assert_eq!(nanos("0.000000001"), 1);
    }

    #[test]
    fn large_values_saturate() {
        assert_eq!(nanos("9E"), 9_000_000_000_000_000_000 * UNIT);
        assert_eq!(nanos("999999999999999999E"), i128::MAX);
        assert_eq!(nanos("1e100"), i128::MAX);
        assert_eq!(nanos("-1e100"), i128::MIN);
        assert_eq!(
            nanos("100000000000000000000000000000000000000000"),
            i128::MAX
        );
    }

    #[test]
    fn syntax_errors() {
        for bad in [
            "", "abc", "1.2.3", "1Gb", "1 ", " 1", "1e3m", "1,5", "1/2", "ÿ1", "1Ki ",
        ] {
            assert_eq!(parse(bad), Err(ERR_FORMAT_WRONG.to_string()), "{bad:?}");
        }
        assert!(ERR_FORMAT_WRONG.contains(SPLIT_RE));
    }

    #[test]
    fn suffix_errors() {
        for bad in [
            "1Gm", "1e", "1E+", "1Ki5", "1ii", "1KiB", "1mm", "1K", "--1",
        ] {
            let r = parse(bad);
            if bad == "1KiB" {
                assert_eq!(r, Err(ERR_FORMAT_WRONG.to_string()), "{bad:?}");
            } else {
                assert_eq!(r, Err(ERR_SUFFIX.to_string()), "{bad:?}");
            }
        }
    }

    #[test]
    fn numeric_errors() {
        for bad in [".Ei", "Ei", "-.Pi", ".e-10"] {
            assert_eq!(parse(bad), Err(ERR_NUMERIC.to_string()), "{bad:?}");
        }
        // The fast path does not need digits.
        assert!(q(".Ti").is_zero());
    }

    #[test]
    fn ordering_requests_vs_limits() {
        assert!(q("500m") < q("1"));
        assert!(q("1") <= q("1000m"));
        assert!(q("1Gi") > q("1G"));
        assert!(q("128974848") < q("129e6"));
        assert!(q("129M") <= q("129e6"));
        assert!(q("-1") < q("0"));
        assert!(q("100Mi") <= q("1Gi"));
        assert!(q("2") > q("1999m"));
        assert!(q("1.5Gi") == q("1536Mi"));
        assert_eq!(q("1Ki").cmp(&q("1024")), std::cmp::Ordering::Equal);
    }

    #[test]
    fn arithmetic_and_traits() {
        assert_eq!(q("100m") + q("900m"), q("1"));
        assert_eq!(q("1") - q("250m"), q("750m"));
        let mut total = Quantity::default();
        total += q("1Gi");
        total += q("1Gi");
        assert_eq!(total, q("2Gi"));
        let sum: Quantity = ["100m", "200m", "700m"].iter().map(|s| q(s)).sum();
        assert_eq!(sum, q("1"));
        assert_eq!("1Ki".parse::<Quantity>(), Ok(q("1024")));
        assert_eq!(
            "nope".parse::<Quantity>(),
            Err(ERR_FORMAT_WRONG.to_string())
        );
        let k = k8s_openapi::apimachinery::pkg::api::resource::Quantity("250m".into());
        assert_eq!(Quantity::try_from(&k), Ok(q("0.25")));
        assert_eq!(
            Quantity::from_nanos(i128::MAX) + q("1"),
            Quantity::from_nanos(i128::MAX)
        );
        assert!(q("0").is_zero() && !q("1n").is_zero());
        assert_eq!(
            (q("-1").signum(), q("0").signum(), q("1").signum()),
            (-1, 0, 1)
        );
    }

    #[test]
    fn canonical_forms_match_kubernetes() {
        // (input nanos, format) -> Quantity.String()
        assert_eq!(canonical(1_000_000_000, Format::DecimalSI), "1");
        assert_eq!(canonical(1_500_000_000, Format::DecimalSI), "1500m");
        assert_eq!(canonical(500_000_000, Format::DecimalSI), "500m");
        assert_eq!(canonical(2000 * NANOS_PER_UNIT, Format::DecimalSI), "2k");
        assert_eq!(canonical(1500 * NANOS_PER_UNIT, Format::DecimalSI), "1500");
        assert_eq!(
            canonical(1536 * 1024 * 1024 * NANOS_PER_UNIT, Format::BinarySI),
            "1536Mi"
        );
        assert_eq!(
            canonical(1024 * 1024 * 1024 * NANOS_PER_UNIT, Format::BinarySI),
            "1Gi"
        );
        assert_eq!(canonical(512 * NANOS_PER_UNIT, Format::BinarySI), "512");
        assert_eq!(
            canonical(1000 * NANOS_PER_UNIT, Format::DecimalExponent),
            "1e3"
        );
        assert_eq!(
            canonical(1500 * NANOS_PER_UNIT, Format::DecimalExponent),
            "1500"
        );
        assert_eq!(canonical(0, Format::BinarySI), "0");
        assert_eq!(canonical(-2 * NANOS_PER_UNIT, Format::DecimalSI), "-2");
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
