//! Which names a CustomResourceDefinition may take: kube's naming controller
//! (`apiextensions-apiserver/pkg/controller/status/naming_controller.go`,
//! `calculateNamesAndConditions`). Within one group, a CRD's plural, singular and short names
//! may not be a resource name another CRD has (its plural, singular or a short name), nor its
//! kind or list kind another's kind or list kind. The names CRDs have accepted already
//! (`status.acceptedNames`) are held first, so an edit can never take an accepted name from
//! another CRD (kube's `equalToAcceptedOrFresh`); then the CRDs are looked at oldest first, so
//! the older of two claimants keeps its names on every replica.

use serde_json::Value;
use std::collections::BTreeMap;

/// The names the CRDs accepted so far hold (kube's `getAcceptedNamesForGroup`).
#[derive(Default)]
pub struct ClaimedNames {
    /// (group, resource name) → the CRD holding it.
    resources: BTreeMap<(String, String), String>,
    /// (group, kind or list kind) → the CRD holding it.
    kinds: BTreeMap<(String, String), String>,
}

fn names(crd: &Value) -> &Value {
    crd.pointer("/spec/names").unwrap_or(&Value::Null)
}

fn group(crd: &Value) -> String {
    crd.pointer("/spec/group")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

fn name_at<'a>(names: &'a Value, key: &str) -> &'a str {
    names.get(key).and_then(Value::as_str).unwrap_or("")
}

fn short_names(names: &Value) -> Vec<&str> {
    names
        .get("shortNames")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

impl ClaimedNames {
    /// Why `crd` may not take its names: kube's reason (`PluralConflict`, `SingularConflict`,
    /// `ShortNamesConflict`, `KindConflict`, `ListKindConflict`; the last one found, as kube
    /// overwrites the condition for each) and message (`"x" is already in use`, naming the
    /// CRD holding it); `None` when it may.
    pub fn conflict(&self, crd: &Value, own: &str) -> Option<(&'static str, String)> {
        let (group, names) = (group(crd), names(crd));
        let used = |map: &BTreeMap<(String, String), String>, name: &str| {
            map.get(&(group.clone(), name.to_string()))
                .filter(|holder| !name.is_empty() && holder.as_str() != own)
                .map(|other| {
                    format!(
                        "\"{name}\" is already in use by the CustomResourceDefinition {other:?}"
                    )
                })
        };
        let mut found = None;
        for (key, reason) in [
            ("plural", "PluralConflict"),
            ("singular", "SingularConflict"),
        ] {
            if let Some(m) = used(&self.resources, name_at(names, key)) {
                found = Some((reason, m));
            }
        }
        let shorts: Vec<String> = short_names(names)
            .into_iter()
            .filter_map(|s| used(&self.resources, s))
            .collect();
        match shorts.len() {
            0 => {}
            1 => found = Some(("ShortNamesConflict", shorts[0].clone())),
            // utilerrors.NewAggregate's text.
            _ => found = Some(("ShortNamesConflict", format!("[{}]", shorts.join(", ")))),
        }
        for (key, reason) in [("kind", "KindConflict"), ("listKind", "ListKindConflict")] {
            if let Some(m) = used(&self.kinds, name_at(names, key)) {
                found = Some((reason, m));
            }
        }
        found
    }

    /// Record the names of the accepted CRD `name` (its spec's); a name held already stays
    /// with its holder.
    pub fn claim(&mut self, crd: &Value, name: &str) {
        self.hold(&group(crd), names(crd), name);
    }

    /// Record the names `crd` (named `name`) has accepted (`status.acceptedNames`) when its
    /// `NamesAccepted` condition is true.
    pub fn claim_accepted(&mut self, crd: &Value, name: &str) {
        let accepted = crd
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .is_some_and(|cs| {
                cs.iter()
                    .any(|c| c["type"] == "NamesAccepted" && c["status"] == "True")
            });
        if let (true, Some(names)) = (accepted, crd.pointer("/status/acceptedNames")) {
            self.hold(&group(crd), names, name);
        }
    }

    fn hold(&mut self, group: &str, names: &Value, name: &str) {
        let mut resources = vec![name_at(names, "plural"), name_at(names, "singular")];
        resources.extend(short_names(names));
        for r in resources.into_iter().filter(|r| !r.is_empty()) {
            self.resources
                .entry((group.to_string(), r.to_string()))
                .or_insert_with(|| name.to_string());
        }
        for k in [name_at(names, "kind"), name_at(names, "listKind")] {
            if !k.is_empty() {
                self.kinds
                    .entry((group.to_string(), k.to_string()))
                    .or_insert_with(|| name.to_string());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd(group: &str, plural: &str, singular: &str, shorts: &[&str], kind: &str) -> Value {
        json!({"spec": {"group": group, "names": {"plural": plural, "singular": singular,
            "shortNames": shorts, "kind": kind, "listKind": format!("{kind}List")}}})
    }

    #[test]
    fn every_name_conflicts_as_kube_s_naming_controller_finds() {
        let mut c = ClaimedNames::default();
        c.claim(
            &crd("a.io", "widgets", "widget", &["wd"], "Widget"),
            "widgets.a.io",
        );
        let by = "by the CustomResourceDefinition \"widgets.a.io\"";
        let cases = [
            (
                crd("a.io", "widgets", "w2", &[], "W2"),
                "PluralConflict",
                "\"widgets\"",
            ),
            (
                crd("a.io", "gadgets", "widget", &[], "Gadget"),
                "SingularConflict",
                "\"widget\"",
            ),
            (
                crd("a.io", "gadgets", "gadget", &["wd"], "Gadget"),
                "ShortNamesConflict",
                "\"wd\"",
            ),
            // A plural may not be another's short name either.
            (
                crd("a.io", "wd", "gadget", &[], "Gadget"),
                "PluralConflict",
                "\"wd\"",
            ),
            (
                json!({"spec": {"group": "a.io", "names": {"plural": "gadgets", "singular": "gadget",
                    "kind": "Widget", "listKind": "GadgetList"}}}),
                "KindConflict",
                "\"Widget\"",
            ),
            (
                json!({"spec": {"group": "a.io", "names": {"plural": "gadgets", "singular": "gadget",
                    "kind": "Gadget", "listKind": "WidgetList"}}}),
                "ListKindConflict",
                "\"WidgetList\"",
            ),
        ];
        for (other, reason, name) in cases {
            let got = c.conflict(&other, "other");
            assert_eq!(
                got,
                Some((reason, format!("{name} is already in use {by}"))),
                "{other}"
            );
        }
        // The last conflict found is the reason, as kube overwrites the condition.
        let both = crd("a.io", "widgets", "w3", &[], "Widget");
        assert_eq!(c.conflict(&both, "other").unwrap().0, "ListKindConflict");
        // Another group, or fresh names: no conflict.
        assert_eq!(
            c.conflict(
                &crd("b.io", "widgets", "widget", &["wd"], "Widget"),
                "other"
            ),
            None
        );
        assert_eq!(
            c.conflict(
                &crd("a.io", "gadgets", "gadget", &["gd"], "Gadget"),
                "other"
            ),
            None
        );
        // Its own names are no conflict; an accepted CRD's names stay its own when another
        // CRD's edit asks for them.
        let widgets = crd("a.io", "widgets", "widget", &["wd"], "Widget");
        assert_eq!(c.conflict(&widgets, "widgets.a.io"), None);
        let mut accepted = ClaimedNames::default();
        let mut b = crd("a.io", "bolts", "bolt", &[], "Bolt");
        b["status"] = json!({"conditions": [{"type": "NamesAccepted", "status": "True"}],
            "acceptedNames": b["spec"]["names"].clone()});
        accepted.claim_accepted(&b, "bolts.a.io");
        let edited = crd("a.io", "widgets", "widget", &["bolts"], "Widget");
        assert_eq!(
            accepted.conflict(&edited, "widgets.a.io").unwrap().0,
            "ShortNamesConflict"
        );
    }
}
