//! Probes and lifecycle handlers.

use super::common::*;
use wasm_apiserver_sdk::field::{self, ErrorList, Path};
use wasm_apiserver_sdk::k8s_openapi::api::core::v1::{Lifecycle, LifecycleHandler, Probe};
use wasm_apiserver_sdk::k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use wasm_apiserver_sdk::validation::{self as v};
// ---------------------------------------------------------------------------------------------
// Probes and lifecycle handlers
// ---------------------------------------------------------------------------------------------

/// `ValidatePortNumOrName`.
pub(super) fn validate_port_num_or_name(port: &IntOrString, path: &Path) -> ErrorList {
    match port {
        IntOrString::Int(n) => v::is_valid_port_num(*n)
            .into_iter()
            .map(|m| field::invalid(path, n, m))
            .collect(),
        IntOrString::String(name) => invalid_for_each(path, name, v::is_valid_port_name(name)),
    }
}

/// `validateHandler` over the handler fields that are set (`exec`, `httpGet`, `tcpSocket`,
/// `grpc`, `sleep`), in that order.
pub(super) fn validate_handler(
    set: [bool; 5],
    typed: Handler<'_>,
    grace: Option<i64>,
    path: &Path,
) -> ErrorList {
    let mut errs = Vec::new();
    let mut count = 0;
    for (kind, set) in ["exec", "httpGet", "tcpSocket", "grpc", "sleep"]
        .into_iter()
        .zip(set)
    {
        if !set {
            continue;
        }
        let p = path.child(kind);
        if count > 0 {
            errs.push(field::forbidden(
                &p,
                "may not specify more than 1 handler type",
            ));
            continue;
        }
        count += 1;
        match kind {
            "exec" => {
                let cmd = typed.exec.and_then(|e| e.command.as_ref());
                if cmd.is_none_or(|c| c.is_empty()) {
                    errs.push(field::required(&p.child("command"), ""));
                }
            }
            "httpGet" => {
                if let Some(h) = typed.http_get {
                    if s(&h.path).is_empty() {
                        errs.push(field::required(&p.child("path"), ""));
                    }
                    errs.extend(validate_port_num_or_name(&h.port, &p.child("port")));
                    let scheme = s(&h.scheme);
                    if scheme != "HTTP" && scheme != "HTTPS" {
                        errs.push(field::not_supported(
                            &p.child("scheme"),
                            scheme,
                            &["HTTP", "HTTPS"],
                        ));
                    }
                }
            }
            "tcpSocket" => {
                if let Some(t) = typed.tcp_socket {
                    errs.extend(validate_port_num_or_name(&t.port, &p.child("port")));
                }
            }
            "grpc" => {
                if let Some(g) = typed.grpc_port {
                    errs.extend(validate_port_num_or_name(
                        &IntOrString::Int(g),
                        &p.child("port"),
                    ));
                }
            }
            _ => {
                // validateSleepAction with AllowPodLifecycleSleepActionZeroValue (on in 1.33).
                if let (Some(sec), Some(grace)) = (typed.sleep_seconds, grace) {
                    if sec < 0 || sec > grace {
                        errs.push(field::invalid(
                            &p,
                            sec,
                            format!("must be non-negative and less than terminationGracePeriodSeconds ({grace})"),
                        ));
                    }
                }
            }
        }
    }
    if count == 0 {
        errs.push(field::required(path, "must specify a handler type"));
    }
    errs
}

/// The handler fields of a probe or lifecycle handler.
#[derive(Clone, Copy, Default)]
pub(super) struct Handler<'a> {
    exec: Option<&'a wasm_apiserver_sdk::k8s_openapi::api::core::v1::ExecAction>,
    http_get: Option<&'a wasm_apiserver_sdk::k8s_openapi::api::core::v1::HTTPGetAction>,
    tcp_socket: Option<&'a wasm_apiserver_sdk::k8s_openapi::api::core::v1::TCPSocketAction>,
    grpc_port: Option<i32>,
    sleep_seconds: Option<i64>,
}

/// The handler kinds a probe or lifecycle handler sets (the keys its JSON would carry).
pub(super) fn handler_kinds(h: Handler<'_>, sleep: bool) -> [bool; 5] {
    [
        h.exec.is_some(),
        h.http_get.is_some(),
        h.tcp_socket.is_some(),
        h.grpc_port.is_some(),
        sleep,
    ]
}

/// `validateLifecycle`.
pub(super) fn validate_lifecycle(l: &Lifecycle, grace: Option<i64>, path: &Path) -> ErrorList {
    let mut errs = Vec::new();
    for (name, h) in [("postStart", &l.post_start), ("preStop", &l.pre_stop)] {
        if let Some(h) = h {
            let typed = lifecycle_handler(h);
            errs.extend(validate_handler(
                handler_kinds(typed, h.sleep.is_some()),
                typed,
                grace,
                &path.child(name),
            ));
        }
    }
    errs
}

pub(super) fn lifecycle_handler(h: &LifecycleHandler) -> Handler<'_> {
    Handler {
        exec: h.exec.as_ref(),
        http_get: h.http_get.as_ref(),
        tcp_socket: h.tcp_socket.as_ref(),
        grpc_port: None,
        sleep_seconds: h.sleep.as_ref().map(|s| s.seconds),
    }
}

/// `validateProbe`.
pub(super) fn validate_probe(p: &Probe, grace: Option<i64>, path: &Path) -> ErrorList {
    let typed = Handler {
        exec: p.exec.as_ref(),
        http_get: p.http_get.as_ref(),
        tcp_socket: p.tcp_socket.as_ref(),
        grpc_port: p.grpc.as_ref().map(|g| g.port),
        sleep_seconds: None,
    };
    let mut errs = validate_handler(handler_kinds(typed, false), typed, grace, path);
    for (name, value) in [
        ("initialDelaySeconds", p.initial_delay_seconds),
        ("timeoutSeconds", p.timeout_seconds),
        ("periodSeconds", p.period_seconds),
        ("successThreshold", p.success_threshold),
        ("failureThreshold", p.failure_threshold),
    ] {
        let value = i64::from(value.unwrap_or(0));
        // The path is built only for an error.
        if value < 0 {
            errs.extend(validate_nonnegative(value, &path.child(name)));
        }
    }
    if let Some(t) = p.termination_grace_period_seconds.filter(|t| *t <= 0) {
        errs.push(field::invalid(
            &path.child("terminationGracePeriodSeconds"),
            t,
            "must be greater than 0",
        ));
    }
    errs
}

/// `validateLivenessProbe`.
pub(super) fn validate_liveness_probe(
    p: Option<&Probe>,
    grace: Option<i64>,
    path: &Path,
) -> ErrorList {
    let Some(p) = p else { return Vec::new() };
    let mut errs = validate_probe(p, grace, path);
    let st = p.success_threshold.unwrap_or(0);
    if st != 1 {
        errs.push(field::invalid(
            &path.child("successThreshold"),
            st,
            "must be 1",
        ));
    }
    errs
}

/// `validateReadinessProbe`.
pub(super) fn validate_readiness_probe(
    p: Option<&Probe>,
    grace: Option<i64>,
    path: &Path,
) -> ErrorList {
    let Some(p) = p else { return Vec::new() };
    let mut errs = validate_probe(p, grace, path);
    if let Some(t) = p.termination_grace_period_seconds {
        errs.push(field::invalid(
            &path.child("terminationGracePeriodSeconds"),
            t,
            "must not be set for readinessProbes",
        ));
    }
    errs
}

/// `validateStartupProbe`.
pub(super) fn validate_startup_probe(
    p: Option<&Probe>,
    grace: Option<i64>,
    path: &Path,
) -> ErrorList {
    validate_liveness_probe(p, grace, path)
}

/// `IsDNS1123Label`'s problems with `value` (for the hostname warning of `WarningsOnCreate`).
pub fn dns_label_problems(value: &str) -> Vec<String> {
    v::is_dns1123_label(value)
}
