//! What a request carries through the filters to its handler, in its extensions — kube's
//! request context (`k8s.io/apiserver/pkg/endpoints/request/context.go`): the
//! [`RequestInfo`](super::request_info::RequestInfo) read once, the authenticated user
//! (`UserFrom`), and two sinks later layers write to — [`Warnings`] (`pkg/warning`: every
//! `Warning` header of the answer) and [`AuditAnnotations`] (`audit.AddAuditAnnotation`: the
//! `annotations` of the request's audit event). A filter or handler reads these from here,
//! never from another filter.

use super::request_info::RequestInfo;
use crate::authentication::UserInfo;
use crate::authorization::Attributes;
use axum::extract::Request;
use std::borrow::Cow;
use std::sync::{Arc, Mutex};

/// The request's [`RequestInfo`], as the request-info filter left it (read afresh when the
/// filter did not run, which only a test harness without the chain does).
pub fn request_info(req: &Request) -> Arc<RequestInfo> {
    match req.extensions().get::<Arc<RequestInfo>>() {
        Some(info) => info.clone(),
        None => Arc::new(RequestInfo::new(req.method(), req.uri())),
    }
}

/// The user a request was authenticated as (anonymous when the filter did not run), borrowed
/// from the request when it has one.
pub fn user_ref(req: &Request) -> Cow<'_, UserInfo> {
    match req.extensions().get::<UserInfo>() {
        Some(u) => Cow::Borrowed(u),
        None => Cow::Owned(UserInfo::anonymous()),
    }
}

/// The user a request was authenticated as (anonymous when no authenticator set one), owned.
pub fn user_of(req: &Request) -> UserInfo {
    user_ref(req).into_owned()
}

/// The request's authorization attributes as the audit filter computed them for the
/// authenticated user, left for the authorization filter so a request that does not
/// impersonate is described once.
#[derive(Clone, Debug)]
pub struct RequestAttributes(pub Arc<Attributes>);

/// The most warnings one answer carries, and the most bytes of each: this server's bounds
/// (kube's recorder bounds the total size too, truncating then dropping:
/// `pkg/endpoints/filters/warning.go`).
const MAX_WARNINGS: usize = 64;
const MAX_WARNING_BYTES: usize = 2048;

/// Warnings for the answer's `Warning: 299 - "…"` headers, in the order added, each once
/// (`warning.AddWarning`). Shared by clones.
#[derive(Clone, Debug, Default)]
pub struct Warnings(Arc<Mutex<Vec<String>>>);

impl Warnings {
    /// Add `text` unless it is already there; beyond [`MAX_WARNINGS`] warnings are dropped
    /// and each is cut to [`MAX_WARNING_BYTES`] at a character boundary.
    pub fn add(&self, text: &str) {
        let mut end = text.len().min(MAX_WARNING_BYTES);
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        let text = &text[..end];
        let mut all = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if all.len() < MAX_WARNINGS && !all.iter().any(|w| w == text) {
            all.push(text.to_string());
        }
    }

    /// The warnings added so far, leaving none.
    pub fn take(&self) -> Vec<String> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// Annotations for the request's audit event (`authorization.k8s.io/decision`, admission's
/// `…/validation_failure`, …), in the order added; a key added again keeps its first value,
/// as `audit.AddAuditAnnotation` does. Present only while the request is audited.
#[derive(Clone, Debug, Default)]
pub struct AuditAnnotations(Arc<Mutex<Vec<(String, String)>>>);

impl AuditAnnotations {
    /// Add `key: value` unless `key` is already there.
    pub fn add(&self, key: &str, value: impl Into<String>) {
        let mut all = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if !all.iter().any(|(k, _)| k == key) {
            all.push((key.to_string(), value.into()));
        }
    }

    /// The annotations added so far, leaving none.
    pub fn take(&self) -> Vec<(String, String)> {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_once_and_bounded() {
        let w = Warnings::default();
        w.add("a");
        w.clone().add("a");
        w.add(&"é".repeat(MAX_WARNING_BYTES));
        for i in 0..100 {
            w.add(&i.to_string());
        }
        let all = w.take();
        assert_eq!(all.len(), MAX_WARNINGS);
        assert_eq!(all[0], "a");
        assert_eq!(all[1].len(), MAX_WARNING_BYTES);
        assert!(w.take().is_empty());
    }

    #[test]
    fn audit_annotations_keep_the_first_value() {
        let a = AuditAnnotations::default();
        a.add("k", "1");
        a.add("k", "2");
        assert_eq!(a.take(), vec![("k".to_string(), "1".to_string())]);
    }
}
