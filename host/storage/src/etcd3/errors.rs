//! Mapping `etcd-client` errors onto [`BackendError`], following
//! `k8s.io/apiserver/pkg/storage/etcd3/errors.go` (`ErrCompacted` → 410, `ErrFutureRev` → 504)
//! and `pkg/storage/errors.go` (`ErrCodeUnreachable`, `ErrCodeTimeout`).

use crate::errors::BackendError;

/// etcd's `ErrGRPCCompacted` message (`etcdserver: mvcc: required revision has been compacted`).
const COMPACTED_MSG: &str = "required revision has been compacted";
/// etcd's `ErrGRPCFutureRev` message (`etcdserver: mvcc: required revision is a future revision`).
const FUTURE_MSG: &str = "required revision is a future revision";
/// etcd's `ErrGRPCRequestTooLarge` message (a write past `--max-request-bytes`).
const TOO_LARGE_MSG: &str = "request is too large";
/// etcd's `ErrGRPCTimeout*` family (`etcdserver: request timed out`, `... due to leader failure`).
const SERVER_TIMEOUT_MSG: &str = "request timed out";

/// What an etcd error means, before the revisions it needs are filled in.
#[derive(Debug)]
pub(crate) enum Classified {
    /// `ErrCompacted`: the compacted revision is not in the message; the caller supplies a bound.
    Compacted,
    /// `ErrFutureRev`: the caller looks up the current revision.
    FutureRevision,
    /// Any other error, already mapped.
    Mapped(BackendError),
}

/// gRPC status codes (`google.golang.org/grpc/codes`), as `tonic::Code` discriminants.
mod code {
    pub const CANCELLED: i32 = 1;
    pub const UNKNOWN: i32 = 2;
    pub const DEADLINE_EXCEEDED: i32 = 4;
    pub const PERMISSION_DENIED: i32 = 7;
    pub const UNAVAILABLE: i32 = 14;
    pub const UNAUTHENTICATED: i32 = 16;
}

/// Whether etcd answered and refused the caller (authentication or permission), as opposed to
/// not answering as etcd at all.
pub(crate) fn is_auth_error(e: &etcd_client::Error) -> bool {
    matches!(e, etcd_client::Error::GRpcStatus(status)
        if matches!(status.code() as i32, code::PERMISSION_DENIED | code::UNAUTHENTICATED))
}

/// `e` as one line for a person: a gRPC status's message and the innermost cause of its
/// source chain (`tcp connect error: Connection refused (os error 111)`), where `Display` of
/// tonic's status appends the whole source as a debug structure.
pub(crate) fn one_line(e: &etcd_client::Error) -> String {
    let innermost = |mut cause: &(dyn std::error::Error + 'static)| {
        while let Some(next) = cause.source() {
            cause = next;
        }
        cause.to_string()
    };
    match e {
        etcd_client::Error::GRpcStatus(status) => {
            match std::error::Error::source(status).map(innermost) {
                Some(cause) if !status.message().is_empty() => {
                    format!("{}: {cause}", status.message())
                }
                Some(cause) => cause,
                None => format!("{}: {}", status.code(), status.message()),
            }
        }
        other => match std::error::Error::source(other) {
            Some(source) => format!("{other}: {}", innermost(source)),
            None => other.to_string(),
        },
    }
}

/// Classify an `etcd-client` error. `endpoints` names the cluster in `Unreachable` messages.
pub(crate) fn classify(e: &etcd_client::Error, endpoints: &str) -> Classified {
    match e {
        etcd_client::Error::GRpcStatus(status) => {
            classify_status(status.code() as i32, status.message(), endpoints)
        }
        etcd_client::Error::TransportError(_)
        | etcd_client::Error::IoError(_)
        | etcd_client::Error::EndpointError(_)
        | etcd_client::Error::WatchError(_) => {
            Classified::Mapped(BackendError::Unreachable(format!("etcd {endpoints}: {e}")))
        }
        _ => Classified::Mapped(BackendError::Other(format!("etcd {endpoints}: {e}"))),
    }
}

/// Classify a gRPC status by its code (a `tonic::Code` discriminant) and message.
fn classify_status(code: i32, message: &str, endpoints: &str) -> Classified {
    if message.contains(COMPACTED_MSG) {
        return Classified::Compacted;
    }
    if message.contains(FUTURE_MSG) {
        return Classified::FutureRevision;
    }
    let text = format!("etcd {endpoints}: {message}");
    Classified::Mapped(if message.contains(TOO_LARGE_MSG) {
        BackendError::RequestTooLarge(text)
    } else if message.contains(SERVER_TIMEOUT_MSG) {
        BackendError::Timeout(text)
    } else {
        match code {
            code::DEADLINE_EXCEEDED => BackendError::Timeout(text),
            code::UNAVAILABLE | code::CANCELLED => BackendError::Unreachable(text),
            // A broken connection surfaces as `Unknown` with the transport's message.
            code::UNKNOWN if looks_like_transport(message) => BackendError::Unreachable(text),
            _ => BackendError::Other(text),
        }
    })
}

/// Whether a failed request may be sent again, as clientv3's retry interceptor decides
/// (`client/v3/retry_interceptor.go` `isSafeRetry`): a read on any unavailability, a
/// mutation only when it never reached a member that could apply it
/// (`isSafeRetryMutableRPC`: no connection could be made; also a member without a leader,
/// which refuses before proposing under `WithRequireLeader`).
pub(crate) fn is_safe_retry(e: &etcd_client::Error, mutation: bool) -> bool {
    let message = match e {
        etcd_client::Error::GRpcStatus(status) => {
            let code = status.code() as i32;
            let unavailable = code == code::UNAVAILABLE
                || (code == code::UNKNOWN && looks_like_transport(status.message()));
            if !unavailable {
                return false;
            }
            status.message().to_ascii_lowercase()
        }
        etcd_client::Error::TransportError(_) | etcd_client::Error::IoError(_) => {
            e.to_string().to_ascii_lowercase()
        }
        _ => return false,
    };
    !mutation
        || [
            "error trying to connect",
            "tcp connect error",
            "connection refused",
            "service was not ready",
            "no address available",
            "no connection available",
            "no leader",
        ]
        .iter()
        .any(|needle| message.contains(needle))
}

/// Whether a gRPC `Unknown` message is a connection failure (tonic/hyper/h2 wording).
fn looks_like_transport(message: &str) -> bool {
    let m = message.to_ascii_lowercase();
    [
        "transport",
        "connection",
        "connect",
        "h2 protocol",
        "broken pipe",
        "stream closed",
        "service was not ready",
        "eof",
    ]
    .iter()
    .any(|needle| m.contains(needle))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_etcd_messages() {
        let invalid_argument = 3;
        assert!(matches!(
            classify_status(invalid_argument, "etcdserver: request is too large", "x"),
            Classified::Mapped(BackendError::RequestTooLarge(m)) if m == "etcd x: etcdserver: request is too large"
        ));
        let out_of_range = 11;
        assert!(matches!(
            classify_status(
                out_of_range,
                "etcdserver: mvcc: required revision has been compacted",
                "x"
            ),
            Classified::Compacted
        ));
        assert!(matches!(
            classify_status(
                out_of_range,
                "etcdserver: mvcc: required revision is a future revision",
                "x"
            ),
            Classified::FutureRevision
        ));
        assert!(matches!(
            classify_status(code::UNAVAILABLE, "connection refused", "[http://a]"),
            Classified::Mapped(BackendError::Unreachable(m)) if m.contains("http://a")
        ));
        assert!(matches!(
            classify_status(code::UNAVAILABLE, "etcdserver: request timed out", "x"),
            Classified::Mapped(BackendError::Timeout(_))
        ));
        assert!(matches!(
            classify_status(code::UNKNOWN, "h2 protocol error: broken pipe", "x"),
            Classified::Mapped(BackendError::Unreachable(_))
        ));
        assert!(matches!(
            classify_status(3, "etcdserver: key is not provided", "x"),
            Classified::Mapped(BackendError::Other(_))
        ));
    }
}
