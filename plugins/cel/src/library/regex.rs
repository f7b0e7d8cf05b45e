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
//!
//! The standard library's `matches` (`<string>.matches(<string>)`, `matches(<string>,
//! <string>)`) is registered here too, so that all three share one cache of compiled
//! patterns: kube compiles a constant pattern once per program (`cel.OptimizeRegex`), where
//! compiling it per call made `list.all(x, x.matches(p))` over 100 items cost 2.5 ms.

use cel::common::types::{CelBool, CelInt, CelList, CelString};
use cel::common::value::Val;
use cel::{DeclarationError, Env, ExecutionError};

/// Register `matches`, `find` and `findAll` on `env`.
pub fn extension(env: &mut Env) -> Result<(), DeclarationError> {
    cel::add_overload!(env, fn matches: (CelString, CelString) -> Result<CelBool>,
        id = "matches")?;
    cel::add_member_overload!(env, fn matches: (CelString, CelString) -> Result<CelBool>)?;
    cel::add_member_overload!(env, fn find: (CelString, CelString) -> Result<CelString>)?;
    cel::add_member_overload!(env, fn find_all: (CelString, CelString) -> Result<CelList>,
        name = "findAll")?;
    cel::add_member_overload!(env, fn find_all_n: (CelString, CelString, CelInt) -> Result<CelList>,
        name = "findAll")?;
    Ok(())
}

/// The most compiled patterns a thread keeps.
const CACHED_PATTERNS: usize = 64;

thread_local! {
    static PATTERNS: std::cell::RefCell<std::collections::HashMap<String, regex::Regex>> =
        Default::default();
}

/// `f` applied to `pattern` compiled, from this thread's cache when it was compiled before
/// (used in place: a cloned `Regex` would build its match cache afresh). The cache is emptied
/// when full.
pub(crate) fn with_compiled<R>(
    pattern: &str,
    f: impl FnOnce(&regex::Regex) -> R,
) -> Result<R, regex::Error> {
    PATTERNS.with(|p| {
        let mut p = p.borrow_mut();
        if !p.contains_key(pattern) {
            let re = regex::Regex::new(pattern)?;
            if p.len() >= CACHED_PATTERNS {
                p.clear();
            }
            p.insert(pattern.to_owned(), re);
        }
        Ok(f(&p[pattern]))
    })
}

fn illegal(function: &str, e: regex::Error) -> ExecutionError {
    ExecutionError::function_error(function, format!("Illegal regex: {e}"))
}

/// The standard `matches`: whether the pattern matches anywhere in the string. Errors: the
/// pattern does not compile (`'<pattern>' not a valid regex: …`).
fn matches(this: &CelString<'_>, pattern: &CelString<'_>) -> Result<CelBool, ExecutionError> {
    with_compiled(pattern.inner(), |re| {
        CelBool::from(re.is_match(this.inner()))
    })
    .map_err(|e| {
        ExecutionError::function_error(
            "matches",
            format!("'{}' not a valid regex:\n{e}", pattern.inner()),
        )
    })
}

fn find(
    this: &CelString<'_>,
    pattern: &CelString<'_>,
) -> Result<CelString<'static>, ExecutionError> {
    with_compiled(pattern.inner(), |re| {
        CelString::from(re.find(this.inner()).map_or("", |m| m.as_str()).to_owned())
    })
    .map_err(|e| illegal("find", e))
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
    let limit = usize::try_from(*n.inner()).unwrap_or(usize::MAX);
    with_compiled(pattern.inner(), |re| {
        re.find_iter(this.inner())
            .take(limit)
            .map(|m| Box::new(CelString::from(m.as_str().to_owned())) as Box<dyn Val>)
            .collect::<Vec<_>>()
            .into()
    })
    .map_err(|e| illegal("findAll", e))
}
