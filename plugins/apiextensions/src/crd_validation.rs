//! Validation of a CustomResourceDefinition (`apiextensions.k8s.io/v1`), as kube validates one
//! when it is written (`apiextensions-apiserver/pkg/apis/apiextensions/validation/
//! validation.go`: `ValidateCustomResourceDefinition`, `…Spec`, `…Names`, `…StoredVersions`,
//! `…ColumnDefinition`, `…Subresources`, `…Conversion`, `…SpecUpdate`), over the object's
//! JSON. Field paths are kube's, which name the internal type's fields
//! (`additionalPrinterColumns[0].JSONPath`, `conversion.webhookClientConfig`).
//!
//! Also here: every version's schema is required (v1), and its `x-kubernetes-validations`
//! must compile ([`crate::cel_validation`]); the warnings for rules kube would refuse for
//! their estimated cost are returned beside the errors; the schema must be structural
//! ([`crate::structural_validation`]) and follow kube's per-node rules
//! ([`crate::schema_validation`]); defaults are pruned and valid
//! ([`crate::defaulting::validate_defaults`]); selectable fields point to scalar fields.

use crate::cel_validation::Rules;
use crate::structural::Structural;
use serde_json::Value as Json;
use wasm_apiserver_apimachinery::field::{self, ErrorList, Path};
use wasm_apiserver_apimachinery::validation::{is_dns1035_label, is_dns1123_subdomain};

const PRINTER_COLUMN_TYPES: &str = "boolean,date,integer,number,string";
const PRINTER_COLUMN_FORMATS: &str = "byte,date,date-time,double,float,int32,int64,password";
/// The annotation a CRD of a protected group (`*.k8s.io`, `*.kubernetes.io`) must carry.
pub const API_APPROVED_ANNOTATION: &str = "api-approved.kubernetes.io";

/// What validating a CRD found: errors refuse it, warnings go back with the answer.
#[derive(Debug, Default)]
pub struct Report {
    pub errors: ErrorList,
    pub warnings: Vec<String>,
}

fn str_at<'a>(v: &'a Json, path: &[&str]) -> &'a str {
    path.iter()
        .try_fold(v, |v, k| v.get(k))
        .and_then(Json::as_str)
        .unwrap_or("")
}

/// Validate a CRD being created.
pub fn validate(crd: &Json) -> Report {
    let mut report = Report::default();
    let errors = &mut report.errors;
    let group = str_at(crd, &["spec", "group"]);
    let plural = str_at(crd, &["spec", "names", "plural"]);
    let name = str_at(crd, &["metadata", "name"]);
    if name != format!("{plural}.{group}") {
        let detail = r#"must be spec.names.plural+"."+spec.group"#;
        errors.push(field::invalid(
            &Path::new("metadata").child("name"),
            name,
            detail,
        ));
    }
    validate_approval(crd, group, errors);
    let spec = crd.get("spec").cloned().unwrap_or(Json::Null);
    validate_spec(&spec, &Path::new("spec"), &mut report);
    let status_names = crd.get("status").and_then(|s| s.get("acceptedNames"));
    if let Some(names) = status_names {
        let at = Path::new("status").child("acceptedNames");
        report.errors.extend(validate_names(names, &at));
    }
    let stored: Vec<&str> = crd
        .get("status")
        .and_then(|s| s.get("storedVersions"))
        .and_then(Json::as_array)
        .map(|v| v.iter().filter_map(Json::as_str).collect())
        .unwrap_or_default();
    report
        .errors
        .extend(validate_stored_versions(&stored, &spec));
    report
}

/// Validate an update of a CRD: [`validate`], and the fields that cannot change — `group`
/// and `names.plural` always, `scope` and `names.kind` once the CRD is Established.
pub fn validate_update(crd: &Json, old: &Json) -> Report {
    let mut report = validate(crd);
    let established = old
        .get("status")
        .and_then(|s| s.get("conditions"))
        .and_then(Json::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| str_at(c, &["type"]) == "Established" && str_at(c, &["status"]) == "True")
        });
    let spec = Path::new("spec");
    let mut immutable = |at: Path, keys: &[&str]| {
        let (new, was) = (str_at(crd, keys), str_at(old, keys));
        if new != was {
            report
                .errors
                .push(field::invalid(&at, new, "field is immutable"));
        }
    };
    if established {
        immutable(spec.child("scope"), &["spec", "scope"]);
        immutable(
            spec.child("names").child("kind"),
            &["spec", "names", "kind"],
        );
    }
    immutable(spec.child("group"), &["spec", "group"]);
    immutable(
        spec.child("names").child("plural"),
        &["spec", "names", "plural"],
    );
    // kube's update options (`validationOptions` in validation.go): a review version this
    // server speaks is required only if the old CRD named one, and an invalid caBundle is
    // allowed while the CRD is not Established or its old bundle was invalid too, so that a
    // stored CRD can always be updated.
    let old_conversion = old.pointer("/spec/conversion");
    let old_versions = old_conversion.and_then(|c| c.pointer("/webhook/conversionReviewVersions"));
    let require_recognized =
        old_versions.is_none() || crate::conversion::review_version(old).is_some();
    let old_ca = old_conversion.and_then(|c| c.pointer("/webhook/clientConfig/caBundle"));
    let allow_invalid_ca = !established
        || old_ca.is_some_and(|ca| {
            !ca.as_str().unwrap_or("").is_empty()
                && !validate_ca_bundle(ca, &Path::new("caBundle")).is_empty()
        });
    report.errors.retain(|e| {
        let review = e.field == "spec.conversion.conversionReviewVersions"
            && e.detail.starts_with("must include at least one of");
        let ca = e.field == "spec.conversion.webhookClientConfig.caBundle";
        let relaxed = (review && !require_recognized) || (ca && allow_invalid_ca);
        !relaxed
    });
    report
}

/// Validate a write of a CRD's status subresource: its accepted names only, as kube's
/// `ValidateUpdateCustomResourceDefinitionStatus` → `ValidateCustomResourceDefinitionStatus`
/// (apiextensions-apiserver/pkg/apis/apiextensions/validation/validation.go) — the spec is
/// the stored one (the status strategy keeps it), so its schemas and CEL rules are not
/// compiled again on every status write.
pub fn validate_status_update(crd: &Json) -> Report {
    let mut report = Report::default();
    if let Some(names) = crd.get("status").and_then(|s| s.get("acceptedNames")) {
        let at = Path::new("status").child("acceptedNames");
        report.errors.extend(validate_names(names, &at));
    }
    report
}

/// The `api-approved.kubernetes.io` rule for the protected groups (KEP-1111).
fn validate_approval(crd: &Json, group: &str, errors: &mut ErrorList) {
    let protected = ["k8s.io", "kubernetes.io"]
        .iter()
        .any(|g| group == *g || group.ends_with(&format!(".{g}")));
    if !protected {
        return;
    }
    let at = Path::new("metadata")
        .child("annotations")
        .key(API_APPROVED_ANNOTATION);
    let see = "see https://github.com/kubernetes/enhancements/pull/1111";
    match crd
        .get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get(API_APPROVED_ANNOTATION))
        .and_then(Json::as_str)
    {
        None => errors.push(field::required(
            &at,
            format!("protected groups must have approval annotation \"{API_APPROVED_ANNOTATION}\", {see}"),
        )),
        Some(v) if !(v.starts_with("unapproved") || v.starts_with("https://") || v.starts_with("http://")) => {
            errors.push(field::invalid(
                &at,
                v,
                format!(
                    "protected groups must have approval annotation \"{API_APPROVED_ANNOTATION}\" \
                     with either a URL or a reason starting with \"unapproved\", {see}"
                ),
            ))
        }
        Some(_) => {}
    }
}

fn validate_spec(spec: &Json, at: &Path, report: &mut Report) {
    let errors = &mut report.errors;
    let group = str_at(spec, &["group"]);
    if group.is_empty() {
        errors.push(field::required(&at.child("group"), ""));
    } else if let errs @ [_, ..] = is_dns1123_subdomain(group).as_slice() {
        errors.push(field::invalid(&at.child("group"), group, errs.join(",")));
    } else if !group.contains('.') {
        let detail = "should be a domain with at least one dot";
        errors.push(field::invalid(&at.child("group"), group, detail));
    }
    match str_at(spec, &["scope"]) {
        "" => errors.push(field::required(&at.child("scope"), "")),
        "Cluster" | "Namespaced" => {}
        other => errors.push(field::not_supported(
            &at.child("scope"),
            other,
            &["Cluster", "Namespaced"],
        )),
    }
    let versions = spec
        .get("versions")
        .and_then(Json::as_array)
        .cloned()
        .unwrap_or_default();
    let mut storage = 0;
    let mut seen = Vec::new();
    let mut unique = true;
    for (i, v) in versions.iter().enumerate() {
        let vat = at.child("versions").index(i);
        let name = str_at(v, &["name"]);
        if v.get("storage").and_then(Json::as_bool) == Some(true) {
            storage += 1;
        }
        if seen.contains(&name) {
            unique = false;
        }
        seen.push(name);
        if let errs @ [_, ..] = is_dns1035_label(name).as_slice() {
            report
                .errors
                .push(field::invalid(&vat.child("name"), name, errs.join(",")));
        }
        validate_version(v, &vat, report);
    }
    let errors = &mut report.errors;
    let versions_json = Json::Array(versions.clone());
    if !unique {
        let detail = "must contain unique version names";
        errors.push(field::invalid(
            &at.child("versions"),
            &versions_json,
            detail,
        ));
    }
    if storage != 1 {
        let detail = "must have exactly one version marked as storage version";
        errors.push(field::invalid(
            &at.child("versions"),
            &versions_json,
            detail,
        ));
    }
    let names = at.child("names");
    for key in ["plural", "singular", "kind", "listKind"] {
        if str_at(spec, &["names", key]).is_empty() {
            errors.push(field::required(&names.child(key), ""));
        }
    }
    if let Some(n) = spec.get("names") {
        errors.extend(validate_names(n, &names));
    }
    if let Some(c) = spec.get("conversion") {
        errors.extend(validate_conversion(c, &at.child("conversion")));
    }
}

fn validate_version(v: &Json, at: &Path, report: &mut Report) {
    match v.get("schema").and_then(|s| s.get("openAPIV3Schema")) {
        None => report.errors.push(field::required(
            &at.child("schema").child("openAPIV3Schema"),
            "schemas are required",
        )),
        Some(schema) => {
            let schema_at = at.child("schema").child("openAPIV3Schema");
            report
                .errors
                .extend(crate::schema_validation::validate(schema, &schema_at));
            let structural = crate::structural_validation::validate(schema, &schema_at);
            if structural.is_empty() {
                let parsed = Structural::from_json(schema);
                report
                    .errors
                    .extend(crate::defaulting::validate_defaults(&parsed, &schema_at));
                let (_, compiled) = Rules::compile(schema);
                for mut e in compiled.errors {
                    e.field = format!("{schema_at}.{}", e.field);
                    report.errors.push(e);
                }
                for w in compiled.warnings {
                    report.warnings.push(format!("{schema_at}.{w}"));
                }
            } else {
                // kube compiles the rules of structural schemas only.
                report.errors.extend(structural);
            }
        }
    }
    if let Some(sub) = v.get("subresources") {
        report
            .errors
            .extend(validate_subresources(sub, &at.child("subresources")));
    }
    let selectable = v.get("selectableFields").and_then(Json::as_array);
    if let Some(fields) = selectable {
        let schema = v.get("schema").and_then(|s| s.get("openAPIV3Schema"));
        let fat = at.child("selectableFields");
        report
            .errors
            .extend(validate_selectable_fields(fields, schema, &fat));
    }
    let columns = v.get("additionalPrinterColumns").and_then(Json::as_array);
    for (i, c) in columns.into_iter().flatten().enumerate() {
        let cat = at.child("additionalPrinterColumns").index(i);
        report.errors.extend(validate_column(c, &cat));
    }
}

/// The most selectable fields a version may declare (kube's `MaxSelectableFields`).
const MAX_SELECTABLE_FIELDS: usize = 8;

/// `validateSelectableFields`: at most 8, each a `jsonPath` to a string, integer or boolean
/// field of the schema, none twice.
fn validate_selectable_fields(fields: &[Json], schema: Option<&Json>, at: &Path) -> ErrorList {
    let mut errors = Vec::new();
    if fields.len() > MAX_SELECTABLE_FIELDS {
        errors.push(field::too_many(at, fields.len(), MAX_SELECTABLE_FIELDS));
    }
    let mut seen = Vec::new();
    for (i, f) in fields.iter().enumerate() {
        let pat = at.index(i).child("jsonPath");
        let path = str_at(f, &["jsonPath"]);
        if path.is_empty() {
            errors.push(field::required(&pat, ""));
            continue;
        }
        let target = path
            .strip_prefix('.')
            .map(|p| p.split('.').collect::<Vec<_>>())
            .and_then(|segments| {
                segments.iter().try_fold(schema?, |s, seg| {
                    s.get("properties").and_then(|p| p.get(*seg))
                })
            });
        match target {
            None => errors.push(field::invalid(
                &pat,
                path,
                "is an invalid path: does not refer to a valid field",
            )),
            Some(s) if !matches!(str_at(s, &["type"]), "string" | "integer" | "boolean") => {
                errors.push(field::invalid(
                    &pat,
                    path,
                    "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.",
                ))
            }
            Some(_) => {}
        }
        if seen.contains(&path) {
            errors.push(field::duplicate(&pat, path));
        }
        seen.push(path);
    }
    errors
}

/// `ValidateCustomResourceDefinitionNames`.
fn validate_names(n: &Json, at: &Path) -> ErrorList {
    let mut errors = Vec::new();
    let mut label = |key: &str, mixed_case: bool| {
        let value = str_at(n, &[key]);
        if value.is_empty() {
            return;
        }
        let errs = is_dns1035_label(&if mixed_case {
            value.to_lowercase()
        } else {
            value.to_string()
        });
        if !errs.is_empty() {
            let detail = if mixed_case {
                format!(
                    "may have mixed case, but should otherwise match: {}",
                    errs.join(",")
                )
            } else {
                errs.join(",")
            };
            errors.push(field::invalid(&at.child(key), value, detail));
        }
    };
    label("plural", false);
    label("singular", false);
    label("kind", true);
    label("listKind", true);
    for key in ["shortNames", "categories"] {
        let values = n.get(key).and_then(Json::as_array);
        for (i, v) in values.into_iter().flatten().enumerate() {
            let v = v.as_str().unwrap_or("");
            if let errs @ [_, ..] = is_dns1035_label(v).as_slice() {
                errors.push(field::invalid(&at.child(key).index(i), v, errs.join(",")));
            }
        }
    }
    let (kind, list_kind) = (str_at(n, &["kind"]), str_at(n, &["listKind"]));
    if !kind.is_empty() && kind == list_kind {
        let detail = "kind and listKind may not be the same";
        errors.push(field::invalid(&at.child("listKind"), list_kind, detail));
    }
    errors
}

/// `ValidateCustomResourceDefinitionStoredVersions`.
fn validate_stored_versions(stored: &[&str], spec: &Json) -> ErrorList {
    let at = Path::new("status").child("storedVersions");
    if stored.is_empty() {
        let detail = "must have at least one stored version";
        return vec![field::invalid(&at, Json::Array(vec![]), detail)];
    }
    let mut errors = Vec::new();
    let versions = spec.get("versions").and_then(Json::as_array);
    let names: Vec<&str> = versions
        .into_iter()
        .flatten()
        .map(|v| str_at(v, &["name"]))
        .collect();
    for v in versions.into_iter().flatten() {
        let name = str_at(v, &["name"]);
        if v.get("storage").and_then(Json::as_bool) == Some(true) && !stored.contains(&name) {
            let detail = format!("must have the storage version {name}");
            errors.push(field::invalid(&at, v, detail));
        }
    }
    for (i, s) in stored.iter().enumerate() {
        if !names.contains(s) {
            errors.push(field::invalid(
                &at.index(i),
                *s,
                "must appear in spec.versions",
            ));
        }
    }
    errors
}

/// `ValidateCustomResourceColumnDefinition`.
fn validate_column(c: &Json, at: &Path) -> ErrorList {
    let mut errors = Vec::new();
    if str_at(c, &["name"]).is_empty() {
        errors.push(field::required(&at.child("name"), ""));
    }
    let t = str_at(c, &["type"]);
    let types = format!("must be one of {PRINTER_COLUMN_TYPES}");
    if t.is_empty() {
        errors.push(field::required(&at.child("type"), types));
    } else if !PRINTER_COLUMN_TYPES.split(',').any(|x| x == t) {
        errors.push(field::invalid(&at.child("type"), t, types));
    }
    let f = str_at(c, &["format"]);
    if !f.is_empty() && !PRINTER_COLUMN_FORMATS.split(',').any(|x| x == f) {
        let detail = format!("must be one of {PRINTER_COLUMN_FORMATS}");
        errors.push(field::invalid(&at.child("format"), f, detail));
    }
    let path = str_at(c, &["jsonPath"]);
    if path.is_empty() {
        errors.push(field::required(&at.child("JSONPath"), ""));
    } else {
        errors.extend(validate_simple_json_path(path, &at.child("JSONPath")));
    }
    errors
}

fn validate_simple_json_path(s: &str, at: &Path) -> ErrorList {
    if s.is_empty() {
        return vec![field::invalid(at, s, "must not be empty")];
    }
    if !s.starts_with('.') {
        return vec![field::invalid(
            at,
            s,
            "must be a simple json path starting with .",
        )];
    }
    vec![]
}

/// `ValidateCustomResourceDefinitionSubresources`: the scale subresource's paths.
fn validate_subresources(sub: &Json, at: &Path) -> ErrorList {
    let mut errors = Vec::new();
    let Some(scale) = sub.get("scale") else {
        return errors;
    };
    for (key, prefix, required) in [
        ("specReplicasPath", ".spec.", true),
        ("statusReplicasPath", ".status.", true),
        ("labelSelectorPath", ".status.", false),
    ] {
        let p = str_at(scale, &[key]);
        let pat = at.child(&format!("scale.{key}"));
        if p.is_empty() {
            if required {
                errors.push(field::required(&pat, ""));
            }
            continue;
        }
        let errs = validate_simple_json_path(p, &pat);
        if !errs.is_empty() {
            errors.extend(errs);
        } else if !p.starts_with(prefix) {
            let under = prefix.trim_end_matches('.');
            errors.push(field::invalid(
                &pat,
                p,
                format!("should be a json path under {under}"),
            ));
        }
    }
    errors
}

/// `validateCustomResourceConversion` (apiextensions-apiserver/pkg/apis/apiextensions/
/// validation/validation.go): `None` or `Webhook`; a webhook by `url` (this server has no
/// Services to call), checked as kube's `webhook.ValidateWebhookURL` and `ValidateCABundle`
/// (k8s.io/apiserver/pkg/util/webhook/validation.go), with `conversionReviewVersions`
/// naming one this server speaks.
fn validate_conversion(c: &Json, at: &Path) -> ErrorList {
    let mut errors = Vec::new();
    let client = c.get("webhook").and_then(|w| w.get("clientConfig"));
    let cc_at = at.child("webhookClientConfig");
    match str_at(c, &["strategy"]) {
        "" => errors.push(field::required(&at.child("strategy"), "")),
        "None" => {
            if client.is_some() {
                let detail = "should not be set when strategy is not set to Webhook";
                errors.push(field::forbidden(&cc_at, detail));
            }
        }
        "Webhook" => {
            match client {
                None => errors.push(field::required(
                    &cc_at,
                    "required when strategy is set to Webhook",
                )),
                Some(cc) => match (cc.get("url"), cc.get("service")) {
                    (Some(_), Some(_)) | (None, None) => errors.push(field::required(
                        &cc_at,
                        "exactly one of url or service is required",
                    )),
                    (None, Some(_)) => errors.push(field::forbidden(
                        &cc_at.child("service"),
                        "this server has no Services: use url",
                    )),
                    (Some(url), None) => {
                        let url = url.as_str().unwrap_or("");
                        errors.extend(validate_webhook_url(url, &cc_at.child("url")));
                    }
                },
            }
            if let Some(ca) = client.and_then(|cc| cc.get("caBundle")) {
                errors.extend(validate_ca_bundle(ca, &cc_at.child("caBundle")));
            }
            let versions = c
                .get("webhook")
                .and_then(|w| w.get("conversionReviewVersions"));
            let at = at.child("conversionReviewVersions");
            errors.extend(validate_conversion_review_versions(versions, &at));
        }
        other => errors.push(field::not_supported(
            &at.child("strategy"),
            other,
            &["None", "Webhook"],
        )),
    }
    errors
}

/// `ValidateWebhookURL` with `forceHttps`: a URL (else `url must be a valid URL`), `https`,
/// with a host and no user information, fragment or query.
fn validate_webhook_url(text: &str, at: &Path) -> ErrorList {
    const FORM: &str = "; desired format: https://host[/path]";
    let u = match url::Url::parse(text) {
        Ok(u) => u,
        Err(e) => {
            return vec![field::required(
                at,
                format!("url must be a valid URL: {e}{FORM}"),
            )];
        }
    };
    let mut errors = Vec::new();
    if u.scheme() != "https" {
        let detail = format!("'https' is the only allowed URL scheme{FORM}");
        errors.push(field::invalid(at, u.scheme(), detail));
    }
    let host = u.host_str().unwrap_or("");
    if host.is_empty() {
        errors.push(field::invalid(
            at,
            host,
            format!("host must be specified{FORM}"),
        ));
    }
    if !u.username().is_empty() || u.password().is_some() {
        let user = match u.password() {
            Some(p) => format!("{}:{p}", u.username()),
            None => u.username().to_string(),
        };
        let detail = "user information is not permitted in the URL";
        errors.push(field::invalid(at, user, detail));
    }
    if let Some(f) = u.fragment().filter(|f| !f.is_empty()) {
        errors.push(field::invalid(
            at,
            f,
            "fragments are not permitted in the URL",
        ));
    }
    if let Some(q) = u.query().filter(|q| !q.is_empty()) {
        errors.push(field::invalid(
            at,
            q,
            "query parameters are not permitted in the URL",
        ));
    }
    errors
}

/// `ValidateCABundle`: base64 of PEM certificates, each a well-formed DER sequence (client-go's
/// `rootCertPool` texts; the certificate itself is parsed by the host when it builds the
/// webhook's client).
fn validate_ca_bundle(ca: &Json, at: &Path) -> ErrorList {
    use base64::Engine;
    let text = ca.as_str().unwrap_or("");
    let invalid = |detail: &str| {
        vec![field::invalid(
            at,
            text,
            format!("unable to load root certificates: {detail}"),
        )]
    };
    let Ok(pem) = base64::engine::general_purpose::STANDARD.decode(text) else {
        return vec![field::invalid(at, text, "illegal base64 data")];
    };
    let pem = String::from_utf8_lossy(&pem);
    if pem.trim().is_empty() {
        // kube treats a whitespace-only bundle as none (`webhookClientConfigForCRD`).
        return Vec::new();
    }
    let mut certificates = 0;
    let mut rest = pem.as_ref();
    while let Some(start) = rest.find("-----BEGIN ") {
        let after = &rest[start + "-----BEGIN ".len()..];
        let Some((kind, body)) = after.split_once("-----") else {
            break;
        };
        let end_marker = format!("-----END {kind}-----");
        let Some((body, tail)) = body.split_once(&end_marker) else {
            return invalid("unable to parse bytes as PEM block");
        };
        rest = tail;
        if kind != "CERTIFICATE" {
            continue;
        }
        let b64: String = body.split_whitespace().collect();
        let der = base64::engine::general_purpose::STANDARD
            .decode(b64)
            .unwrap_or_default();
        if !is_der_sequence(&der) {
            return invalid("failed to parse certificate: x509: malformed certificate");
        }
        certificates += 1;
    }
    if certificates == 0 {
        return invalid("unable to parse bytes as PEM block");
    }
    Vec::new()
}

/// Whether `der` is one complete DER SEQUENCE (what every X.509 certificate is).
fn is_der_sequence(der: &[u8]) -> bool {
    let (Some(0x30), Some(&first)) = (der.first(), der.get(1)) else {
        return false;
    };
    let (len, header) = if first < 0x80 {
        (first as usize, 2)
    } else {
        let n = (first & 0x7f) as usize;
        if n == 0 || n > 4 || der.len() < 2 + n {
            return false;
        }
        let len = der[2..2 + n]
            .iter()
            .fold(0usize, |l, b| (l << 8) | *b as usize);
        (len, 2 + n)
    };
    der.len() == header + len
}

/// `validateConversionReviewVersions`: present, no duplicates, DNS-1035 labels, and one of
/// `v1`, `v1beta1` (kube requires a recognized version on create).
fn validate_conversion_review_versions(versions: Option<&Json>, at: &Path) -> ErrorList {
    let versions: Vec<&str> = versions
        .and_then(Json::as_array)
        .map(|v| v.iter().map(|s| s.as_str().unwrap_or("")).collect())
        .unwrap_or_default();
    if versions.is_empty() {
        return vec![field::required(at, "")];
    }
    let mut errors = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for (i, v) in versions.iter().enumerate() {
        if !seen.insert(*v) {
            errors.push(field::invalid(&at.index(i), v, "duplicate version"));
            continue;
        }
        for e in is_dns1035_label(v) {
            errors.push(field::invalid(&at.index(i), v, e));
        }
    }
    if !versions.iter().any(|v| *v == "v1" || *v == "v1beta1") {
        errors.push(field::invalid(
            at,
            &versions,
            "must include at least one of v1, v1beta1",
        ));
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd() -> Json {
        json!({
            "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                               "listKind": "WidgetList", "shortNames": ["wd"]},
                     "versions": [{"name": "v1", "served": true, "storage": true,
                                   "schema": {"openAPIV3Schema": {"type": "object",
                                       "x-kubernetes-validations": [{"rule": "self.metadata.name.size() < 10"}]}},
                                   "additionalPrinterColumns": [{"name": "Age", "type": "date",
                                       "jsonPath": ".metadata.creationTimestamp"}]}]},
            "status": {"storedVersions": ["v1"]}})
    }

    fn messages(r: &Report) -> Vec<String> {
        r.errors
            .iter()
            .map(|e| format!("{}: {}", e.field, e.body()))
            .collect()
    }

    /// kube's status strategy validates the accepted names only: a status write does not
    /// compile the spec's schemas and CEL rules again (they are the stored spec's).
    #[test]
    fn a_status_update_validates_the_accepted_names_only() {
        let mut crd = crd();
        crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["x-kubernetes-validations"][0]
            ["rule"] = json!("self.nope");
        assert!(!validate(&crd).errors.is_empty());
        crd["status"]["acceptedNames"] = json!({"plural": "", "kind": ""});
        assert_eq!(
            messages(&validate_status_update(&crd)),
            Vec::<String>::new()
        );
        crd["status"]["acceptedNames"] = json!({"plural": "Widgets_", "kind": "Widget"});
        assert_eq!(
            messages(&validate_status_update(&crd)),
            vec!["status.acceptedNames.plural: Invalid value: \"Widgets_\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"]
        );
    }

    /// A conversion webhook by URL, as kube's `validateCustomResourceConversion` checks it.
    #[test]
    fn a_conversion_webhook_is_an_https_url_with_a_review_version() {
        let with = |conversion: Json| {
            let mut c = crd();
            c["spec"]["conversion"] = conversion;
            messages(&validate(&c))
        };
        // A DER SEQUENCE of two bytes: well-formed as far as the structure goes.
        let pem = "-----BEGIN CERTIFICATE-----\nMAMCAQE=\n-----END CERTIFICATE-----\n";
        use base64::Engine;
        let ca = base64::engine::general_purpose::STANDARD.encode(pem);
        assert_eq!(
            with(
                json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"],
                "clientConfig": {"url": "https://127.0.0.1:9443/convert", "caBundle": ca}}})
            ),
            Vec::<String>::new()
        );
        assert_eq!(
            with(json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v2", "v2"],
                "clientConfig": {"url": "http://u:p@h/x?a=1#f", "caBundle": "bm9wZQ=="}}})),
            vec![
                "spec.conversion.webhookClientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
                "spec.conversion.webhookClientConfig.url: Invalid value: \"u:p\": user information is not permitted in the URL",
                "spec.conversion.webhookClientConfig.url: Invalid value: \"f\": fragments are not permitted in the URL",
                "spec.conversion.webhookClientConfig.url: Invalid value: \"a=1\": query parameters are not permitted in the URL",
                "spec.conversion.webhookClientConfig.caBundle: Invalid value: \"bm9wZQ==\": unable to load root certificates: unable to parse bytes as PEM block",
                "spec.conversion.conversionReviewVersions[1]: Invalid value: \"v2\": duplicate version",
                "spec.conversion.conversionReviewVersions: Invalid value: [\"v2\",\"v2\"]: must include at least one of v1, v1beta1",
            ]
        );
        let garbage = base64::engine::general_purpose::STANDARD
            .encode("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n");
        assert_eq!(
            with(json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"],
                "clientConfig": {"url": "not a url", "caBundle": garbage}}})),
            vec![
                "spec.conversion.webhookClientConfig.url: Required value: url must be a valid URL: relative URL without a base; desired format: https://host[/path]".to_string(),
                format!("spec.conversion.webhookClientConfig.caBundle: Invalid value: \"{garbage}\": unable to load root certificates: failed to parse certificate: x509: malformed certificate"),
            ]
        );
        assert_eq!(
            with(json!({"strategy": "Webhook", "webhook": {
                "clientConfig": {"service": {"namespace": "x", "name": "y"}}}})),
            vec![
                "spec.conversion.webhookClientConfig.service: Forbidden: this server has no Services: use url",
                "spec.conversion.conversionReviewVersions: Required value",
            ]
        );
    }

    /// kube's update options: a stored CRD whose bundle or review versions were accepted under
    /// other rules can still be updated.
    #[test]
    fn an_update_keeps_kubes_relaxations_for_the_webhook() {
        let mut old = crd();
        old["spec"]["conversion"] = json!({"strategy": "Webhook", "webhook": {
            "conversionReviewVersions": ["v2"],
            "clientConfig": {"url": "https://h/convert", "caBundle": "bm9wZQ=="}}});
        let mut new = old.clone();
        new["metadata"]["labels"] = json!({"a": "b"});
        assert!(messages(&validate(&new)).len() == 2);
        assert_eq!(messages(&validate_update(&new, &old)), Vec::<String>::new());
        old["status"]["conditions"] = json!([{"type": "Established", "status": "True"}]);
        old["spec"]["conversion"]["webhook"]["clientConfig"]["caBundle"] = json!("");
        assert_eq!(
            messages(&validate_update(&new, &old)),
            vec!["spec.conversion.webhookClientConfig.caBundle: Invalid value: \"bm9wZQ==\": unable to load root certificates: unable to parse bytes as PEM block"]
        );
    }

    /// Cases after `apis/apiextensions/validation/validation_test.go`, rewritten.
    #[test]
    fn a_valid_crd_passes_and_each_rule_has_kube_s_message() {
        assert_eq!(messages(&validate(&crd())), Vec::<String>::new());
        let mut bad = crd();
        bad["metadata"]["name"] = json!("widget.example.com");
        bad["spec"]["group"] = json!("example");
        bad["spec"]["scope"] = json!("Global");
        bad["spec"]["names"]["listKind"] = json!("Widget");
        bad["spec"]["versions"][0]["storage"] = json!(false);
        bad["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["x-kubernetes-validations"][0]
            ["rule"] = json!("self.nope");
        bad["spec"]["versions"][0]["additionalPrinterColumns"][0]["type"] = json!("time");
        bad["status"]["storedVersions"] = json!(["v0"]);
        bad["spec"]["versions"][0]["selectableFields"] =
            json!([{"jsonPath": ".spec.nope"}, {"jsonPath": ".metadata"}]);
        bad["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"] =
            json!({"metadata": {"type": "object"}});
        let got = messages(&validate(&bad));
        for want in [
            "metadata.name: Invalid value: \"widget.example.com\": must be spec.names.plural+\".\"+spec.group",
            "spec.group: Invalid value: \"example\": should be a domain with at least one dot",
            "spec.scope: Unsupported value: \"Global\": supported values: \"Cluster\", \"Namespaced\"",
            "spec.names.listKind: Invalid value: \"Widget\": kind and listKind may not be the same",
            "spec.versions[0].additionalPrinterColumns[0].type: Invalid value: \"time\": must be one of boolean,date,integer,number,string",
            "status.storedVersions[0]: Invalid value: \"v0\": must appear in spec.versions",
            "spec.versions[0].selectableFields[0].jsonPath: Invalid value: \".spec.nope\": is an invalid path: does not refer to a valid field",
            "spec.versions[0].selectableFields[1].jsonPath: Invalid value: \".metadata\": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.",
        ] {
            assert!(got.iter().any(|g| g == want), "{want}\n{got:#?}");
        }
        assert!(
            got.iter()
                .any(|g| g.starts_with("spec.versions: Invalid value: ")
                    && g.ends_with("must have exactly one version marked as storage version")),
            "{got:#?}"
        );
        assert!(got.iter().any(|g| g.starts_with("spec.versions[0].schema.openAPIV3Schema.x-kubernetes-validations[0].rule: Invalid value: \"self.nope\": compilation failed: ERROR: <input>:1:5: undefined field 'nope'")), "{got:#?}");
    }

    #[test]
    fn protected_groups_need_approval_and_names_are_immutable() {
        let mut c = crd();
        c["metadata"]["name"] = json!("widgets.apps.k8s.io");
        c["spec"]["group"] = json!("apps.k8s.io");
        let got = messages(&validate(&c));
        assert_eq!(got, ["metadata.annotations[api-approved.kubernetes.io]: Required value: protected groups must have approval annotation \"api-approved.kubernetes.io\", see https://github.com/kubernetes/enhancements/pull/1111"]);
        c["metadata"]["annotations"] =
            json!({"api-approved.kubernetes.io": "unapproved, experimental"});
        assert!(validate(&c).errors.is_empty());

        let mut old = crd();
        old["status"]["conditions"] = json!([{"type": "Established", "status": "True"}]);
        let mut new = crd();
        new["spec"]["scope"] = json!("Cluster");
        let got = messages(&validate_update(&new, &old));
        assert_eq!(
            got,
            ["spec.scope: Invalid value: \"Cluster\": field is immutable"]
        );
    }
}
