//! The functions an expression may call, with their overloads' types: the CEL standard library
//! as cel-go declares it (`common/stdlib/standard.go`, the optional library of `cel/library.go`)
//! and the Kubernetes libraries this crate implements (`k8s.io/apiserver/pkg/cel/library`).
//!
//! Every overload here has an implementation in [`crate::library`] or the `cel` crate; a kube
//! function this crate does not implement is not declared, so a rule calling it fails to
//! compile (`undeclared reference`) instead of failing when evaluated.
//!
//! Signatures are written as in cel-go's documentation: `(int, int) -> int` for a global
//! overload, `string.(string) -> bool` for a member one; a single capital letter is a type
//! parameter.

use crate::types::Type;
use std::collections::HashMap;
use std::sync::LazyLock;

/// One overload of a function.
#[derive(Debug)]
pub(crate) struct Overload {
    /// Called as `target.f(args)`; the target is `params[0]`.
    pub member: bool,
    pub params: Vec<Type>,
    pub result: Type,
    /// The type parameters the signature names (`A`, `K`, `V`).
    pub type_params: Vec<&'static str>,
}

const QUANTITY: &str = "kubernetes.Quantity";
const IP: &str = "net.IP";
const CIDR: &str = "net.CIDR";
const SEMVER: &str = "kubernetes.Semver";
const FORMAT: &str = "kubernetes.NamedFormat";
const URL: &str = "kubernetes.URL";
const AUTHORIZER: &str = "kubernetes.authorization.Authorizer";
const PATH_CHECK: &str = "kubernetes.authorization.PathCheck";
const GROUP_CHECK: &str = "kubernetes.authorization.GroupCheck";
const RESOURCE_CHECK: &str = "kubernetes.authorization.ResourceCheck";
const DECISION: &str = "kubernetes.authorization.Decision";

/// `(function, signature)` for every overload.
const SIGNATURES: &[(&str, &str)] = &[
    // Operators (cel-go `operators`), the logical ones included.
    ("_?_:_", "(bool, A, A) -> A"),
    ("_&&_", "(bool, bool) -> bool"),
    ("_||_", "(bool, bool) -> bool"),
    ("!_", "(bool) -> bool"),
    ("@not_strictly_false", "(bool) -> bool"),
    ("_==_", "(A, A) -> bool"),
    ("_!=_", "(A, A) -> bool"),
    ("_+_", "(int, int) -> int"),
    ("_+_", "(uint, uint) -> uint"),
    ("_+_", "(double, double) -> double"),
    ("_+_", "(string, string) -> string"),
    ("_+_", "(bytes, bytes) -> bytes"),
    ("_+_", "(list(A), list(A)) -> list(A)"),
    ("_+_", "(timestamp, duration) -> timestamp"),
    ("_+_", "(duration, timestamp) -> timestamp"),
    ("_+_", "(duration, duration) -> duration"),
    ("_-_", "(int, int) -> int"),
    ("_-_", "(uint, uint) -> uint"),
    ("_-_", "(double, double) -> double"),
    ("_-_", "(timestamp, timestamp) -> duration"),
    ("_-_", "(timestamp, duration) -> timestamp"),
    ("_-_", "(duration, duration) -> duration"),
    ("_*_", "(int, int) -> int"),
    ("_*_", "(uint, uint) -> uint"),
    ("_*_", "(double, double) -> double"),
    ("_/_", "(int, int) -> int"),
    ("_/_", "(uint, uint) -> uint"),
    ("_/_", "(double, double) -> double"),
    ("_%_", "(int, int) -> int"),
    ("_%_", "(uint, uint) -> uint"),
    ("-_", "(int) -> int"),
    ("-_", "(double) -> double"),
    ("_[_]", "(list(A), int) -> A"),
    ("_[_]", "(map(K, V), K) -> V"),
    ("_[_]", "(optional(list(A)), int) -> optional(A)"),
    ("_[_]", "(optional(map(K, V)), K) -> optional(V)"),
    ("_[?_]", "(list(A), int) -> optional(A)"),
    ("_[?_]", "(map(K, V), K) -> optional(V)"),
    ("_[?_]", "(optional(list(A)), int) -> optional(A)"),
    ("_[?_]", "(optional(map(K, V)), K) -> optional(V)"),
    ("@in", "(A, list(A)) -> bool"),
    ("@in", "(K, map(K, V)) -> bool"),
    // Comparisons, numeric ones across types (kube enables CrossTypeNumericComparisons).
    ("_<_", "(bool, bool) -> bool"),
    ("_<_", "(int, int) -> bool"),
    ("_<_", "(int, uint) -> bool"),
    ("_<_", "(int, double) -> bool"),
    ("_<_", "(uint, uint) -> bool"),
    ("_<_", "(uint, int) -> bool"),
    ("_<_", "(uint, double) -> bool"),
    ("_<_", "(double, double) -> bool"),
    ("_<_", "(double, int) -> bool"),
    ("_<_", "(double, uint) -> bool"),
    ("_<_", "(string, string) -> bool"),
    ("_<_", "(bytes, bytes) -> bool"),
    ("_<_", "(timestamp, timestamp) -> bool"),
    ("_<_", "(duration, duration) -> bool"),
    // `size` and the conversions.
    ("size", "(string) -> int"),
    ("size", "(bytes) -> int"),
    ("size", "(list(A)) -> int"),
    ("size", "(map(K, V)) -> int"),
    ("size", "string.() -> int"),
    ("size", "bytes.() -> int"),
    ("size", "list(A).() -> int"),
    ("size", "map(K, V).() -> int"),
    ("type", "(A) -> type(A)"),
    ("dyn", "(A) -> dyn"),
    ("bool", "(bool) -> bool"),
    ("bool", "(string) -> bool"),
    ("bytes", "(bytes) -> bytes"),
    ("bytes", "(string) -> bytes"),
    ("double", "(double) -> double"),
    ("double", "(int) -> double"),
    ("double", "(uint) -> double"),
    ("double", "(string) -> double"),
    ("int", "(int) -> int"),
    ("int", "(uint) -> int"),
    ("int", "(double) -> int"),
    ("int", "(string) -> int"),
    ("int", "(duration) -> int"),
    ("int", "(timestamp) -> int"),
    ("uint", "(uint) -> uint"),
    ("uint", "(int) -> uint"),
    ("uint", "(double) -> uint"),
    ("uint", "(string) -> uint"),
    ("string", "(string) -> string"),
    ("string", "(bool) -> string"),
    ("string", "(int) -> string"),
    ("string", "(uint) -> string"),
    ("string", "(double) -> string"),
    ("string", "(bytes) -> string"),
    ("string", "(duration) -> string"),
    ("string", "(timestamp) -> string"),
    ("duration", "(duration) -> duration"),
    ("duration", "(string) -> duration"),
    ("timestamp", "(timestamp) -> timestamp"),
    ("timestamp", "(int) -> timestamp"),
    ("timestamp", "(string) -> timestamp"),
    // Strings.
    ("contains", "string.(string) -> bool"),
    ("endsWith", "string.(string) -> bool"),
    ("startsWith", "string.(string) -> bool"),
    ("matches", "string.(string) -> bool"),
    ("matches", "(string, string) -> bool"),
    // Timestamps and durations.
    ("getFullYear", "timestamp.() -> int"),
    ("getFullYear", "timestamp.(string) -> int"),
    ("getMonth", "timestamp.() -> int"),
    ("getMonth", "timestamp.(string) -> int"),
    ("getDayOfYear", "timestamp.() -> int"),
    ("getDayOfYear", "timestamp.(string) -> int"),
    ("getDayOfMonth", "timestamp.() -> int"),
    ("getDayOfMonth", "timestamp.(string) -> int"),
    ("getDate", "timestamp.() -> int"),
    ("getDate", "timestamp.(string) -> int"),
    ("getDayOfWeek", "timestamp.() -> int"),
    ("getDayOfWeek", "timestamp.(string) -> int"),
    ("getHours", "timestamp.() -> int"),
    ("getHours", "timestamp.(string) -> int"),
    ("getHours", "duration.() -> int"),
    ("getMinutes", "timestamp.() -> int"),
    ("getMinutes", "timestamp.(string) -> int"),
    ("getMinutes", "duration.() -> int"),
    ("getSeconds", "timestamp.() -> int"),
    ("getSeconds", "timestamp.(string) -> int"),
    ("getSeconds", "duration.() -> int"),
    ("getMilliseconds", "timestamp.() -> int"),
    ("getMilliseconds", "timestamp.(string) -> int"),
    ("getMilliseconds", "duration.() -> int"),
    // Optional values (`optMap` and `optFlatMap` are macros over these).
    ("optional.of", "(A) -> optional(A)"),
    ("optional.ofNonZeroValue", "(A) -> optional(A)"),
    ("optional.none", "() -> optional(A)"),
    ("hasValue", "optional(A).() -> bool"),
    ("value", "optional(A).() -> A"),
    ("or", "optional(A).(optional(A)) -> optional(A)"),
    ("orValue", "optional(A).(A) -> A"),
    ("optional.unwrap", "(list(optional(A))) -> list(A)"),
    ("unwrapOpt", "list(optional(A)).() -> list(A)"),
    ("first", "list(A).() -> optional(A)"),
    ("last", "list(A).() -> optional(A)"),
    // cel-go ext.Strings, version 2 (ext/strings.go), as kube enables it.
    ("charAt", "string.(int) -> string"),
    ("indexOf", "string.(string) -> int"),
    ("indexOf", "string.(string, int) -> int"),
    ("lastIndexOf", "string.(string) -> int"),
    ("lastIndexOf", "string.(string, int) -> int"),
    ("lowerAscii", "string.() -> string"),
    ("upperAscii", "string.() -> string"),
    ("trim", "string.() -> string"),
    ("replace", "string.(string, string) -> string"),
    ("replace", "string.(string, string, int) -> string"),
    ("split", "string.(string) -> list(string)"),
    ("split", "string.(string, int) -> list(string)"),
    ("substring", "string.(int) -> string"),
    ("substring", "string.(int, int) -> string"),
    ("join", "list(string).() -> string"),
    ("join", "list(string).(string) -> string"),
    ("format", "string.(list(dyn)) -> string"),
    ("strings.quote", "(string) -> string"),
    // Two-variable comprehensions' hidden functions (library/comprehensions.rs): a pair is
    // typed as a one-entry map, so its key and value keep their types.
    ("@pairs", "(list(A)) -> list(map(int, A))"),
    ("@pairs", "(map(K, V)) -> list(map(K, V))"),
    ("@key", "(map(K, V)) -> K"),
    ("@value", "(map(K, V)) -> V"),
    ("@entry", "(K, V) -> map(K, V)"),
    ("@mapOf", "(list(map(K, V))) -> map(K, V)"),
    ("@merge", "(list(map(K, V))) -> map(K, V)"),
    // kube: lists (library/lists.go).
    ("isSorted", "list(A).() -> bool"),
    ("sum", "list(int).() -> int"),
    ("sum", "list(uint).() -> uint"),
    ("sum", "list(double).() -> double"),
    ("sum", "list(duration).() -> duration"),
    ("min", "list(A).() -> A"),
    ("max", "list(A).() -> A"),
    ("indexOf", "list(A).(A) -> int"),
    ("lastIndexOf", "list(A).(A) -> int"),
    // kube: regex (library/regex.go).
    ("find", "string.(string) -> string"),
    ("findAll", "string.(string) -> list(string)"),
    ("findAll", "string.(string, int) -> list(string)"),
    // kube: quantity (library/quantity.go).
    ("quantity", "(string) -> kubernetes.Quantity"),
    ("isQuantity", "(string) -> bool"),
    // Global, as kube declares it (`cel.Overload`), though its docs write `<Quantity>.sign()`.
    ("sign", "(kubernetes.Quantity) -> int"),
    (
        "isGreaterThan",
        "kubernetes.Quantity.(kubernetes.Quantity) -> bool",
    ),
    (
        "isLessThan",
        "kubernetes.Quantity.(kubernetes.Quantity) -> bool",
    ),
    (
        "compareTo",
        "kubernetes.Quantity.(kubernetes.Quantity) -> int",
    ),
    ("asApproximateFloat", "kubernetes.Quantity.() -> double"),
    ("asInteger", "kubernetes.Quantity.() -> int"),
    ("isInteger", "kubernetes.Quantity.() -> bool"),
    (
        "add",
        "kubernetes.Quantity.(kubernetes.Quantity) -> kubernetes.Quantity",
    ),
    ("add", "kubernetes.Quantity.(int) -> kubernetes.Quantity"),
    (
        "sub",
        "kubernetes.Quantity.(kubernetes.Quantity) -> kubernetes.Quantity",
    ),
    ("sub", "kubernetes.Quantity.(int) -> kubernetes.Quantity"),
    // kube: authorization (library/authz.go, selectors of 1.31).
    ("path", "kubernetes.authorization.Authorizer.(string) -> kubernetes.authorization.PathCheck"),
    ("group", "kubernetes.authorization.Authorizer.(string) -> kubernetes.authorization.GroupCheck"),
    (
        "serviceAccount",
        "kubernetes.authorization.Authorizer.(string, string) -> kubernetes.authorization.Authorizer",
    ),
    (
        "resource",
        "kubernetes.authorization.GroupCheck.(string) -> kubernetes.authorization.ResourceCheck",
    ),
    (
        "subresource",
        "kubernetes.authorization.ResourceCheck.(string) -> kubernetes.authorization.ResourceCheck",
    ),
    (
        "namespace",
        "kubernetes.authorization.ResourceCheck.(string) -> kubernetes.authorization.ResourceCheck",
    ),
    (
        "name",
        "kubernetes.authorization.ResourceCheck.(string) -> kubernetes.authorization.ResourceCheck",
    ),
    (
        "fieldSelector",
        "kubernetes.authorization.ResourceCheck.(string) -> kubernetes.authorization.ResourceCheck",
    ),
    (
        "labelSelector",
        "kubernetes.authorization.ResourceCheck.(string) -> kubernetes.authorization.ResourceCheck",
    ),
    ("check", "kubernetes.authorization.PathCheck.(string) -> kubernetes.authorization.Decision"),
    (
        "check",
        "kubernetes.authorization.ResourceCheck.(string) -> kubernetes.authorization.Decision",
    ),
    ("allowed", "kubernetes.authorization.Decision.() -> bool"),
    ("reason", "kubernetes.authorization.Decision.() -> string"),
    ("errored", "kubernetes.authorization.Decision.() -> bool"),
    ("error", "kubernetes.authorization.Decision.() -> string"),
    // kube: URLs (library/urls.go).
    ("url", "(string) -> kubernetes.URL"),
    ("isURL", "(string) -> bool"),
    ("getScheme", "kubernetes.URL.() -> string"),
    ("getHost", "kubernetes.URL.() -> string"),
    ("getHostname", "kubernetes.URL.() -> string"),
    ("getPort", "kubernetes.URL.() -> string"),
    ("getEscapedPath", "kubernetes.URL.() -> string"),
    ("getQuery", "kubernetes.URL.() -> map(string, list(string))"),
    // kube: jsonpatch (library/jsonpatch.go).
    ("jsonpatch.escapeKey", "(string) -> string"),
    // kube: sets (cel-go ext/sets.go, as kube enables it).
    ("sets.contains", "(list(A), list(A)) -> bool"),
    ("sets.equivalent", "(list(A), list(A)) -> bool"),
    ("sets.intersects", "(list(A), list(A)) -> bool"),
    // kube: IP and CIDR (library/ip.go, library/cidr.go).
    ("ip", "(string) -> net.IP"),
    ("isIP", "(string) -> bool"),
    ("ip.isCanonical", "(string) -> bool"),
    ("string", "(net.IP) -> string"),
    ("family", "net.IP.() -> int"),
    ("isUnspecified", "net.IP.() -> bool"),
    ("isLoopback", "net.IP.() -> bool"),
    ("isLinkLocalMulticast", "net.IP.() -> bool"),
    ("isLinkLocalUnicast", "net.IP.() -> bool"),
    ("isGlobalUnicast", "net.IP.() -> bool"),
    ("cidr", "(string) -> net.CIDR"),
    ("isCIDR", "(string) -> bool"),
    ("string", "(net.CIDR) -> string"),
    ("containsIP", "net.CIDR.(net.IP) -> bool"),
    ("containsIP", "net.CIDR.(string) -> bool"),
    ("containsCIDR", "net.CIDR.(net.CIDR) -> bool"),
    ("containsCIDR", "net.CIDR.(string) -> bool"),
    ("ip", "net.CIDR.() -> net.IP"),
    ("masked", "net.CIDR.() -> net.CIDR"),
    ("prefixLength", "net.CIDR.() -> int"),
    // kube: format (library/format.go); the named formats follow.
    (
        "format.named",
        "(string) -> optional(kubernetes.NamedFormat)",
    ),
    (
        "validate",
        "kubernetes.NamedFormat.(string) -> optional(list(string))",
    ),
    // kube: semver (library/semverlib.go).
    ("semver", "(string) -> kubernetes.Semver"),
    ("semver", "(string, bool) -> kubernetes.Semver"),
    ("isSemver", "(string) -> bool"),
    ("isSemver", "(string, bool) -> bool"),
    (
        "isGreaterThan",
        "kubernetes.Semver.(kubernetes.Semver) -> bool",
    ),
    (
        "isLessThan",
        "kubernetes.Semver.(kubernetes.Semver) -> bool",
    ),
    ("compareTo", "kubernetes.Semver.(kubernetes.Semver) -> int"),
    ("major", "kubernetes.Semver.() -> int"),
    ("minor", "kubernetes.Semver.() -> int"),
    ("patch", "kubernetes.Semver.() -> int"),
];

/// Every declared function's overloads, by the function's (qualified) name.
pub(crate) static FUNCTIONS: LazyLock<HashMap<&'static str, Vec<Overload>>> = LazyLock::new(|| {
    let mut functions: HashMap<&'static str, Vec<Overload>> = HashMap::new();
    let comparisons = SIGNATURES.iter().filter(|(f, _)| *f == "_<_");
    let mut all: Vec<(&'static str, &'static str)> = SIGNATURES.to_vec();
    // `<=`, `>`, `>=` have the overloads of `<`.
    for op in ["_<=_", "_>_", "_>=_"] {
        all.extend(comparisons.clone().map(|(_, s)| (op, *s)));
    }
    for name in crate::library::format::FUNCTIONS {
        all.push((name, "() -> kubernetes.NamedFormat"));
    }
    for (name, signature) in all {
        functions
            .entry(name)
            .or_default()
            .push(parse_signature(signature));
    }
    functions
});

fn parse_signature(s: &'static str) -> Overload {
    let (args, result) = s.rsplit_once(" -> ").expect("a signature has a result");
    let (receiver, args) = match args.split_once(".(") {
        Some((receiver, rest)) if !args.starts_with('(') => (Some(receiver), rest),
        _ => (None, &args[1..]),
    };
    let args = args
        .strip_suffix(')')
        .expect("a signature's arguments end with )");
    let mut params: Vec<Type> = receiver.map(parse_type).into_iter().collect();
    params.extend(split_top_level(args).into_iter().map(parse_type));
    let mut type_params: Vec<&'static str> = s
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| w.len() == 1 && w.chars().all(|c| c.is_ascii_uppercase()))
        .collect();
    type_params.sort_unstable();
    type_params.dedup();
    Overload {
        member: receiver.is_some(),
        params,
        result: parse_type(result),
        type_params,
    }
}

/// `a, list(b), map(c, d)` split at the commas outside parentheses.
fn split_top_level(s: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (vec![], 0, 0);
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(s[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    if !s[start..].trim().is_empty() {
        parts.push(s[start..].trim());
    }
    parts
}

fn parse_type(s: &str) -> Type {
    let s = s.trim();
    if let Some((name, rest)) = s.split_once('(') {
        let params: Vec<Type> = split_top_level(&rest[..rest.len() - 1])
            .into_iter()
            .map(parse_type)
            .collect();
        let mut params = params.into_iter();
        let mut next = || {
            params
                .next()
                .expect("a parameterized type has its parameters")
        };
        return match name {
            "list" => Type::list(next()),
            "map" => {
                let k = next();
                Type::map(k, next())
            }
            "optional" => Type::optional(next()),
            "type" => Type::Type(Box::new(next())),
            other => panic!("unknown parameterized type {other}"),
        };
    }
    if let Some(t) = Type::scalar_named(s) {
        return t;
    }
    match s {
        "dyn" => Type::Dyn,
        "duration" => Type::Duration,
        "timestamp" => Type::Timestamp,
        QUANTITY => Type::Opaque(QUANTITY),
        IP => Type::Opaque(IP),
        CIDR => Type::Opaque(CIDR),
        SEMVER => Type::Opaque(SEMVER),
        FORMAT => Type::Opaque(FORMAT),
        URL => Type::Opaque(URL),
        AUTHORIZER => Type::Opaque(AUTHORIZER),
        PATH_CHECK => Type::Opaque(PATH_CHECK),
        GROUP_CHECK => Type::Opaque(GROUP_CHECK),
        RESOURCE_CHECK => Type::Opaque(RESOURCE_CHECK),
        DECISION => Type::Opaque(DECISION),
        p if p.len() == 1 && p.chars().all(|c| c.is_ascii_uppercase()) => Type::param(p),
        other => panic!("unknown type {other}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_parse() {
        let o = parse_signature("kubernetes.Quantity.(int) -> kubernetes.Quantity");
        assert!(o.member);
        assert_eq!(o.params, vec![Type::Opaque(QUANTITY), Type::Int]);
        let o = parse_signature("(map(K, V), K) -> optional(V)");
        assert!(!o.member);
        assert_eq!(o.type_params, vec!["K", "V"]);
        assert_eq!(o.result, Type::optional(Type::param("V")));
        assert!(parse_signature("() -> optional(A)").params.is_empty());
        // Every signature parses, and `>=` has the overloads of `<`.
        assert_eq!(FUNCTIONS["_>=_"].len(), FUNCTIONS["_<_"].len());
        assert!(FUNCTIONS.contains_key("format.dns1123Label"));
    }
}
