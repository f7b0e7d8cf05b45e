//! `find` and `findAll` (`k8s.io/apiserver/pkg/cel/library/regex.go`, kube 1.0):
//!
//! - `<string>.find(<string>) <string>`: the leftmost match, `''` when none;
//! - `<string>.findAll(<string>) <list<string>>`: every non-overlapping match;
//! - `<string>.findAll(<string>, <int>) <list<string>>`: at most that many (all when negative).
//!
//! Patterns are RE2 (Go's `regexp`; the `regex` crate implements the same syntax and
//! leftmost-first semantics). A pattern that does not compile is the error
//! `Illegal regex: <reason>` — kube's prefix; the reason is the `regex` crate's wording, not
//! Go's.

use cel::common::types::{CelInt, CelList, CelString};
use cel::common::value::Val;
use cel::{DeclarationError, Env, ExecutionError};

/// Register `find` and `findAll` on `env`.
pub fn extension(env: &mut Env) -> Result<(), DeclarationError> {
    cel::add_member_overload!(env, fn find: (CelString, CelString) -> Result<CelString>)?;
    cel::add_member_overload!(env, fn find_all: (CelString, CelString) -> Result<CelList>,
        name = "findAll")?;
    cel::add_member_overload!(env, fn find_all_n: (CelString, CelString, CelInt) -> Result<CelList>,
        name = "findAll")?;
    Ok(())
}

fn compile(function: &str, pattern: &str) -> Result<regex::Regex, ExecutionError> {
    regex::Regex::new(pattern)
        .map_err(|e| ExecutionError::function_error(function, format!("Illegal regex: {e}")))
}

fn find(
    this: &CelString<'_>,
    pattern: &CelString<'_>,
) -> Result<CelString<'static>, ExecutionError> {
    let re = compile("find", pattern.inner())?;
    Ok(CelString::from(
        re.find(this.inner()).map_or("", |m| m.as_str()).to_owned(),
    ))
}

fn find_all(
    this: &CelString<'_>,
    pattern: &CelString<'_>,
) -> Result<CelList<'static>, ExecutionError> {
    find_all_n(this, pattern, &CelInt::from(-1))
}

fn find_all_n(
    this: &CelString<'_>,
    pattern: &CelString<'_>,
    n: &CelInt,
) -> Result<CelList<'static>, ExecutionError> {
    let re = compile("findAll", pattern.inner())?;
    let limit = usize::try_from(*n.inner()).unwrap_or(usize::MAX);
    Ok(re
        .find_iter(this.inner())
        .take(limit)
        .map(|m| Box::new(CelString::from(m.as_str().to_owned())) as Box<dyn Val>)
        .collect::<Vec<_>>()
        .into())
}
