//! Admission webhooks by URL (`k8s.io/apiserver/pkg/admission/plugin/webhook`): the
//! `ValidatingWebhookConfiguration` and `MutatingWebhookConfiguration` objects compiled
//! (`configuration.rs`; served and watched with the admission policies, `policy/resources.rs`
//! and `policy/source.rs`), the `AdmissionReview` sent and its answer checked (`review.rs`),
//! the two admission members that call them (`dispatcher.rs`) and their metrics
//! (`metrics.rs`).
//!
//! Files here import each other, never this module (it only declares).

pub mod configuration;
pub mod dispatcher;
pub mod metrics;
pub mod review;
