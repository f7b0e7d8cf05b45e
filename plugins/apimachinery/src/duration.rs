//! Durations as Kubernetes prints and parses them.

/// `duration.HumanDuration` (`k8s.io/apimachinery/pkg/util/duration`): `45s`, `3m20s`, `5h`, `2d3h`, `3y`.
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".into();
    }
    if seconds < 0 {
        return "0s".into();
    }
    if seconds < 120 {
        return format!("{seconds}s");
    }
    let minutes = seconds / 60;
    if minutes < 10 {
        let s = seconds % 60;
        return if s == 0 {
            format!("{minutes}m")
        } else {
            format!("{minutes}m{s}s")
        };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = seconds / 3600;
    if hours < 8 {
        let m = minutes % 60;
        return if m == 0 {
            format!("{hours}h")
        } else {
            format!("{hours}h{m}m")
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        let h = hours % 24;
        return if h == 0 {
            format!("{}d", hours / 24)
        } else {
            format!("{}d{h}h", hours / 24)
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        return if dy == 0 {
            format!("{}y", hours / 24 / 365)
        } else {
            format!("{}y{dy}d", hours / 24 / 365)
        };
    }
    format!("{}y", hours / 24 / 365)
}

/// A duration as kube-openapi's `strfmt.ParseDuration` (`k8s.io/kube-openapi/pkg/validation/
/// strfmt/duration.go`) reads a `format: duration` string: Go's
/// `time.ParseDuration` (`1h30m`, `-1.5s`, units `ns`, `us`, `µs`, `ms`, `s`, `m`, `h`) plus
/// days (`d`) and weeks (`w`).
pub fn parse_strfmt_duration(s: &str) -> Option<chrono::Duration> {
    parse_duration_units(s, true)
}

/// A duration as Go's `time.ParseDuration` reads it (CEL's `duration()`): no days or weeks.
pub fn parse_go_duration(s: &str) -> Option<chrono::Duration> {
    parse_duration_units(s, false)
}

fn parse_duration_units(s: &str, days_and_weeks: bool) -> Option<chrono::Duration> {
    let (negative, mut rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if rest == "0" {
        return Some(chrono::Duration::zero());
    }
    if rest.is_empty() {
        return None;
    }
    let mut nanos: f64 = 0.0;
    while !rest.is_empty() {
        let number_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .filter(|&i| i > 0)?;
        let number: f64 = rest[..number_end].parse().ok()?;
        rest = &rest[number_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = match &rest[..unit_end] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            "d" if days_and_weeks => 86400e9,
            "w" if days_and_weeks => 7.0 * 86400e9,
            _ => return None,
        };
        rest = &rest[unit_end..];
        nanos += number * unit;
    }
    if nanos > i64::MAX as f64 {
        return None;
    }
    let d = chrono::Duration::nanoseconds(nanos as i64);
    Some(if negative { -d } else { d })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_durations_match_kubernetes() {
        assert_eq!(human_duration(45), "45s");
        assert_eq!(human_duration(119), "119s");
        assert_eq!(human_duration(200), "3m20s");
        assert_eq!(human_duration(600), "10m");
        assert_eq!(human_duration(5 * 3600), "5h");
        assert_eq!(human_duration(5 * 3600 + 120), "5h2m");
        assert_eq!(human_duration(30 * 3600), "30h");
        assert_eq!(human_duration(51 * 3600), "2d3h");
        assert_eq!(human_duration(400 * 24 * 3600), "400d");
        assert_eq!(human_duration(3 * 365 * 24 * 3600 + 24 * 3600), "3y1d");
    }
}
