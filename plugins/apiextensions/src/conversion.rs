//! Converting custom resources between a CRD's versions
//! (`apiextensions-apiserver/pkg/apiserver/conversion/`): strategy `None` rewrites the
//! `apiVersion` (`nop_converter.go`); strategy `Webhook` sends a `ConversionReview` and checks
//! what comes back as kube does (`webhook_converter.go`: the uid, the result, the count, each
//! object's `apiVersion` and `kind`, and the metadata — only labels and annotations may change;
//! the rest of the metadata is restored from the request).
//!
//! The HTTPS call itself is the caller's (the host's); this module builds the request and
//! reads the response.

use serde_json::{json, Value as Json};

/// `None` conversion: `obj` as `desired_api_version`.
pub fn convert_none(obj: &mut Json, desired_api_version: &str) {
    if let Some(o) = obj.as_object_mut() {
        o.insert("apiVersion".into(), json!(desired_api_version));
    }
}

/// The `ConversionReview` (`apiextensions.k8s.io/v1`) asking to convert `objects` to
/// `desired_api_version`, with request `uid`.
pub fn review_request(uid: &str, desired_api_version: &str, objects: &[Json]) -> Json {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "request": {"uid": uid, "desiredAPIVersion": desired_api_version, "objects": objects},
    })
}

/// The converted objects of a webhook's `review` answering the request `uid` for `objects`
/// (each of `kind`). Errors: kube's texts for a response that cannot be used.
pub fn read_review_response(
    review: &Json,
    uid: &str,
    desired_api_version: &str,
    kind: &str,
    objects: &[Json],
) -> Result<Vec<Json>, String> {
    let response = review.get("response").ok_or("no response provided")?;
    let got_uid = response.get("uid").and_then(Json::as_str).unwrap_or("");
    if got_uid != uid {
        return Err(format!("expected response.uid={uid:?}, got {got_uid:?}"));
    }
    let result = response.get("result");
    let status = result.and_then(|r| r.get("status")).and_then(Json::as_str);
    if status != Some("Success") {
        let message = result
            .and_then(|r| r.get("message"))
            .and_then(Json::as_str)
            .unwrap_or("");
        return Err(format!("conversion webhook for {kind} failed: {message}"));
    }
    let converted = response
        .get("convertedObjects")
        .and_then(Json::as_array)
        .cloned()
        .unwrap_or_default();
    if converted.len() != objects.len() {
        return Err(format!(
            "conversion webhook for {kind} returned {} objects, expected {}",
            converted.len(),
            objects.len()
        ));
    }
    let mut out = Vec::with_capacity(converted.len());
    for (i, (mut c, original)) in converted.into_iter().zip(objects).enumerate() {
        let api_version = c.get("apiVersion").and_then(Json::as_str).unwrap_or("");
        if api_version != desired_api_version {
            return Err(format!(
                "invalid converted object at index {i}: invalid apiVersion {api_version:?}, \
                 expected {desired_api_version:?}"
            ));
        }
        let got_kind = c.get("kind").and_then(Json::as_str).unwrap_or("");
        if got_kind != kind {
            return Err(format!(
                "invalid converted object at index {i}: invalid kind {got_kind:?}, expected {kind:?}"
            ));
        }
        restore_object_meta(&mut c, original);
        out.push(c);
    }
    Ok(out)
}

/// kube's `restoreObjectMeta`: the converted object keeps the original metadata, but for its
/// labels and annotations.
fn restore_object_meta(converted: &mut Json, original: &Json) {
    let mut meta = original.get("metadata").cloned().unwrap_or(json!({}));
    for k in ["labels", "annotations"] {
        match converted.get("metadata").and_then(|m| m.get(k)) {
            Some(v) => meta[k] = v.clone(),
            None => {
                if let Some(m) = meta.as_object_mut() {
                    m.remove(k);
                }
            }
        }
    }
    converted["metadata"] = meta;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_webhook_answer_is_checked_and_metadata_restored() {
        let objects = vec![
            json!({"apiVersion": "example.com/v1beta1", "kind": "Widget",
            "metadata": {"name": "w", "resourceVersion": "7", "labels": {"a": "1"}}, "spec": {"size": 1}}),
        ];
        let req = review_request("u1", "example.com/v1", &objects);
        assert_eq!(req["request"]["desiredAPIVersion"], "example.com/v1");
        let ok = json!({"response": {"uid": "u1", "result": {"status": "Success"},
            "convertedObjects": [{"apiVersion": "example.com/v1", "kind": "Widget",
                "metadata": {"name": "other", "labels": {"a": "2"}}, "spec": {"sizes": [1]}}]}});
        let got = read_review_response(&ok, "u1", "example.com/v1", "Widget", &objects).unwrap();
        assert_eq!(
            got[0]["metadata"],
            json!({"name": "w", "resourceVersion": "7", "labels": {"a": "2"}})
        );
        assert_eq!(got[0]["spec"], json!({"sizes": [1]}));
        for (review, want) in [
            (json!({}), "no response provided".to_string()),
            (json!({"response": {"uid": "u2"}}), "expected response.uid=\"u1\", got \"u2\"".to_string()),
            (json!({"response": {"uid": "u1", "result": {"status": "Failure", "message": "nope"}}}),
             "conversion webhook for Widget failed: nope".to_string()),
            (json!({"response": {"uid": "u1", "result": {"status": "Success"}, "convertedObjects": []}}),
             "conversion webhook for Widget returned 0 objects, expected 1".to_string()),
            (json!({"response": {"uid": "u1", "result": {"status": "Success"},
                "convertedObjects": [{"apiVersion": "example.com/v1beta1", "kind": "Widget"}]}}),
             "invalid converted object at index 0: invalid apiVersion \"example.com/v1beta1\", expected \"example.com/v1\"".to_string()),
        ] {
            assert_eq!(read_review_response(&review, "u1", "example.com/v1", "Widget", &objects), Err(want));
        }
        let mut o = objects[0].clone();
        convert_none(&mut o, "example.com/v1");
        assert_eq!(o["apiVersion"], "example.com/v1");
    }
}
