//! Query options shared by several verbs, parsed and validated as kube-apiserver's parameter
//! codec and option validation do (`k8s.io/apimachinery/pkg/apis/meta/v1` conversion,
//! `meta/v1/validation/validation.go`): `timeoutSeconds` and `fieldValidation`.

use crate::status::{ApiError, ApiResult, Gr};
use crate::strategy::{ErrorType, FieldError};
use serde_json::json;
use std::collections::HashMap;
use std::time::Duration;

/// A boolean query parameter as kube's parameter codec reads it
/// (`runtime.Convert_Slice_string_To_bool`): absent → `None`; `0` or `false` in any case →
/// `false`; anything else, the empty string included, → `true` (so the Python client's
/// `watch=True` is a watch).
pub fn query_bool(q: &HashMap<String, String>, key: &str) -> Option<bool> {
    q.get(key).map(|v| parse_bool(v))
}

/// The value rule of [`query_bool`].
pub fn parse_bool(v: &str) -> bool {
    !(v == "0" || v.eq_ignore_ascii_case("false"))
}

/// Whether a raw query string asks for a watch (`watch` present and not false), for the
/// filters that run before the query is parsed.
pub fn raw_query_watch(query: Option<&str>) -> bool {
    query.is_some_and(|q| {
        q.split('&').any(|p| {
            let (k, v) = p.split_once('=').unwrap_or((p, ""));
            k == "watch" && parse_bool(v)
        })
    })
}

/// The longest watch this server holds open, whatever `timeoutSeconds` asks for (a year: far
/// beyond any client's wish, and it keeps the deadline arithmetic from overflowing).
const MAX_WATCH_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

/// `timeoutSeconds` as `metav1.ListOptions` decodes it: a base-10 `int64`
/// (`runtime.Convert_Slice_string_To_Pointer_int64` → `strconv.ParseInt`). `None` when absent.
/// Errors: 400 with Go's `strconv.ParseInt` message, as `handlers/get.go` answers a
/// parameter that does not convert (`abc` → invalid syntax, `18446744073709551615` → value out
/// of range).
pub fn timeout_seconds(q: &HashMap<String, String>) -> ApiResult<Option<i64>> {
    let Some(t) = q.get("timeoutSeconds") else {
        return Ok(None);
    };
    t.parse::<i64>().map(Some).map_err(|e| {
        let why = match e.kind() {
            std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
                "value out of range"
            }
            _ => "invalid syntax",
        };
        ApiError::bad_request(format!("strconv.ParseInt: parsing {t:?}: {why}"))
    })
}

/// How long a watch lasts (`handlers/watch.go` / `get.go` `ListResource`): `timeoutSeconds`
/// when given and non-zero — a negative value ends the watch at once, as a deadline in the
/// past does in kube — else `default` (the server's `--min-request-timeout`). Capped at a
/// year.
pub fn watch_duration(timeout_seconds: Option<i64>, default: Duration) -> Duration {
    match timeout_seconds {
        None | Some(0) => default,
        Some(t) if t < 0 => Duration::ZERO,
        Some(t) => Duration::from_secs(t as u64).min(MAX_WATCH_DURATION),
    }
}

/// The verb whose options a `fieldValidation` or `dryRun` error names
/// (`CreateOptions`, `UpdateOptions`, `PatchOptions`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WriteOptions {
    /// POST.
    Create,
    /// PUT.
    Update,
    /// PATCH.
    Patch,
}

impl WriteOptions {
    fn kind(self) -> &'static str {
        match self {
            WriteOptions::Create => "CreateOptions",
            WriteOptions::Update => "UpdateOptions",
            WriteOptions::Patch => "PatchOptions",
        }
    }
}

/// `fieldValidation` (`ValidateCreateOptions` / `ValidateUpdateOptions` /
/// `ValidatePatchOptions` → `ValidateFieldValidation`): one of `""`, `Ignore`, `Strict`,
/// `Warn`; empty or absent means `Warn` (`handlers/rest.go` `fieldValidation`). Errors: 422
/// `<Verb>Options.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: …`.
pub fn field_validation(q: &HashMap<String, String>, verb: WriteOptions) -> ApiResult<&str> {
    match q.get("fieldValidation").map(String::as_str) {
        None | Some("") => Ok("Warn"),
        Some(v @ ("Ignore" | "Strict" | "Warn")) => Ok(v),
        Some(other) => Err(ApiError::invalid(
            &Gr {
                kind: verb.kind().into(),
                group: "meta.k8s.io".into(),
                ..Default::default()
            },
            "",
            &[FieldError {
                error_type: ErrorType::NotSupported,
                field: "fieldValidation".into(),
                bad_value: Some(json!(other)),
                detail: "supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"".into(),
            }],
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(k: &str, v: &str) -> HashMap<String, String> {
        HashMap::from([(k.to_string(), v.to_string())])
    }

    #[test]
    fn timeout_seconds_as_go_parses_it() {
        assert_eq!(timeout_seconds(&HashMap::new()).unwrap(), None);
        assert_eq!(
            timeout_seconds(&q("timeoutSeconds", "-1")).unwrap(),
            Some(-1)
        );
        let e = timeout_seconds(&q("timeoutSeconds", "abc")).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (400, "strconv.ParseInt: parsing \"abc\": invalid syntax")
        );
        let e = timeout_seconds(&q("timeoutSeconds", "18446744073709551615")).unwrap_err();
        assert_eq!(
            e.message,
            "strconv.ParseInt: parsing \"18446744073709551615\": value out of range"
        );
    }

    #[test]
    fn booleans_as_kube_reads_them() {
        assert_eq!(query_bool(&HashMap::new(), "watch"), None);
        for t in ["true", "True", "1", "", "yes"] {
            assert_eq!(query_bool(&q("watch", t), "watch"), Some(true), "{t}");
        }
        for f in ["false", "False", "FALSE", "0"] {
            assert_eq!(query_bool(&q("watch", f), "watch"), Some(false), "{f}");
        }
        assert!(raw_query_watch(Some("a=1&watch=True")));
        assert!(raw_query_watch(Some("watch")));
        assert!(!raw_query_watch(Some("watch=false&x=1")));
        assert!(!raw_query_watch(Some("watcher=1")));
    }

    #[test]
    fn watch_durations() {
        let d = Duration::from_secs(1800);
        assert_eq!(watch_duration(None, d), d);
        assert_eq!(watch_duration(Some(0), d), d);
        assert_eq!(watch_duration(Some(-1), d), Duration::ZERO);
        assert_eq!(watch_duration(Some(5), d), Duration::from_secs(5));
        assert_eq!(watch_duration(Some(i64::MAX), d), MAX_WATCH_DURATION);
    }

    #[test]
    fn field_validation_values() {
        assert_eq!(
            field_validation(&HashMap::new(), WriteOptions::Create).unwrap(),
            "Warn"
        );
        assert_eq!(
            field_validation(&q("fieldValidation", "Strict"), WriteOptions::Create).unwrap(),
            "Strict"
        );
        let e =
            field_validation(&q("fieldValidation", "Garbage"), WriteOptions::Patch).unwrap_err();
        assert_eq!(e.code, 422);
        assert!(
            e.message.starts_with("PatchOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: \"Garbage\": supported values:"),
            "{}",
            e.message
        );
    }
}
