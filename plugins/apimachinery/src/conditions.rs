//! Status conditions (`metav1.Condition`) kept as `k8s.io/apimachinery/pkg/api/meta/
//! conditions.go` `SetStatusCondition` keeps them: a condition's `lastTransitionTime` moves
//! only when its `status` changes.

use serde_json::Value;

/// The `lastTransitionTime` a condition of type `kind` with `status` (`"True"`, `"False"`,
/// `"Unknown"`) gets: that of the condition of the same type and status in `previous` (a
/// `status.conditions` array as JSON), else now (RFC 3339, seconds).
pub fn transition_time(previous: &[Value], kind: &str, status: &str) -> Value {
    previous
        .iter()
        .find(|c| c["type"] == kind && c["status"] == status)
        .and_then(|c| c.get("lastTransitionTime").cloned())
        .unwrap_or_else(|| Value::String(crate::time::now()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_time_moves_only_with_the_status() {
        let previous = [json!({"type": "Ready", "status": "True",
                               "lastTransitionTime": "2026-01-01T00:00:00Z"})];
        assert_eq!(
            transition_time(&previous, "Ready", "True"),
            "2026-01-01T00:00:00Z"
        );
        assert_ne!(
            transition_time(&previous, "Ready", "False"),
            "2026-01-01T00:00:00Z"
        );
        assert_ne!(
            transition_time(&previous, "Degraded", "True"),
            "2026-01-01T00:00:00Z"
        );
    }
}
