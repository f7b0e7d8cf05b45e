//! Kube-aware ordering of API version names, ported from
//! `k8s.io/apimachinery/pkg/version/helpers.go` (`CompareKubeAwareVersionStrings`): GA before
//! beta before alpha, then by major, then by minor (`v2`, `v1`, `v1beta2`, `v1beta1`,
//! `v1alpha1`); names that are not kube-like (`v1.2`, `foo`) come last, in reverse string order
//! as in Go.

use std::cmp::Ordering;

/// `parseKubeVersion`: (major, type — 0 alpha, 1 beta, 2 GA —, minor) of `v<major>[(alpha|beta)<minor>]`.
fn parse(v: &str) -> Option<(i64, u8, i64)> {
    let rest = v.strip_prefix('v')?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    // Go's strconv.Atoi: an int64.
    let major: i64 = rest[..digits].parse().ok()?;
    let rest = &rest[digits..];
    if rest.is_empty() {
        return Some((major, 2, 0));
    }
    let (ty, minor) = if let Some(m) = rest.strip_prefix("alpha") {
        (0, m)
    } else if let Some(m) = rest.strip_prefix("beta") {
        (1, m)
    } else {
        return None;
    };
    if minor.is_empty() || !minor.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((major, ty, minor.parse().ok()?))
}

/// `CompareKubeAwareVersionStrings(a, b)` as an [`Ordering`]: `Greater` when `a` has the higher
/// priority (`compare_kube_aware("v1", "v1beta1") == Greater`).
pub fn compare_kube_aware(a: &str, b: &str) -> Ordering {
    if a == b {
        return Ordering::Equal;
    }
    match (parse(a), parse(b)) {
        (None, None) => b.cmp(a),
        (None, Some(_)) => Ordering::Less,
        (Some(_), None) => Ordering::Greater,
        (Some((amaj, aty, amin)), Some((bmaj, bty, bmin))) => {
            aty.cmp(&bty).then(amaj.cmp(&bmaj)).then(amin.cmp(&bmin))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// helpers_test.go `TestCompareKubeAwareVersionStrings`, as a sort.
    #[test]
    fn kube_aware_order() {
        let mut v = vec![
            "v1alpha1",
            "v1",
            "foo1",
            "v1beta1",
            "v2",
            "v10",
            "v1beta2",
            "v12alpha1",
            "v11alpha2",
            "foo10",
            "v1.2",
            "v2beta1",
        ];
        v.sort_by(|a, b| compare_kube_aware(b, a));
        assert_eq!(
            v,
            vec![
                "v10",
                "v2",
                "v1",
                "v2beta1",
                "v1beta2",
                "v1beta1",
                "v12alpha1",
                "v11alpha2",
                "v1alpha1",
                "foo1",
                "foo10",
                "v1.2"
            ]
        );
    }
}
