//! `metav1.Time` and `metav1.MicroTime` as Kubernetes writes them
//! (`k8s.io/apimachinery/pkg/apis/meta/v1/time.go`: RFC 3339 in UTC, whole seconds;
//! `micro_time.go`: six fractional digits). Used by the host for the timestamps it sets
//! (`creationTimestamp`, `deletionTimestamp`, `managedFields[].time`, lease renewals). Inside
//! a plugin's sandbox the clock is stopped at the epoch, so these read 1970 there.

/// Now as a `metav1.Time` string, e.g. `2026-11-21T08:00:00Z`.
pub fn now() -> String {
    chrono::Utc::now().format("%Y-%m-%dT%H:%M:%SZ").to_string()
}

/// Now as a `metav1.MicroTime` string, e.g. `2026-11-21T08:00:00.123456Z`.
pub fn now_micro() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string()
}

/// `seconds` after now (before, when negative) as a `metav1.Time` string.
pub fn now_plus(seconds: i64) -> String {
    (chrono::Utc::now() + chrono::Duration::seconds(seconds))
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        let t = now();
        assert_eq!(t.len(), "2026-11-21T08:00:00Z".len(), "{t}");
        assert!(t.ends_with('Z') && !t.contains('.'));
        let m = now_micro();
        assert_eq!(m.len(), "2026-11-21T08:00:00.123456Z".len(), "{m}");
        assert!(now_plus(3600) > t && now_plus(-3600) < t);
    }
}
