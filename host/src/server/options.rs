//! Query options shared by several verbs, parsed and validated as kube-apiserver's parameter
//! codec and option validation do (`k8s.io/apimachinery/pkg/apis/meta/v1` conversion,
//! `meta/v1/validation/validation.go`, `meta/internalversion/validation/validation.go`):
//! list and watch options, `timeoutSeconds`, `dryRun` and `fieldValidation`.

use crate::registry::{ListOptions, Store};
use crate::status::{ApiError, ApiResult};
use crate::strategy::{ErrorType, FieldError};
use serde_json::json;
use std::collections::HashMap;
use std::time::Duration;
use wasm_apiserver_apimachinery::GroupKind;
use wasm_apiserver_storage::{FieldSelector, LabelSelector, ResourceVersionMatch};

/// A request's query parameters, decoded (the last value of a repeated key wins).
pub type Query = HashMap<String, String>;

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

/// Which options a write's query decodes into, naming its errors (`CreateOptions`,
/// `UpdateOptions`, `PatchOptions` of `meta.k8s.io`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptionsKind {
    /// POST.
    Create,
    /// PUT.
    Update,
    /// PATCH.
    Patch,
}

impl OptionsKind {
    fn kind(self) -> &'static str {
        match self {
            OptionsKind::Create => "CreateOptions",
            OptionsKind::Update => "UpdateOptions",
            OptionsKind::Patch => "PatchOptions",
        }
    }
}

/// `metav1.CreateOptions`, `UpdateOptions` or `PatchOptions` as a write's handler decodes them
/// from its query (`ParameterCodec.DecodeParameters`) and validates them, before the body is
/// decoded (`handlers/create.go`, `update.go`, `patch.go`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WriteOptions {
    /// Which options these are.
    pub kind: OptionsKind,
    /// `dryRun=All`: everything but the write.
    pub dry_run: bool,
    /// The manager the write is recorded under: `fieldManager`, else from the User-Agent
    /// (`handlers/rest.go` `managerOrUserAgent`).
    pub field_manager: String,
    /// `fieldValidation`: `Ignore`, `Strict` or `Warn` (the default).
    pub field_validation: &'static str,
    /// A server-side apply patch (`application/apply-patch+yaml`).
    pub apply: bool,
    /// `force` (apply only): take the conflicting fields from their managers.
    pub force: bool,
}

impl WriteOptions {
    /// Decode and validate a write's options as `ValidateCreateOptions` /
    /// `ValidateUpdateOptions` / `ValidatePatchOptions` do
    /// (`apimachinery/pkg/apis/meta/v1/validation/validation.go`): for a patch, `force` only
    /// with apply and `fieldManager` required for apply; then `fieldManager`, `dryRun`,
    /// `fieldValidation`. Errors: one 422 `<Kind>.meta.k8s.io "" is invalid` listing each.
    pub fn decode(
        q: &Query,
        user_agent: &str,
        kind: OptionsKind,
        apply: bool,
    ) -> ApiResult<WriteOptions> {
        let mut errs = field_manager_errors(q, kind, apply);
        let dry_run = match q.get("dryRun").map(String::as_str) {
            None | Some("") => false,
            Some("All") => true,
            Some(other) => {
                errs.push(dry_run_error(other));
                false
            }
        };
        let field_validation = match q.get("fieldValidation").map(String::as_str) {
            None | Some("") => "Warn",
            Some("Ignore") => "Ignore",
            Some("Strict") => "Strict",
            Some("Warn") => "Warn",
            Some(other) => {
                errs.push(FieldError {
                    error_type: ErrorType::NotSupported,
                    field: "fieldValidation".into(),
                    bad_value: Some(json!(other)),
                    detail: "supported values: \"\", \"Ignore\", \"Strict\", \"Warn\"".into(),
                });
                "Warn"
            }
        };
        if !errs.is_empty() {
            return Err(ApiError::invalid(
                &GroupKind {
                    kind: kind.kind().into(),
                    group: "meta.k8s.io".into(),
                },
                "",
                &errs,
            ));
        }
        Ok(WriteOptions {
            kind,
            dry_run,
            field_manager: manager_or_user_agent(q, user_agent),
            field_validation,
            apply,
            force: apply && query_bool(q, "force").unwrap_or(false),
        })
    }
}

/// `FieldManagerMaxLength`: a manager name is at most 128 bytes.
pub const FIELD_MANAGER_MAX_LENGTH: usize = 128;

/// The errors of `ValidatePatchOptions`' apply rules (a patch: `force` only with apply,
/// `fieldManager` required for apply) and of `ValidateFieldManager` (at most
/// [`FIELD_MANAGER_MAX_LENGTH`] bytes, printable characters only).
fn field_manager_errors(q: &Query, kind: OptionsKind, apply: bool) -> Vec<FieldError> {
    let manager = q.get("fieldManager").map(String::as_str).unwrap_or("");
    let mut errs = Vec::new();
    if kind == OptionsKind::Patch {
        if !apply && q.contains_key("force") {
            errs.push(forbidden(
                "force",
                "may not be specified for non-apply patch",
            ));
        }
        if apply && manager.is_empty() {
            errs.push(FieldError {
                error_type: ErrorType::Required,
                field: "fieldManager".into(),
                bad_value: None,
                detail: "is required for apply patch".into(),
            });
        }
    }
    if manager.len() > FIELD_MANAGER_MAX_LENGTH {
        errs.push(FieldError {
            error_type: ErrorType::TooLong,
            field: "fieldManager".into(),
            bad_value: None,
            detail: format!("may not be more than {FIELD_MANAGER_MAX_LENGTH} bytes"),
        });
    }
    for (i, c) in manager.char_indices() {
        if !is_print(c) {
            errs.push(FieldError {
                error_type: ErrorType::Invalid,
                field: "fieldManager".into(),
                bad_value: Some(json!(manager)),
                detail: format!("invalid character U+{:04X} (at position {i})", c as u32),
            });
        }
    }
    errs
}

/// The manager a write is recorded under (`handlers/rest.go` `managerOrUserAgent`): the
/// `fieldManager` query parameter, else the User-Agent up to its first `/` without unprintable
/// characters, cut to [`FIELD_MANAGER_MAX_LENGTH`].
fn manager_or_user_agent(q: &Query, user_agent: &str) -> String {
    let manager = q.get("fieldManager").map(String::as_str).unwrap_or("");
    if !manager.is_empty() {
        return manager.to_string();
    }
    let mut out = String::new();
    for c in user_agent.split('/').next().unwrap_or("").chars() {
        if !is_print(c) {
            continue;
        }
        if out.len() + c.len_utf8() > FIELD_MANAGER_MAX_LENGTH {
            break;
        }
        out.push(c);
    }
    out
}
/// Go's `unicode.IsPrint`: letters, marks, numbers, punctuation, symbols and the ASCII space
/// — not other spaces, controls, format characters, surrogates, private use or unassigned
/// code points.
fn is_print(c: char) -> bool {
    use unicode_general_category::{get_general_category, GeneralCategory as G};
    c == ' '
        || !matches!(
            get_general_category(c),
            G::SpaceSeparator
                | G::LineSeparator
                | G::ParagraphSeparator
                | G::Control
                | G::Format
                | G::Surrogate
                | G::PrivateUse
                | G::Unassigned
        )
}

/// `dryRun` of a delete given in the query: absent or empty → `false`, `All` → `true`.
/// Errors: any other value, 422 as `ValidateDryRun` (`meta/v1/validation/validation.go`)
/// answers.
pub fn is_dry_run(q: &Query) -> ApiResult<bool> {
    match q.get("dryRun").map(String::as_str) {
        None | Some("") => Ok(false),
        Some("All") => Ok(true),
        Some(other) => Err(ApiError::invalid(
            &GroupKind {
                kind: "DeleteOptions".into(),
                group: "meta.k8s.io".into(),
            },
            "",
            &[dry_run_error(other)],
        )),
    }
}

/// `ValidateDryRun`'s error for a value other than `All`.
fn dry_run_error(value: &str) -> FieldError {
    FieldError {
        error_type: ErrorType::NotSupported,
        field: "dryRun".into(),
        bad_value: Some(json!([value])),
        detail: "supported values: \"All\"".into(),
    }
}

/// The registry [`ListOptions`] of a list (`watch` false) or a watch, decoded and validated as
/// `ValidateListOptions` does. Errors: 400 for selectors, `limit`, `resourceVersionMatch`
/// values that do not parse; 422 `ListOptions.meta.k8s.io "" is invalid` for forbidden
/// combinations.
pub fn list_options(r: &Store, q: &HashMap<String, String>, watch: bool) -> ApiResult<ListOptions> {
    let label = LabelSelector::parse(q.get("labelSelector").map(String::as_str).unwrap_or(""))
        .map_err(|e| {
            ApiError::bad_request(format!("unable to parse requirement: {e}").replace(
                "unable to parse requirement: unable to parse requirement",
                "unable to parse requirement",
            ))
        })?;
    let field = FieldSelector::parse(q.get("fieldSelector").map(String::as_str).unwrap_or(""))
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    for req in &field.requirements {
        let ok = req.field == "metadata.name"
            || (req.field == "metadata.namespace" && r.description.namespaced)
            || r.description.selectable_fields.contains(&req.field);
        if !ok {
            return Err(ApiError::bad_request(format!(
                "field label not supported: {}",
                req.field
            )));
        }
    }
    let limit = match q.get("limit").map(String::as_str) {
        None | Some("") => 0,
        Some(l) => l
            .parse::<i64>()
            .map_err(|_| ApiError::bad_request(format!("invalid limit: {l}")))?
            .max(0),
    };
    let rv = q.get("resourceVersion").cloned().unwrap_or_default();
    let mut send_initial_events = query_bool(q, "sendInitialEvents");
    let mut rvm_text = q
        .get("resourceVersionMatch")
        .map(String::as_str)
        .unwrap_or("");
    // `SetListOptionsDefaults` (WatchList on, as in 1.32): a watch from "" or "0" without
    // either option is a watch-list — initial events, then the end bookmark when allowed.
    if watch && send_initial_events.is_none() && rvm_text.is_empty() && (rv.is_empty() || rv == "0")
    {
        send_initial_events = Some(true);
        rvm_text = "NotOlderThan";
    }
    let continue_token = q.get("continue").map(String::as_str).unwrap_or("");
    let errs = if watch {
        watch_options_errors(rvm_text, send_initial_events, continue_token)
    } else {
        list_options_errors(rvm_text, &rv, send_initial_events, continue_token)
    };
    if !errs.is_empty() {
        return Err(ApiError::invalid(
            &GroupKind {
                kind: "ListOptions".into(),
                group: "meta.k8s.io".into(),
            },
            "",
            &errs,
        ));
    }
    let rvm =
        ResourceVersionMatch::parse(rvm_text).map_err(|e| ApiError::from_storage(&e, &r.gr, ""))?;
    Ok(ListOptions {
        label_selector: label,
        field_selector: field,
        resource_version: rv,
        resource_version_match: rvm,
        limit,
        continue_token: continue_token.to_string(),
        allow_watch_bookmarks: query_bool(q, "allowWatchBookmarks").unwrap_or(false),
        send_initial_events,
        watch_deadline: None,
    })
}

fn forbidden(field: &str, detail: &str) -> FieldError {
    FieldError {
        error_type: ErrorType::Forbidden,
        field: field.into(),
        bad_value: None,
        detail: detail.into(),
    }
}

fn rvm_not_supported(value: &str, supported: &str) -> FieldError {
    FieldError {
        error_type: ErrorType::NotSupported,
        field: "resourceVersionMatch".into(),
        bad_value: Some(json!(value)),
        detail: format!("supported values: {supported}"),
    }
}

/// `ValidateListOptions` for a list (`meta/internalversion/validation/validation.go`).
fn list_options_errors(
    rvm: &str,
    rv: &str,
    send_initial_events: Option<bool>,
    continue_token: &str,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if send_initial_events.is_some() {
        errs.push(forbidden(
            "sendInitialEvents",
            "sendInitialEvents is forbidden for list",
        ));
    }
    if !rvm.is_empty() {
        if rv.is_empty() {
            errs.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden unless resourceVersion is provided",
            ));
        }
        if !continue_token.is_empty() {
            errs.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden when continue is provided",
            ));
        }
        if rvm != "Exact" && rvm != "NotOlderThan" {
            errs.push(rvm_not_supported(rvm, "\"Exact\", \"NotOlderThan\", \"\""));
        }
        if rvm == "Exact" && rv == "0" {
            errs.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            ));
        }
    }
    errs
}

/// `validateWatchOptions` (same file; the WatchList feature is on, as in kube 1.32): with
/// `sendInitialEvents`, `resourceVersionMatch` must be `NotOlderThan`, and it is allowed only
/// then — any `resourceVersion`, `""` included (a consistent read, then the watch: KEP-3157).
fn watch_options_errors(
    rvm: &str,
    send_initial_events: Option<bool>,
    continue_token: &str,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    if send_initial_events.is_some() && rvm != "NotOlderThan" {
        errs.push(forbidden(
            "resourceVersionMatch",
            "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
        ));
    }
    if !rvm.is_empty() {
        if send_initial_events.is_none() {
            errs.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            ));
        }
        if rvm != "NotOlderThan" {
            errs.push(rvm_not_supported(rvm, "\"NotOlderThan\""));
        }
        if !continue_token.is_empty() {
            errs.push(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden when continue is provided",
            ));
        }
    }
    errs
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
    fn write_options_decoded_and_validated_together() {
        let o = WriteOptions::decode(&HashMap::new(), "kubectl/v1.32", OptionsKind::Create, false)
            .unwrap();
        assert_eq!(
            (o.dry_run, o.field_manager.as_str(), o.field_validation),
            (false, "kubectl", "Warn")
        );
        let o = WriteOptions::decode(
            &HashMap::from([
                ("fieldValidation".to_string(), "Strict".to_string()),
                ("dryRun".to_string(), "All".to_string()),
                ("fieldManager".to_string(), "me".to_string()),
            ]),
            "",
            OptionsKind::Update,
            false,
        )
        .unwrap();
        assert_eq!(
            (o.dry_run, o.field_manager.as_str(), o.field_validation),
            (true, "me", "Strict")
        );
        let e = WriteOptions::decode(
            &q("fieldValidation", "Garbage"),
            "",
            OptionsKind::Patch,
            false,
        )
        .unwrap_err();
        assert_eq!(e.code, 422);
        assert!(
            e.message.starts_with("PatchOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: \"Garbage\": supported values:"),
            "{}",
            e.message
        );
        // ValidatePatchOptions: every error of the options in one answer, in kube's order.
        let e = WriteOptions::decode(
            &HashMap::from([
                ("dryRun".to_string(), "Some".to_string()),
                ("fieldValidation".to_string(), "Garbage".to_string()),
            ]),
            "",
            OptionsKind::Patch,
            true,
        )
        .unwrap_err();
        let fields: Vec<&str> = e.details.as_ref().unwrap()["causes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["field"].as_str().unwrap())
            .collect();
        assert_eq!(fields, ["fieldManager", "dryRun", "fieldValidation"]);
        assert!(
            e.message.starts_with("PatchOptions.meta.k8s.io"),
            "{}",
            e.message
        );
    }
}
