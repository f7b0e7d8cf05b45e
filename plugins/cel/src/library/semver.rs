//! kube's semver library (`k8s.io/apiserver/pkg/cel/library/semverlib.go`, kube 1.33) over the
//! `semver` crate (strict SemVer 2.0, as blang/semver's `Parse`):
//!
//! - `semver(<string>[, <bool> normalize]) <Semver>`, `isSemver(<string>[, <bool>]) <bool>`:
//!   with `normalize`, a leading `v` is dropped, leading zeros are removed and a missing minor
//!   or patch is `0` (`normalizeAndParse`; a short version with a pre-release or build is the
//!   error `short version cannot contain PreRelease/Build meta data`);
//! - `<Semver>.isGreaterThan(<Semver>)`, `isLessThan`, `compareTo` (SemVer precedence: build
//!   metadata ignored), `major()`, `minor()`, `patch()`;
//! - `==` compares precedence, as Go's `Version.Equals`.
//!
//! A string that is not a version is an error worded by the `semver` crate, not blang's.

use cel::common::types::{CelBool, CelInt, CelString, Type};
use cel::{DeclarationError, Env, ExecutionError};
use std::cmp::Ordering;

/// `kubernetes.Semver`, the type of [`SemverVal`].
pub static SEMVER_TYPE: Type = Type::new_unspecified_type("kubernetes.Semver");

/// A semantic version as a CEL value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SemverVal(pub semver::Version);

super::opaque_val!(SemverVal, SEMVER_TYPE, |a: &SemverVal, b: &SemverVal| a
    .0
    .cmp_precedence(&b.0)
    == Ordering::Equal);

/// Register the semver library on `env`.
pub fn extension(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_type(SEMVER_TYPE.to_owned())?;
    cel::add_overload!(env, fn parse: (CelString) -> Result<SemverVal>, name = "semver")?;
    cel::add_overload!(env, fn parse_normalized: (CelString, CelBool) -> Result<SemverVal>,
        name = "semver")?;
    cel::add_overload!(env, fn is_semver: (CelString) -> CelBool, name = "isSemver")?;
    cel::add_overload!(env, fn is_semver_normalized: (CelString, CelBool) -> CelBool,
        name = "isSemver")?;
    cel::add_member_overload!(env, fn is_greater_than: (SemverVal, SemverVal) -> CelBool,
        name = "isGreaterThan")?;
    cel::add_member_overload!(env, fn is_less_than: (SemverVal, SemverVal) -> CelBool,
        name = "isLessThan")?;
    cel::add_member_overload!(env, fn compare_to: (SemverVal, SemverVal) -> CelInt,
        name = "compareTo")?;
    cel::add_member_overload!(env, fn major: (SemverVal) -> CelInt)?;
    cel::add_member_overload!(env, fn minor: (SemverVal) -> CelInt)?;
    cel::add_member_overload!(env, fn patch: (SemverVal) -> CelInt)?;
    Ok(())
}

/// `normalizeAndParse`: without a `v` prefix, leading zeros removed, minor and patch filled.
fn normalize_and_parse(s: &str) -> Result<semver::Version, String> {
    let s = s.strip_prefix('v').unwrap_or(s);
    let mut parts: Vec<String> = s.splitn(3, '.').map(str::to_owned).collect();
    for p in parts.iter_mut() {
        if p.len() > 1 {
            let trimmed = p.trim_start_matches('0');
            *p = if trimmed.is_empty() || !trimmed.as_bytes()[0].is_ascii_digit() {
                format!("0{trimmed}")
            } else {
                trimmed.to_owned()
            };
        }
    }
    if parts.len() < 3 {
        if parts.last().is_some_and(|p| p.contains(['+', '-'])) {
            return Err("short version cannot contain PreRelease/Build meta data".into());
        }
        parts.resize(3, "0".into());
    }
    semver::Version::parse(&parts.join(".")).map_err(|e| e.to_string())
}

fn parse_with(s: &str, normalize: bool) -> Result<semver::Version, String> {
    if normalize {
        normalize_and_parse(s)
    } else {
        semver::Version::parse(s).map_err(|e| e.to_string())
    }
}

fn parse(s: &CelString<'_>) -> Result<SemverVal, ExecutionError> {
    parse_with(s.inner(), false)
        .map(SemverVal)
        .map_err(|e| ExecutionError::function_error("semver", e))
}

fn parse_normalized(s: &CelString<'_>, normalize: &CelBool) -> Result<SemverVal, ExecutionError> {
    parse_with(s.inner(), *normalize.inner())
        .map(SemverVal)
        .map_err(|e| ExecutionError::function_error("semver", e))
}

fn is_semver(s: &CelString<'_>) -> CelBool {
    CelBool::from(parse_with(s.inner(), false).is_ok())
}

fn is_semver_normalized(s: &CelString<'_>, normalize: &CelBool) -> CelBool {
    CelBool::from(parse_with(s.inner(), *normalize.inner()).is_ok())
}

fn is_greater_than(v: &SemverVal, other: &SemverVal) -> CelBool {
    CelBool::from(v.0.cmp_precedence(&other.0) == Ordering::Greater)
}

fn is_less_than(v: &SemverVal, other: &SemverVal) -> CelBool {
    CelBool::from(v.0.cmp_precedence(&other.0) == Ordering::Less)
}

fn compare_to(v: &SemverVal, other: &SemverVal) -> CelInt {
    CelInt::from(match v.0.cmp_precedence(&other.0) {
        Ordering::Less => -1,
        Ordering::Equal => 0,
        Ordering::Greater => 1,
    })
}

fn major(v: &SemverVal) -> CelInt {
    CelInt::from(v.0.major as i64)
}

fn minor(v: &SemverVal) -> CelInt {
    CelInt::from(v.0.minor as i64)
}

fn patch(v: &SemverVal) -> CelInt {
    CelInt::from(v.0.patch as i64)
}
