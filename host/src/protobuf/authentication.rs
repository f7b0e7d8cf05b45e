//! `authentication.k8s.io/v1` bodies served as protobuf: `TokenRequest`, as `kubectl create
//! token` sends it (`k8s.io/api/authentication/v1/types.go`).

use super::json::*;
use super::meta::*;
use k8s_pb::api::authentication::v1 as authn;
use serde_json::{Map, Value};

pub(super) fn token_request(r: authn::TokenRequest) -> R<Value> {
    object!(r, authn::TokenRequest {
        metadata: "metadata" => struct_value(object_meta),
        spec: "spec" => struct_value(token_request_spec),
        status: "status" => struct_value(token_request_status),
    })
}

fn token_request_spec(s: authn::TokenRequestSpec) -> R<Value> {
    object!(s, authn::TokenRequestSpec {
        audiences: "audiences" => omitempty_strings,
        expiration_seconds: "expirationSeconds" => ptr_int,
        bound_object_ref: "boundObjectRef" => struct_value(bound_object_reference),
    })
}

fn token_request_status(s: authn::TokenRequestStatus) -> R<Value> {
    object!(s, authn::TokenRequestStatus {
        token: "token" => omitempty_str,
        expiration_timestamp: "expirationTimestamp" => time,
    })
}

fn bound_object_reference(r: authn::BoundObjectReference) -> R<Value> {
    object!(r, authn::BoundObjectReference {
        kind: "kind" => omitempty_str,
        api_version: "apiVersion" => omitempty_str,
        name: "name" => omitempty_str,
        u_id: "uid" => omitempty_str,
    })
}
