//! The TokenRequest API and what outside verifiers read (kube's
//! `pkg/registry/core/serviceaccount/storage/token.go` `TokenREST.Create`,
//! `pkg/apis/authentication/validation` and `pkg/serviceaccount/openidmetadata.go`):
//! - `POST /api/v1/namespaces/{ns}/serviceaccounts/{name}/token` (`kubectl create token`): a
//!   `authentication.k8s.io/v1` TokenRequest, JSON or protobuf; `expirationSeconds` defaults
//!   to 3600, at least 600, cut to `--service-account-max-token-expiration`; `audiences`
//!   default to the API audiences; `boundObjectRef` names a Secret or a Pod of the namespace
//!   (its `uid`, when given, must be the stored one: 409 as kube) and the token dies with it.
//!   Answered 201 with `status.token` and `status.expirationTimestamp`; with `dryRun=All`
//!   without a token. Authorized as `create` on `serviceaccounts/token` by the chain.
//! - `POST /apis/authentication.k8s.io/v1/tokenreviews`: TokenReview of a service-account
//!   token.
//! - `GET /.well-known/openid-configuration` and `GET /openid/v1/jwks`.
//! - [`ServedObjects`]: the authenticator's lookup of ServiceAccounts and bound objects, from
//!   the watch cache when it has them, else from storage.

use super::state::AppState;
use crate::authentication::service_account::{BoundObject, ObjectLookup, TokenSpec};
use crate::limits::MAX_BODY_BYTES;
use crate::registry::Served;
use crate::status::{ApiError, ApiResult};
use crate::strategy::{ErrorType, FieldError};
use axum::extract::{Path, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::{json, Value};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use wasm_apiserver_apimachinery::{GroupKind, GroupResource};

/// `expirationSeconds` when the request gives none.
pub const DEFAULT_EXPIRATION_SECONDS: i64 = 3600;
/// The shortest lifetime a request may ask for (10 minutes).
pub const MIN_EXPIRATION_SECONDS: i64 = 600;

fn gr(resource: &str) -> GroupResource {
    GroupResource {
        group: String::new(),
        resource: resource.into(),
    }
}

/// The registry as the authenticator's [`ObjectLookup`].
pub struct ServedObjects(pub Arc<Served>);

impl ObjectLookup for ServedObjects {
    fn uid<'a>(
        &'a self,
        resource: &'a str,
        namespace: &'a str,
        name: &'a str,
    ) -> Pin<Box<dyn Future<Output = Option<String>> + Send + 'a>> {
        Box::pin(async move {
            let store = self.0.load().resources.get("", "v1", resource)?;
            // The watch cache first; an object it does not have yet is read from storage.
            let obj = match store.get_shared(namespace, name, "0").await {
                Ok(o) => o,
                Err(e) if e.code == 404 => store.get_shared(namespace, name, "").await.ok()?,
                Err(_) => return None,
            };
            let obj = obj.to_arc().ok()?;
            obj["metadata"]["uid"].as_str().map(String::from)
        })
    }
}

/// `POST /api/v1/namespaces/{namespace}/serviceaccounts/{name}/token`.
pub async fn create(
    State(state): State<Arc<AppState>>,
    Path((namespace, name)): Path<(String, String)>,
    req: Request,
) -> Response {
    match token_request(&state, &namespace, &name, req).await {
        Ok(v) => (StatusCode::CREATED, Json(v)).into_response(),
        Err(e) => e.into_response(),
    }
}

/// `POST /apis/authentication.k8s.io/v1/tokenreviews` (kube's
/// `pkg/registry/authentication/tokenreview/storage.go`): whether a service-account token
/// authenticates for the review's `spec.audiences` (default: the API audiences) — `status`
/// `authenticated`, `user`, `audiences`, or `error`. A review without a token is 400. The
/// review is answered, never stored; audit records it at `Metadata` unless a rule names it.
pub async fn token_review(State(state): State<Arc<AppState>>, req: Request) -> Response {
    let review = async {
        let Some(tokens) = &state.service_accounts else {
            return Err(ApiError::no_route(req.uri().path()));
        };
        let mut review = body(req).await?;
        let token = review["spec"]["token"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if token.is_empty() {
            return Err(ApiError::bad_request(
                "token is required for TokenReview in authentication",
            ));
        }
        let audiences: Vec<String> = match review["spec"]["audiences"].as_array() {
            Some(a) if !a.is_empty() => a
                .iter()
                .filter_map(|x| x.as_str().map(String::from))
                .collect(),
            _ => tokens.api_audiences().to_vec(),
        };
        let now = chrono::Utc::now().timestamp();
        review["status"] = match tokens.authenticate_for(&token, now, &audiences).await {
            Some(Ok(user)) => {
                let mut u = user;
                u.groups
                    .push(crate::authentication::user::ALL_AUTHENTICATED.into());
                json!({"authenticated": true, "user": u.to_json(), "audiences": audiences})
            }
            Some(Err(e)) => json!({"user": {}, "error": e}),
            None => {
                json!({"user": {}, "error": "the token is not a service-account token of this server"})
            }
        };
        review["apiVersion"] = json!("authentication.k8s.io/v1");
        review["kind"] = json!("TokenReview");
        if review.get("metadata").is_none_or(|m| !m.is_object()) {
            review["metadata"] = json!({});
        }
        review["metadata"]["creationTimestamp"] = Value::Null;
        Ok(review)
    };
    match review.await {
        Ok(v) => (StatusCode::CREATED, Json(v)).into_response(),
        Err(e) => e.into_response(),
    }
}

/// `GET /.well-known/openid-configuration`.
pub async fn openid_configuration(State(state): State<Arc<AppState>>) -> Response {
    match &state.service_accounts {
        Some(t) => Json(t.openid_configuration()).into_response(),
        None => ApiError::no_route("/.well-known/openid-configuration").into_response(),
    }
}

/// `GET /openid/v1/jwks`.
pub async fn jwks(State(state): State<Arc<AppState>>) -> Response {
    match &state.service_accounts {
        Some(t) => Json(t.jwks()).into_response(),
        None => ApiError::no_route("/openid/v1/jwks").into_response(),
    }
}

async fn token_request(
    state: &AppState,
    namespace: &str,
    name: &str,
    req: Request,
) -> ApiResult<Value> {
    let path = req.uri().path().to_string();
    let Some(tokens) = &state.service_accounts else {
        return Err(ApiError::no_route(&path));
    };
    let query = axum::extract::Query::<crate::server::options::Query>::try_from_uri(req.uri())
        .map(|q| q.0)
        .unwrap_or_default();
    let dry_run = crate::server::options::is_dry_run(&query)?;
    let snapshot = state.served.load();
    let Some(accounts) = snapshot.resources.get("", "v1", "serviceaccounts") else {
        return Err(ApiError::no_route(&path));
    };
    let body = body(req).await?;
    if body
        .get("kind")
        .and_then(Value::as_str)
        .is_some_and(|k| !k.is_empty() && k != "TokenRequest")
    {
        return Err(ApiError::bad_request(format!(
            "the body of a token request must be a TokenRequest, not {}",
            body["kind"]
        )));
    }
    if let Some(n) = body["metadata"]["name"].as_str() {
        if !n.is_empty() && n != name {
            return Err(ApiError::bad_request(format!(
                "the name of the TokenRequest ({n}) does not match the name of the ServiceAccount ({name})"
            )));
        }
    }
    let spec = &body["spec"];
    let mut expiration = spec["expirationSeconds"]
        .as_i64()
        .unwrap_or(DEFAULT_EXPIRATION_SECONDS);
    let invalid = |detail: &str| {
        ApiError::invalid(
            &GroupKind {
                group: "authentication.k8s.io".into(),
                kind: "TokenRequest".into(),
            },
            name,
            &[FieldError {
                error_type: ErrorType::Invalid,
                field: "spec.expirationSeconds".into(),
                bad_value: Some(json!(expiration)),
                detail: detail.into(),
            }],
        )
    };
    if expiration < MIN_EXPIRATION_SECONDS {
        return Err(invalid("may not specify a duration less than 10 minutes"));
    }
    if expiration > 1 << 32 {
        return Err(invalid(
            "may not specify a duration larger than 2^32 seconds",
        ));
    }
    if tokens.max_expiration_seconds > 0 && expiration > tokens.max_expiration_seconds {
        expiration = tokens.max_expiration_seconds;
    }
    let audiences: Vec<String> = match spec["audiences"].as_array() {
        Some(a) if !a.is_empty() => a
            .iter()
            .filter_map(|x| x.as_str().map(String::from))
            .collect(),
        _ => tokens.api_audiences().to_vec(),
    };
    let account = accounts.get(namespace, name, "").await?;
    let account_uid = account["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    // An empty reference (kubectl's protobuf may carry one) binds nothing.
    let bound_ref = spec
        .get("boundObjectRef")
        .filter(|r| r.as_object().is_some_and(|o| !o.is_empty()));
    let bound = match bound_ref {
        Some(r) => Some(bound_object(state, namespace, name, r).await?),
        None => None,
    };
    let mut out_spec = json!({"audiences": audiences, "expirationSeconds": expiration});
    if let Some(r) = bound_ref {
        let mut r = r.clone();
        if let Some(b) = &bound {
            r["uid"] = json!(b.uid);
        }
        out_spec["boundObjectRef"] = r;
    }
    let now = chrono::Utc::now();
    let mut out = json!({
        "kind": "TokenRequest",
        "apiVersion": "authentication.k8s.io/v1",
        "metadata": {"name": name, "namespace": namespace,
                     "creationTimestamp": now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)},
        "spec": out_spec,
        "status": {"token": "", "expirationTimestamp": null},
    });
    if dry_run {
        return Ok(out);
    }
    let (token, exp) = tokens
        .issue(
            &TokenSpec {
                namespace,
                name,
                uid: &account_uid,
                audiences,
                expiration_seconds: expiration,
                bound,
            },
            now.timestamp(),
        )
        .map_err(ApiError::internal)?;
    out["status"] = json!({
        "token": token,
        "expirationTimestamp": chrono::DateTime::from_timestamp(exp, 0)
            .unwrap_or_default()
            .to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
    });
    Ok(out)
}

/// The Secret or Pod a token is bound to, as stored. Errors: another kind (400), the object
/// is missing (404), its uid is not the given one (409, kube's message), a Pod that runs as
/// another ServiceAccount (400).
async fn bound_object(
    state: &AppState,
    namespace: &str,
    account: &str,
    r: &Value,
) -> ApiResult<BoundObject> {
    let kind = r["kind"].as_str().unwrap_or_default();
    let api_version = r["apiVersion"].as_str().unwrap_or("v1");
    let resource = match (kind, api_version) {
        ("Secret", "v1" | "") => "secrets",
        ("Pod", "v1" | "") => "pods",
        _ => {
            return Err(ApiError::bad_request(format!(
                "cannot bind token for serviceaccount {account:?} to object of type {api_version}, Kind={kind}"
            )))
        }
    };
    let name = r["name"].as_str().unwrap_or_default();
    let Some(store) = state.served.load().resources.get("", "v1", resource) else {
        return Err(ApiError::not_found(&gr(resource), name));
    };
    let obj = store.get(namespace, name, "").await?;
    let uid = obj["metadata"]["uid"].as_str().unwrap_or_default();
    if let Some(want) = r["uid"].as_str().filter(|u| !u.is_empty()) {
        if want != uid {
            return Err(ApiError::conflict(
                &GroupResource {
                    group: String::new(),
                    resource: kind.to_string(),
                },
                name,
                &format!("the UID in the bound object reference ({want}) does not match the UID in record. The object might have been deleted and then recreated"),
            ));
        }
    }
    if kind == "Pod" {
        let runs_as = obj["spec"]["serviceAccountName"]
            .as_str()
            .unwrap_or("default");
        if runs_as != account {
            return Err(ApiError::bad_request(format!(
                "cannot bind token for serviceaccount {account:?} to pod {name:?} running as serviceaccount {runs_as:?}"
            )));
        }
    }
    Ok(BoundObject {
        kind: kind.to_string(),
        name: name.to_string(),
        uid: uid.to_string(),
    })
}

/// The TokenRequest of a request: JSON (or YAML's JSON subset), or protobuf as kubectl's typed
/// client sends it. An empty body is an empty request (every default).
async fn body(req: Request) -> ApiResult<Value> {
    let protobuf = req
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with(crate::protobuf::CONTENT_TYPE));
    let bytes = axum::body::to_bytes(req.into_body(), MAX_BODY_BYTES)
        .await
        .map_err(|_| ApiError::request_entity_too_large(&format!("limit is {MAX_BODY_BYTES}")))?;
    if bytes.is_empty() {
        return Ok(json!({}));
    }
    if protobuf {
        return crate::protobuf::decode(&bytes, "authentication.k8s.io/v1", "TokenRequest");
    }
    let v: Value = serde_json::from_slice(&bytes)
        .map_err(|e| ApiError::bad_request(format!("error decoding the request body: {e}")))?;
    crate::limits::check_object(&v)
        .map_err(|_| ApiError::bad_request("the request body nests too deeply or is too large"))?;
    Ok(v)
}
