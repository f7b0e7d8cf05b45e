//! How a delete treats the object's dependents (`metav1.DeletionPropagation`) and the
//! garbage-collection finalizers a delete sets for it, as kube's generic `Store.Delete` does
//! (`k8s.io/apiserver/pkg/registry/generic/registry/store.go`:
//! `deletionFinalizersForGarbageCollection`, `shouldOrphanDependents`,
//! `shouldDeleteDependentsInForeground`). The garbage collector
//! ([`crate::controllers::garbage_collector`]) acts on the finalizers.

use wasm_apiserver_apimachinery::field::{self, ErrorList, Path};

/// `metav1.FinalizerOrphanDependents`: the garbage collector removes the object's
/// `ownerReferences` from its dependents, then this finalizer.
pub const FINALIZER_ORPHAN_DEPENDENTS: &str = "orphan";

/// `metav1.FinalizerDeleteDependents`: the garbage collector deletes the object's dependents
/// and removes this finalizer once no `blockOwnerDeletion` dependent is left.
pub const FINALIZER_DELETE_DEPENDENTS: &str = "foregroundDeletion";

/// `propagationPolicy` of `DeleteOptions`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PropagationPolicy {
    /// Dependents are kept, their references to the object removed.
    Orphan,
    /// The object goes now, the garbage collector deletes the dependents after.
    Background,
    /// The object stays (with `foregroundDeletion`) until its blocking dependents are gone.
    Foreground,
}

impl PropagationPolicy {
    /// The policy from `propagationPolicy` and the deprecated `orphanDependents`
    /// (`ValidateDeleteOptions` in `k8s.io/apimachinery/pkg/apis/meta/v1/validation`): both set,
    /// or a policy not in the list, is an error; `orphanDependents: false` reads as
    /// `Background` (neither finalizer).
    pub fn from_options(
        policy: Option<&str>,
        orphan_dependents: Option<bool>,
    ) -> Result<Option<PropagationPolicy>, ErrorList> {
        let path = Path::new("propagationPolicy");
        let parsed = match policy {
            None => None,
            Some("Orphan") => Some(PropagationPolicy::Orphan),
            Some("Background") => Some(PropagationPolicy::Background),
            Some("Foreground") => Some(PropagationPolicy::Foreground),
            Some(other) => {
                return Err(vec![field::not_supported(
                    &path,
                    other,
                    &["Foreground", "Background", "Orphan", "nil"],
                )])
            }
        };
        match (parsed, orphan_dependents) {
            (Some(p), None) => Ok(Some(p)),
            (None, Some(true)) => Ok(Some(PropagationPolicy::Orphan)),
            (None, Some(false)) => Ok(Some(PropagationPolicy::Background)),
            (None, None) => Ok(None),
            (Some(p), Some(_)) => Err(vec![field::invalid(
                &path,
                format!("{p:?}"),
                "orphanDependents and deletionPropagation cannot be both set",
            )]),
        }
    }
}

/// The finalizers a delete leaves on an object that had `finalizers`, or `None` when they do
/// not change (`deletionFinalizersForGarbageCollection`): both GC finalizers removed, then the
/// one the policy asks for added; without a policy an existing GC finalizer stays (the
/// default policy of every resource here is to delete dependents in the background).
pub fn deletion_finalizers(
    finalizers: &[String],
    policy: Option<PropagationPolicy>,
) -> Option<Vec<String>> {
    let has = |f: &str| finalizers.iter().any(|x| x == f);
    let (orphan, foreground) = match policy {
        Some(PropagationPolicy::Orphan) => (true, false),
        Some(PropagationPolicy::Foreground) => (false, true),
        Some(PropagationPolicy::Background) => (false, false),
        None if has(FINALIZER_ORPHAN_DEPENDENTS) => (true, false),
        None if has(FINALIZER_DELETE_DEPENDENTS) => (false, true),
        None => (false, false),
    };
    let mut out: Vec<String> = finalizers
        .iter()
        .filter(|f| *f != FINALIZER_ORPHAN_DEPENDENTS && *f != FINALIZER_DELETE_DEPENDENTS)
        .cloned()
        .collect();
    if orphan {
        out.push(FINALIZER_ORPHAN_DEPENDENTS.into());
    }
    if foreground {
        out.push(FINALIZER_DELETE_DEPENDENTS.into());
    }
    let same = out.len() == finalizers.len() && out.iter().all(|f| has(f));
    (!same).then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn finalizers_follow_the_policy() {
        use PropagationPolicy::*;
        assert_eq!(deletion_finalizers(&[], None), None);
        assert_eq!(deletion_finalizers(&[], Some(Background)), None);
        assert_eq!(deletion_finalizers(&[], Some(Orphan)), Some(v(&["orphan"])));
        assert_eq!(
            deletion_finalizers(&v(&["a/b"]), Some(Foreground)),
            Some(v(&["a/b", "foregroundDeletion"]))
        );
        // Switching: the other GC finalizer goes.
        assert_eq!(
            deletion_finalizers(&v(&["orphan", "a/b"]), Some(Foreground)),
            Some(v(&["a/b", "foregroundDeletion"]))
        );
        assert_eq!(
            deletion_finalizers(&v(&["foregroundDeletion"]), Some(Background)),
            Some(v(&[]))
        );
        // No policy: what the object already says stands.
        assert_eq!(deletion_finalizers(&v(&["orphan"]), None), None);
        assert_eq!(deletion_finalizers(&v(&["orphan"]), Some(Orphan)), None);
    }

    #[test]
    fn options_are_validated_as_kube_does() {
        use PropagationPolicy::*;
        assert_eq!(PropagationPolicy::from_options(None, None), Ok(None));
        assert_eq!(
            PropagationPolicy::from_options(Some("Foreground"), None),
            Ok(Some(Foreground))
        );
        assert_eq!(
            PropagationPolicy::from_options(None, Some(true)),
            Ok(Some(Orphan))
        );
        assert_eq!(
            PropagationPolicy::from_options(None, Some(false)),
            Ok(Some(Background))
        );
        let e = PropagationPolicy::from_options(Some("Sideways"), None).unwrap_err();
        assert_eq!(e[0].field, "propagationPolicy");
        let e = PropagationPolicy::from_options(Some("Orphan"), Some(true)).unwrap_err();
        assert!(e[0].detail.contains("cannot be both set"), "{e:?}");
    }
}
