//! `authentication.k8s.io/v1` `SelfSubjectReview` (`pkg/registry/authentication/
//! selfsubjectreview/rest.go`): a create that answers who the requester is, as
//! `kubectl auth whoami` asks. Nothing is stored.

use super::user::UserInfo;
use serde_json::{json, Value};

/// The answer to a create of a `SelfSubjectReview`, status 201.
pub fn review(user: &UserInfo) -> Value {
    json!({
        "kind": "SelfSubjectReview",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"creationTimestamp": null},
        "status": {"userInfo": user.to_json()},
    })
}
