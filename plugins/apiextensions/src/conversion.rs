//! Converting custom resources between a CRD's versions
//! (`apiextensions-apiserver/pkg/apiserver/conversion/`): strategy `None` rewrites the
//! `apiVersion` (`nop_converter.go`); strategy `Webhook` sends a `ConversionReview` and checks
//! what comes back as kube does (`webhook_converter.go`: the review's kind, the uid, the
//! result, the count, each object's `apiVersion`, `kind`, name, namespace and uid; only labels
//! and annotations may change — validated — and the rest of the metadata is the request's).
//!
//! The HTTPS call itself is the caller's (the host's); this module builds the request and
//! reads the response, with kube's error texts.

use std::collections::BTreeMap;

use serde_json::{json, Value as Json};
use wasm_apiserver_apimachinery::field::{ErrorList, Path};
use wasm_apiserver_apimachinery::validation::{validate_annotations, validate_labels};

/// `None` conversion: `obj` as `desired_api_version`.
pub fn convert_none(obj: &mut Json, desired_api_version: &str) {
    if let Some(o) = obj.as_object_mut() {
        o.insert("apiVersion".into(), json!(desired_api_version));
    }
}

/// The `ConversionReview` version to send a CRD's webhook: the first of
/// `spec.conversion.webhook.conversionReviewVersions` this server speaks (`v1`, `v1beta1`), as
/// kube's `createConversionReviewObjects`. `None` when the CRD converts by `None`, or lists
/// neither (kube: "no supported conversion review versions").
pub fn review_version(crd: &Json) -> Option<&'static str> {
    let versions = crd
        .pointer("/spec/conversion/webhook/conversionReviewVersions")?
        .as_array()?;
    versions.iter().find_map(|v| match v.as_str() {
        Some("v1") => Some("v1"),
        Some("v1beta1") => Some("v1beta1"),
        _ => None,
    })
}

/// kube's `GroupVersionKind.String()` of an object: `group/version, Kind=Kind`, the prefix of
/// every conversion error.
pub fn gvk_string(obj: &Json) -> String {
    let api_version = obj.get("apiVersion").and_then(Json::as_str).unwrap_or("");
    let kind = obj.get("kind").and_then(Json::as_str).unwrap_or("");
    format!("{api_version}, Kind={kind}")
}

/// The `ConversionReview` (`apiextensions.k8s.io/<review_version>`) asking to convert
/// `objects` to `desired_api_version`, with request `uid`.
pub fn review_request(
    review_version: &str,
    uid: &str,
    desired_api_version: &str,
    objects: &[&Json],
) -> Json {
    json!({
        "apiVersion": format!("apiextensions.k8s.io/{review_version}"),
        "kind": "ConversionReview",
        "request": {"uid": uid, "desiredAPIVersion": desired_api_version, "objects": objects},
    })
}

/// `getConvertedObjectsFromResponse`: the `convertedObjects` of a webhook's `review`
/// answering request `uid` in `review_version`. Errors: kube's texts (the webhook's own
/// `result.message` when it reports a failure).
pub fn converted_objects(
    review: &Json,
    review_version: &str,
    uid: &str,
) -> Result<Vec<Json>, String> {
    let response = review.get("response").filter(|r| !r.is_null());
    if review_version == "v1" {
        let got = (
            review
                .get("apiVersion")
                .and_then(Json::as_str)
                .unwrap_or(""),
            review.get("kind").and_then(Json::as_str).unwrap_or(""),
        );
        if got != ("apiextensions.k8s.io/v1", "ConversionReview") {
            return Err(format!(
                "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got {}",
                gvk_string(review)
            ));
        }
        let response = response.ok_or("no response provided")?;
        let got_uid = response.get("uid").and_then(Json::as_str).unwrap_or("");
        if got_uid != uid {
            return Err(format!("expected response.uid={uid:?}, got {got_uid:?}"));
        }
    }
    // v1beta1 was never checked for its kind or uid; kube keeps that for compatibility.
    let response = response.ok_or("no response provided")?;
    let result = response.get("result");
    let field = |k: &str| {
        result
            .and_then(|r| r.get(k))
            .and_then(Json::as_str)
            .unwrap_or("")
    };
    if field("status") != "Success" {
        return Err(match field("message") {
            "" => format!(
                "response.result.status was '{}', not 'Success'",
                field("status")
            ),
            m => m.to_string(),
        });
    }
    Ok(response
        .get("convertedObjects")
        .and_then(Json::as_array)
        .cloned()
        .unwrap_or_default())
}

/// One object converted by a webhook: `review` (answering request `uid` sent in
/// `review_version`) checked against `original` and `desired_api_version`, with `original`'s
/// metadata but for the webhook's labels and annotations. Errors: kube's texts, each naming
/// the original's kind (`conversion webhook for <group/version>, Kind=<kind> …`).
pub fn read_review_response(
    review: &Json,
    review_version: &str,
    uid: &str,
    desired_api_version: &str,
    original: &Json,
) -> Result<Json, String> {
    let gvk = gvk_string(original);
    let mut converted = converted_objects(review, review_version, uid)
        .map_err(|e| format!("conversion webhook for {gvk} failed: {e}"))?;
    if converted.len() != 1 {
        return Err(format!(
            "conversion webhook for {gvk} returned {} objects, expected 1",
            converted.len()
        ));
    }
    let mut converted = converted.remove(0);
    let got = converted
        .get("apiVersion")
        .and_then(Json::as_str)
        .unwrap_or("");
    if got != desired_api_version {
        return Err(format!(
            "conversion webhook for {gvk} returned invalid object at index 0: invalid \
             groupVersion (expected {desired_api_version}, received {got})"
        ));
    }
    let (want_kind, got_kind) = (str_at(original, "kind"), str_at(&converted, "kind"));
    if want_kind != got_kind {
        return Err(format!(
            "conversion webhook for {gvk} returned invalid object at index 0: invalid kind \
             (expected {want_kind}, received {got_kind})"
        ));
    }
    validate_converted_object(original, &converted)
        .map_err(|e| format!("conversion webhook for {gvk} returned invalid object: {e}"))?;
    restore_object_meta(original, &mut converted)
        .map_err(|e| format!("conversion webhook for {gvk} returned invalid metadata: {e}"))?;
    Ok(converted)
}

/// The objects of a list converted by a webhook in one review: `review` (answering request
/// `uid` sent in `review_version` with `originals`, none of them in `desired_api_version`)
/// checked object by object as [`read_review_response`] checks one, in order. Errors: kube's
/// texts for a list (`… returned invalid converted object at index <i>: …`), naming the kind
/// of the first original.
pub fn read_review_list(
    review: &Json,
    review_version: &str,
    uid: &str,
    desired_api_version: &str,
    originals: &[&Json],
) -> Result<Vec<Json>, String> {
    let gvk = originals.first().map(|o| gvk_string(o)).unwrap_or_default();
    let converted = converted_objects(review, review_version, uid)
        .map_err(|e| format!("conversion webhook for {gvk} failed: {e}"))?;
    if converted.len() != originals.len() {
        return Err(format!(
            "conversion webhook for {gvk} returned {} objects, expected {}",
            converted.len(),
            originals.len()
        ));
    }
    let mut out = Vec::with_capacity(converted.len());
    for (i, (mut c, original)) in converted.into_iter().zip(originals).enumerate() {
        let invalid = |e: String| {
            format!(
                "conversion webhook for {gvk} returned invalid converted object at index {i}: {e}"
            )
        };
        let got = str_at(&c, "apiVersion");
        if got != desired_api_version {
            return Err(invalid(format!(
                "invalid groupVersion (expected {desired_api_version}, received {got})"
            )));
        }
        let (want_kind, got_kind) = (str_at(original, "kind"), str_at(&c, "kind"));
        if want_kind != got_kind {
            return Err(invalid(format!(
                "invalid kind (expected {want_kind}, received {got_kind})"
            )));
        }
        validate_converted_object(original, &c).map_err(invalid)?;
        restore_object_meta(original, &mut c).map_err(|e| {
            format!("conversion webhook for {gvk} returned invalid metadata in object at index {i}: {e}")
        })?;
        out.push(c);
    }
    Ok(out)
}

fn str_at<'a>(obj: &'a Json, key: &str) -> &'a str {
    obj.get(key).and_then(Json::as_str).unwrap_or("")
}

fn meta_str<'a>(obj: &'a Json, key: &str) -> &'a str {
    obj.get("metadata")
        .and_then(|m| m.get(key))
        .and_then(Json::as_str)
        .unwrap_or("")
}

/// `validateConvertedObject`: the same kind, name, namespace and uid.
fn validate_converted_object(original: &Json, converted: &Json) -> Result<(), String> {
    let (a, b) = (str_at(original, "kind"), str_at(converted, "kind"));
    if a != b {
        return Err(format!("must have the same kind: {a} != {b}"));
    }
    for (key, what) in [("name", "name"), ("namespace", "namespace"), ("uid", "UID")] {
        let (a, b) = (meta_str(original, key), meta_str(converted, key));
        if a != b {
            return Err(format!("must have the same {what}: {a} != {b}"));
        }
    }
    Ok(())
}

/// `restoreObjectMeta`: `converted` gets `original`'s metadata but for the labels and
/// annotations it returned, which must be maps of strings and, when changed, valid.
fn restore_object_meta(original: &Json, converted: &mut Json) -> Result<(), String> {
    let returned = match converted.get("metadata") {
        None => return Err("missing metadata in converted object".into()),
        Some(Json::Object(m)) => m.clone(),
        Some(other) => {
            return Err(format!(
                "invalid metadata of type {} in converted object",
                go_type(other)
            ))
        }
    };
    let mut meta = original
        .get("metadata")
        .cloned()
        .unwrap_or_else(|| json!({}));
    let Some(m) = meta.as_object_mut() else {
        return Err("invalid metadata of type string in input object".into());
    };
    for field in ["labels", "annotations"] {
        let got = match returned.get(field) {
            None | Some(Json::Null) => {
                m.remove(field);
                continue;
            }
            Some(Json::Object(o)) => o,
            Some(other) => {
                return Err(format!(
                    "invalid metadata.{field} of type {} in converted object",
                    go_type(other)
                ))
            }
        };
        let mut strings = BTreeMap::new();
        for (k, v) in got {
            let Some(s) = v.as_str() else {
                return Err(format!(
                    "metadata.{field}[{k}] must be a string, but is {} in converted object",
                    go_type(v)
                ));
            };
            strings.insert(k.clone(), s.to_string());
        }
        if m.get(field).and_then(Json::as_object) != Some(got) {
            let errs: ErrorList = if field == "labels" {
                validate_labels(&strings, &Path::new("metadata").child("labels"))
            } else {
                // kube's path says `annotation` here.
                validate_annotations(&strings, &Path::new("metadata").child("annotation"))
            };
            if !errs.is_empty() {
                return Err(aggregate(&errs));
            }
        }
        m.insert(field.into(), Json::Object(got.clone()));
    }
    converted["metadata"] = meta;
    Ok(())
}

/// `ErrorList.ToAggregate().Error()`: one error as itself, several in brackets.
fn aggregate(errs: &ErrorList) -> String {
    let texts: Vec<String> = errs.iter().map(ToString::to_string).collect();
    match texts.as_slice() {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    }
}

/// The Go type `encoding/json` decodes a JSON value into, for kube's `%T` texts.
fn go_type(v: &Json) -> &'static str {
    match v {
        Json::Null => "<nil>",
        Json::Bool(_) => "bool",
        Json::Number(_) => "float64",
        Json::String(_) => "string",
        Json::Array(_) => "[]interface {}",
        Json::Object(_) => "map[string]interface {}",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn original() -> Json {
        json!({"apiVersion": "example.com/v1beta1", "kind": "Widget",
            "metadata": {"name": "w", "uid": "u-1", "resourceVersion": "7", "labels": {"a": "1"}},
            "spec": {"size": 1}})
    }

    fn answer(converted: Json) -> Json {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "response": {"uid": "r1", "result": {"status": "Success"}, "convertedObjects": [converted]}})
    }

    #[test]
    fn a_webhook_answer_is_checked_and_metadata_restored() {
        let o = original();
        let req = review_request("v1", "r1", "example.com/v1", &[&o]);
        assert_eq!(req["apiVersion"], "apiextensions.k8s.io/v1");
        assert_eq!(req["request"]["desiredAPIVersion"], "example.com/v1");
        assert_eq!(req["request"]["objects"][0], o);
        let ok = answer(json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w", "uid": "u-1", "resourceVersion": "99", "labels": {"a": "2"}},
            "spec": {"sizes": [1]}}));
        let got = read_review_response(&ok, "v1", "r1", "example.com/v1", &o).unwrap();
        assert_eq!(
            got["metadata"],
            json!({"name": "w", "uid": "u-1", "resourceVersion": "7", "labels": {"a": "2"}})
        );
        assert_eq!(got["spec"], json!({"sizes": [1]}));
    }

    #[test]
    fn a_bad_answer_gets_kubes_text() {
        let o = original();
        let prefix = "conversion webhook for example.com/v1beta1, Kind=Widget";
        let good = json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w", "uid": "u-1"}});
        let with = |f: &dyn Fn(&mut Json)| {
            let mut c = good.clone();
            f(&mut c);
            answer(c)
        };
        let cases = [
            (json!({"kind": "ConversionReview"}),
             format!("{prefix} failed: expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got , Kind=ConversionReview")),
            (json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview"}),
             format!("{prefix} failed: no response provided")),
            (json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "response": {"uid": "r2"}}),
             format!("{prefix} failed: expected response.uid=\"r1\", got \"r2\"")),
            (json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                "response": {"uid": "r1", "result": {"status": "Failure", "message": "nope"}}}),
             format!("{prefix} failed: nope")),
            (json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                "response": {"uid": "r1", "result": {"status": "Failure"}}}),
             format!("{prefix} failed: response.result.status was 'Failure', not 'Success'")),
            (json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                "response": {"uid": "r1", "result": {"status": "Success"}, "convertedObjects": []}}),
             format!("{prefix} returned 0 objects, expected 1")),
            (with(&|c| c["apiVersion"] = json!("example.com/v1beta1")),
             format!("{prefix} returned invalid object at index 0: invalid groupVersion (expected example.com/v1, received example.com/v1beta1)")),
            (with(&|c| c["kind"] = json!("Gadget")),
             format!("{prefix} returned invalid object at index 0: invalid kind (expected Widget, received Gadget)")),
            (with(&|c| c["metadata"]["name"] = json!("x")),
             format!("{prefix} returned invalid object: must have the same name: w != x")),
            (with(&|c| c["metadata"]["uid"] = json!("u-2")),
             format!("{prefix} returned invalid object: must have the same UID: u-1 != u-2")),
            (with(&|c| c["metadata"]["labels"] = json!({"a": 1})),
             format!("{prefix} returned invalid metadata: metadata.labels[a] must be a string, but is float64 in converted object")),
            (with(&|c| c["metadata"]["annotations"] = json!("x")),
             format!("{prefix} returned invalid metadata: invalid metadata.annotations of type string in converted object")),
        ];
        for (review, want) in cases {
            assert_eq!(
                read_review_response(&review, "v1", "r1", "example.com/v1", &o),
                Err(want)
            );
        }
        let bad_label = with(&|c| c["metadata"]["labels"] = json!({"a": "not a label!"}));
        let err = read_review_response(&bad_label, "v1", "r1", "example.com/v1", &o).unwrap_err();
        assert!(
            err.starts_with(&format!("{prefix} returned invalid metadata: metadata.labels: Invalid value: \"not a label!\"")),
            "{err}"
        );
        // v1beta1 reviews were never checked for their kind or uid.
        let beta = json!({"response": {"uid": "other", "result": {"status": "Success"},
            "convertedObjects": [good]}});
        assert!(read_review_response(&beta, "v1beta1", "r1", "example.com/v1", &o).is_ok());
    }

    #[test]
    fn a_list_is_converted_in_one_review_with_kubes_list_texts() {
        let a = original();
        let mut b = original();
        b["metadata"]["name"] = json!("v");
        let review = review_request("v1", "r1", "example.com/v1", &[&a, &b]);
        assert_eq!(
            review["request"]["objects"].as_array().map(Vec::len),
            Some(2)
        );
        let converted = |name: &str, api_version: &str| json!({"apiVersion": api_version, "kind": "Widget", "metadata": {"name": name, "uid": "u-1"}});
        let answer = |objects: Json| {
            json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                "response": {"uid": "r1", "result": {"status": "Success"}, "convertedObjects": objects}})
        };
        let ok = answer(json!([
            converted("w", "example.com/v1"),
            converted("v", "example.com/v1")
        ]));
        let got = read_review_list(&ok, "v1", "r1", "example.com/v1", &[&a, &b]).unwrap();
        assert_eq!(got[1]["metadata"]["name"], "v");
        assert_eq!(got[1]["metadata"]["resourceVersion"], "7");
        let bad = answer(json!([
            converted("w", "example.com/v1"),
            converted("v", "example.com/v2")
        ]));
        assert_eq!(
            read_review_list(&bad, "v1", "r1", "example.com/v1", &[&a, &b]),
            Err("conversion webhook for example.com/v1beta1, Kind=Widget returned invalid converted object at index 1: invalid groupVersion (expected example.com/v1, received example.com/v2)".into())
        );
        let short = answer(json!([converted("w", "example.com/v1")]));
        assert_eq!(
            read_review_list(&short, "v1", "r1", "example.com/v1", &[&a, &b]),
            Err("conversion webhook for example.com/v1beta1, Kind=Widget returned 1 objects, expected 2".into())
        );
    }

    #[test]
    fn the_review_version_is_the_first_spoken() {
        let crd = |v: Json| {
            json!({"spec": {"conversion": {"strategy": "Webhook",
            "webhook": {"conversionReviewVersions": v}}}})
        };
        assert_eq!(
            review_version(&crd(json!(["v2", "v1beta1", "v1"]))),
            Some("v1beta1")
        );
        assert_eq!(review_version(&crd(json!(["v1"]))), Some("v1"));
        assert_eq!(review_version(&crd(json!(["v2"]))), None);
        assert_eq!(review_version(&json!({"spec": {}})), None);
        let mut o = original();
        convert_none(&mut o, "example.com/v1");
        assert_eq!(o["apiVersion"], "example.com/v1");
    }
}
