//! structured-merge-diff's `merge.Updater` (`merge/update.go`, `merge/conflict.go`): how a
//! write changes who owns which field.
//!
//! - [`Updater::update`] (every write but apply): the fields the write added or changed move
//!   to its manager (taken from every other manager), removed fields leave every manager.
//! - [`Updater::apply`]: the configuration is merged into the live object; the applier owns
//!   exactly the configuration's fields; a field it owned before and no longer sends is
//!   removed unless another manager owns it (`prune`); changing a field another manager owns
//!   is a conflict unless forced, and forcing takes the field from that manager.
//!
//! One schema serves every version here (a resource has one version), so structured-merge-
//! diff's conversions between versions are the identity.

use super::managed_fields::VersionedSet;
use super::path_element::{path_string, PathElement};
use super::schema::Schema;
use super::set::Set;
use super::typed::{self, Comparison};
use serde_json::Value;
use std::collections::BTreeMap;

/// `fieldpath.ManagedFields`: each manager identifier's fields.
pub type ManagedFields = BTreeMap<String, VersionedSet>;

/// `merge.Conflict`: a field the applier would change that `manager` owns.
#[derive(Debug, Clone, PartialEq)]
pub struct Conflict {
    /// The owner's manager identifier.
    pub manager: String,
    /// The field.
    pub path: Vec<PathElement>,
}

impl std::fmt::Display for Conflict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "conflict with {:?}: {}",
            self.manager,
            path_string(&self.path)
        )
    }
}

/// Why an update or apply could not be computed.
#[derive(Debug, Clone, PartialEq)]
pub enum UpdateError {
    /// Unforced apply changing other managers' fields (`merge.Conflicts`), ordered by manager
    /// identifier, then path.
    Conflicts(Vec<Conflict>),
    /// An object that cannot be typed by the schema (a list item without a name, two applied
    /// items of one name).
    Invalid(String),
}

/// `merge.Updater` for one resource: its schema and the fields writes through this endpoint
/// never own (`IgnoredFields`: the status of a resource with a status subresource, the spec
/// written through `/status`).
pub struct Updater<'a> {
    /// The resource's schema.
    pub schema: &'a Schema,
    /// Fields excluded from ownership.
    pub ignored: Option<&'a Set>,
}

impl Updater<'_> {
    /// The comparison of `old` and `new`, with the owners of changed and removed fields
    /// (other than `workflow`) losing them; an unforced change to another's field is an
    /// error listing every such field.
    fn update_owners(
        &self,
        old: &Value,
        new: &Value,
        managers: &mut ManagedFields,
        workflow: &str,
        force: bool,
    ) -> Result<Comparison, UpdateError> {
        let mut compare = typed::compare(self.schema, old, new).map_err(UpdateError::Invalid)?;
        if let Some(ignored) = self.ignored {
            compare.exclude(ignored);
        }
        let changed = compare.modified.union(&compare.added);
        let mut conflicts: Vec<(String, Set)> = Vec::new();
        for (manager, vs) in managers.iter() {
            if manager == workflow {
                continue;
            }
            let conflict = vs.set.intersection(&changed);
            if !conflict.is_empty() {
                conflicts.push((manager.clone(), conflict));
            }
        }
        if !force && !conflicts.is_empty() {
            return Err(UpdateError::Conflicts(
                conflicts
                    .iter()
                    .flat_map(|(m, set)| {
                        set.paths().into_iter().map(move |path| Conflict {
                            manager: m.clone(),
                            path,
                        })
                    })
                    .collect(),
            ));
        }
        for (manager, conflict) in conflicts {
            if let Some(vs) = managers.get_mut(&manager) {
                vs.set = vs.set.difference(&conflict);
            }
        }
        if !compare.removed.is_empty() {
            for (manager, vs) in managers.iter_mut() {
                if manager != workflow {
                    vs.set = vs.set.difference(&compare.removed);
                }
            }
        }
        managers.retain(|_, vs| !vs.set.is_empty());
        Ok(compare)
    }

    /// `Updater.Update`: a non-apply write by `manager` from `live` to `new`; its entry gains
    /// what the write added and changed and loses what it removed.
    pub fn update(
        &self,
        live: &Value,
        new: &Value,
        version: &str,
        managers: &mut ManagedFields,
        manager: &str,
    ) -> Result<(), UpdateError> {
        let compare = self.update_owners(live, new, managers, manager, true)?;
        let previous = managers
            .remove(manager)
            .map(|vs| vs.set)
            .unwrap_or_default();
        let mut set = previous
            .difference(&compare.removed)
            .union(&compare.modified)
            .union(&compare.added);
        if let Some(ignored) = self.ignored {
            set = set.recursive_difference(ignored);
        }
        if !set.is_empty() {
            managers.insert(
                manager.to_string(),
                VersionedSet {
                    set,
                    api_version: version.to_string(),
                    applied: false,
                },
            );
        }
        Ok(())
    }

    /// `Updater.Apply`: `config` applied by `manager` onto `live`. Returns the new object, or
    /// `None` when it equals `live` (a no-op apply), and updates `managers`. Errors:
    /// [`UpdateError::Conflicts`] unless `force`, [`UpdateError::Invalid`].
    pub fn apply(
        &self,
        live: &Value,
        config: &Value,
        version: &str,
        managers: &mut ManagedFields,
        manager: &str,
        force: bool,
    ) -> Result<Option<Value>, UpdateError> {
        let merged = typed::merge(self.schema, live, config).map_err(UpdateError::Invalid)?;
        let last = managers.get(manager).map(|vs| vs.set.clone());
        let mut set = typed::to_field_set(self.schema, config).map_err(UpdateError::Invalid)?;
        if let Some(ignored) = self.ignored {
            set = set.recursive_difference(ignored);
        }
        managers.insert(
            manager.to_string(),
            VersionedSet {
                set,
                api_version: version.to_string(),
                applied: true,
            },
        );
        let new = match last.filter(|l| !l.is_empty()) {
            Some(last) => self.prune(&merged, managers, &last)?,
            None => merged,
        };
        self.update_owners(live, &new, managers, manager, force)?;
        Ok((!typed::values_equal(live, &new)).then_some(new))
    }

    /// `prune` with `addBackOwnedItems` and `addBackDanglingItems`: remove from `merged` what
    /// the applier owned last time (`last`) and no longer applies, except what any manager
    /// (the applier's new set included) still owns, and except items the removal would take
    /// that were never the applier's.
    fn prune(
        &self,
        merged: &Value,
        managers: &ManagedFields,
        last: &Set,
    ) -> Result<Value, UpdateError> {
        let s = self.schema;
        let named = |set: &Set| typed::ensure_named_fields_are_members(set, Some(s));
        let fields = |v: &Value| {
            typed::to_field_set(s, v)
                .map(|f| named(&f))
                .map_err(UpdateError::Invalid)
        };
        let last = named(last);
        let pruned = typed::remove_items(s, merged, &last);
        // addBackOwnedItems.
        let managed = managers
            .values()
            .fold(Set::new(), |acc, vs| acc.union(&vs.set));
        let merged_set = fields(merged)?;
        let keep = fields(&pruned)?.union(&named(&managed));
        let pruned = typed::remove_items(s, merged, &merged_set.difference(&keep));
        // addBackDanglingItems.
        let pruned_set = fields(&pruned)?;
        Ok(typed::remove_items(
            s,
            merged,
            &merged_set.difference(&pruned_set).intersection(&last),
        ))
    }
}

#[cfg(test)]
mod tests {
    //! Ports of structured-merge-diff's `merge/*_test.go` cases (named after the upstream
    //! test and case), through the same operations its fixture runs: `Apply`, `ForceApply`
    //! and `Update` on one live object.
    use super::*;
    use serde_json::json;

    fn f(name: &str) -> PathElement {
        PathElement::Field(name.into())
    }
    fn k(name: &str, v: &str) -> PathElement {
        PathElement::Key(vec![(name.into(), json!(v))])
    }
    fn v(v: &str) -> PathElement {
        PathElement::Value(json!(v))
    }
    fn set(paths: &[Vec<PathElement>]) -> Set {
        let mut s = Set::new();
        for p in paths {
            s.insert(p);
        }
        s
    }

    struct State {
        schema: Schema,
        live: Value,
        managers: ManagedFields,
    }

    impl State {
        fn new(openapi: Value) -> State {
            State {
                schema: Schema::from_openapi(&openapi),
                live: json!({}),
                managers: ManagedFields::new(),
            }
        }
        fn updater(&self) -> Updater<'_> {
            Updater {
                schema: &self.schema,
                ignored: None,
            }
        }
        fn apply(&mut self, manager: &str, config: Value, force: bool) -> Result<(), UpdateError> {
            let mut managers = self.managers.clone();
            let new =
                self.updater()
                    .apply(&self.live, &config, "v1", &mut managers, manager, force)?;
            self.managers = managers;
            if let Some(new) = new {
                self.live = new;
            }
            Ok(())
        }
        fn update(&mut self, manager: &str, obj: Value) {
            let mut managers = self.managers.clone();
            self.updater()
                .update(&self.live, &obj, "v1", &mut managers, manager)
                .unwrap();
            self.managers = managers;
            self.live = obj;
        }
        fn owned(&self, manager: &str) -> Set {
            self.managers
                .get(manager)
                .map(|vs| vs.set.clone())
                .unwrap_or_default()
        }
    }

    fn leaf_fields() -> State {
        State::new(json!({"type": "object", "properties": {
            "numeric": {"type": "number"}, "string": {"type": "string"}, "bool": {"type": "boolean"}}}))
    }

    fn sets() -> State {
        State::new(json!({"type": "object", "properties": {
            "list": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}}}))
    }

    fn associative_list() -> State {
        State::new(json!({"type": "object", "properties": {
            "list": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                     "items": {"type": "object", "properties": {"name": {"type": "string"}, "value": {"type": "string"}}}},
            "listOfLists": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                     "items": {"type": "object", "properties": {"name": {"type": "string"},
                        "value": {"type": "array", "items": {"type": "string"}, "x-kubernetes-list-type": "set"}}}}}}))
    }

    #[test]
    fn leaf_apply_update_apply_with_conflict() {
        // leaf_test.go TestUpdateLeaf "apply_update_apply_with_conflict".
        let mut s = leaf_fields();
        s.apply("default", json!({"numeric": 1, "string": "string"}), false)
            .unwrap();
        s.update(
            "controller",
            json!({"numeric": 1, "string": "controller string", "bool": true}),
        );
        let err = s
            .apply(
                "default",
                json!({"numeric": 2, "string": "user string"}),
                false,
            )
            .unwrap_err();
        assert_eq!(
            err,
            UpdateError::Conflicts(vec![Conflict {
                manager: "controller".into(),
                path: vec![f("string")]
            }])
        );
        s.apply(
            "default",
            json!({"numeric": 2, "string": "user string"}),
            true,
        )
        .unwrap();
        assert_eq!(
            s.live,
            json!({"numeric": 2, "string": "user string", "bool": true})
        );
        assert_eq!(
            s.owned("default"),
            set(&[vec![f("numeric")], vec![f("string")]])
        );
        assert_eq!(s.owned("controller"), set(&[vec![f("bool")]]));
    }

    /// "apply_update_apply_no_conflict" (leaf_test.go, deduced_test.go): an updater's new field
    /// stays its own while the applier changes its fields.
    fn apply_update_apply_no_conflict(mut s: State) {
        s.apply("default", json!({"numeric": 1, "string": "string"}), false)
            .unwrap();
        s.update(
            "controller",
            json!({"numeric": 1, "string": "string", "bool": true}),
        );
        s.apply("default", json!({"numeric": 2, "string": "string"}), false)
            .unwrap();
        assert_eq!(
            s.live,
            json!({"numeric": 2, "string": "string", "bool": true})
        );
        assert_eq!(
            s.owned("default"),
            set(&[vec![f("numeric")], vec![f("string")]])
        );
        assert_eq!(s.owned("controller"), set(&[vec![f("bool")]]));
    }

    #[test]
    fn leaf_apply_update_apply_no_conflict() {
        // leaf_test.go TestUpdateLeaf "apply_update_apply_no_conflict".
        apply_update_apply_no_conflict(leaf_fields());
    }

    #[test]
    fn leaf_apply_twice_remove_and_empty_sets() {
        // leaf_test.go TestUpdateLeaf "apply_twice_remove".
        let mut s = leaf_fields();
        s.apply(
            "default",
            json!({"numeric": 1, "string": "string", "bool": false}),
            false,
        )
        .unwrap();
        s.apply("default", json!({"string": "new string"}), false)
            .unwrap();
        assert_eq!(s.live, json!({"string": "new string"}));
        assert_eq!(s.owned("default"), set(&[vec![f("string")]]));
        // "update_remove_empty_set": an updater taking the applier's only field leaves it
        // with nothing, and the entry goes.
        let mut s = leaf_fields();
        s.apply("default", json!({"string": "string"}), false)
            .unwrap();
        s.update("controller", json!({"string": "new string"}));
        assert!(!s.managers.contains_key("default"));
        assert_eq!(s.owned("controller"), set(&[vec![f("string")]]));
        // "apply_remove_empty_set": applying nothing removes everything the applier had.
        let mut s = leaf_fields();
        s.apply("default", json!({"string": "string"}), false)
            .unwrap();
        s.apply("default", json!({}), false).unwrap();
        assert_eq!(s.live, json!({}));
        assert!(s.managers.is_empty());
    }

    #[test]
    fn set_apply_twice_reorder_and_update_reorder() {
        // set_test.go TestUpdateSet "apply_twice_reorder".
        let mut s = sets();
        s.apply("default", json!({"list": ["a", "b", "c", "d"]}), false)
            .unwrap();
        s.apply("default", json!({"list": ["a", "d", "c", "b"]}), false)
            .unwrap();
        assert_eq!(s.live, json!({"list": ["a", "d", "c", "b"]}));
        let all = set(&[
            vec![f("list"), v("a")],
            vec![f("list"), v("b")],
            vec![f("list"), v("c")],
            vec![f("list"), v("d")],
        ]);
        assert_eq!(s.owned("default"), all);
        // "apply_update_apply_reorder": reordering a set changes no field.
        let mut s = sets();
        s.apply("default", json!({"list": ["a", "b", "c", "d"]}), false)
            .unwrap();
        s.update("controller", json!({"list": ["a", "d", "c", "b"]}));
        s.apply("default", json!({"list": ["a", "b", "c", "d"]}), false)
            .unwrap();
        assert_eq!(s.live, json!({"list": ["a", "b", "c", "d"]}));
        assert_eq!(s.owned("default"), all);
        assert!(!s.managers.contains_key("controller"));
    }

    #[test]
    fn set_apply_update_apply_with_overlap() {
        // set_test.go TestUpdateSet "apply_update_apply_with_overlap": an item an updater
        // added is shared once the applier applies it too.
        let mut s = sets();
        s.apply("default", json!({"list": ["a", "c"]}), false)
            .unwrap();
        s.update("controller", json!({"list": ["a", "b", "c", "d"]}));
        s.apply("default", json!({"list": ["a", "b", "c"]}), false)
            .unwrap();
        assert_eq!(s.live, json!({"list": ["a", "b", "c", "d"]}));
        assert_eq!(
            s.owned("default"),
            set(&[
                vec![f("list"), v("a")],
                vec![f("list"), v("b")],
                vec![f("list"), v("c")]
            ])
        );
        assert_eq!(
            s.owned("controller"),
            set(&[vec![f("list"), v("b")], vec![f("list"), v("d")]])
        );
    }

    #[test]
    fn multiple_appliers_remove_one() {
        // multiple_appliers_test.go TestMultipleAppliersSet "remove_one".
        let mut s = associative_list();
        s.apply(
            "apply-one",
            json!({"list": [{"name": "a"}, {"name": "b"}]}),
            false,
        )
        .unwrap();
        s.apply("apply-two", json!({"list": [{"name": "c"}]}), false)
            .unwrap();
        s.apply("apply-one", json!({"list": [{"name": "a"}]}), false)
            .unwrap();
        assert_eq!(s.live, json!({"list": [{"name": "a"}, {"name": "c"}]}));
        assert_eq!(
            s.owned("apply-one"),
            set(&[
                vec![f("list"), k("name", "a")],
                vec![f("list"), k("name", "a"), f("name")]
            ])
        );
        assert_eq!(
            s.owned("apply-two"),
            set(&[
                vec![f("list"), k("name", "c")],
                vec![f("list"), k("name", "c"), f("name")]
            ])
        );
    }

    #[test]
    fn multiple_appliers_remove_one_keep_one_with_dangling_subitem() {
        // multiple_appliers_test.go TestMultipleAppliersNestedType
        // "remove_one_keep_one_with_dangling_subitem".
        let mut s = associative_list();
        s.apply(
            "apply-one",
            json!({"listOfLists": [{"name": "a"}, {"name": "b", "value": ["c"]}]}),
            false,
        )
        .unwrap();
        s.apply(
            "apply-two",
            json!({"listOfLists": [{"name": "b", "value": ["d"]}]}),
            false,
        )
        .unwrap();
        s.update(
            "controller",
            json!({"listOfLists": [{"name": "a"}, {"name": "b", "value": ["c", "d", "e"]}]}),
        );
        s.apply("apply-one", json!({"listOfLists": [{"name": "a"}]}), false)
            .unwrap();
        assert_eq!(
            s.live,
            json!({"listOfLists": [{"name": "a"}, {"name": "b", "value": ["d", "e"]}]})
        );
        assert_eq!(
            s.owned("apply-two"),
            set(&[
                vec![f("listOfLists"), k("name", "b")],
                vec![f("listOfLists"), k("name", "b"), f("name")],
                vec![f("listOfLists"), k("name", "b"), f("value"), v("d")],
            ])
        );
        assert_eq!(
            s.owned("controller"),
            set(&[vec![f("listOfLists"), k("name", "b"), f("value"), v("e")]])
        );
    }

    #[test]
    fn multiple_appliers_unset_scalar_shared_with_updater() {
        // multiple_appliers_test.go TestMultipleAppliersFieldUnsetting
        // "unset_scalar_shared_with_updater": a field an updater also set stays when the
        // applier stops applying it.
        let mut s = State::new(
            json!({"type": "object", "properties": {"struct": {"type": "object",
            "properties": {"name": {"type": "string"}, "scalarField": {"type": "string"}}}}}),
        );
        s.update(
            "updater",
            json!({"struct": {"name": "a", "scalarField": "a"}}),
        );
        s.apply(
            "applier",
            json!({"struct": {"name": "a", "scalarField": "a"}}),
            false,
        )
        .unwrap();
        s.apply("applier", json!({"struct": {"name": "a"}}), false)
            .unwrap();
        assert_eq!(s.live, json!({"struct": {"name": "a", "scalarField": "a"}}));
        assert_eq!(
            s.owned("updater"),
            set(&[
                vec![f("struct")],
                vec![f("struct"), f("name")],
                vec![f("struct"), f("scalarField")]
            ])
        );
        assert_eq!(s.owned("applier"), set(&[vec![f("struct"), f("name")]]));
    }

    #[test]
    fn nested_struct_apply_remove_all() {
        // nested_test.go TestUpdateNestedType "struct_apply_remove_all": a struct the applier
        // alone set goes with its fields.
        let mut s = State::new(
            json!({"type": "object", "properties": {"struct": {"type": "object",
            "properties": {"name": {"type": "string"}, "value": {"type": "number"}}}}}),
        );
        s.apply(
            "default",
            json!({"struct": {"name": "a", "value": 1}}),
            false,
        )
        .unwrap();
        s.apply("default", json!({}), false).unwrap();
        assert_eq!(s.live, json!({}));
        assert!(s.managers.is_empty());
    }

    #[test]
    fn duplicate_applied_keys_are_refused() {
        // duplicates_test.go: an applied configuration may not repeat a key.
        let mut s = associative_list();
        let err = s
            .apply("a", json!({"list": [{"name": "x"}, {"name": "x"}]}), false)
            .unwrap_err();
        assert_eq!(
            err,
            UpdateError::Invalid(".list: duplicate entries for key [name=\"x\"]".into())
        );
    }

    #[test]
    fn atomic_map_force() {
        // multiple_appliers_test.go TestMultipleApplierAtomicMaps "force": an atomic map is one
        // field — a second applier's other key conflicts on the whole map, and forcing
        // replaces it.
        let mut s = State::new(json!({"type": "object", "properties": {"atomicMap": {
            "type": "object", "x-kubernetes-map-type": "atomic",
            "properties": {"field1": {"type": "string"}, "field2": {"type": "string"}}}}}));
        s.apply("apply-one", json!({"atomicMap": {"field1": "a"}}), false)
            .unwrap();
        let err = s
            .apply("apply-two", json!({"atomicMap": {"field2": "b"}}), false)
            .unwrap_err();
        assert_eq!(
            err,
            UpdateError::Conflicts(vec![Conflict {
                manager: "apply-one".into(),
                path: vec![f("atomicMap")]
            }])
        );
        s.apply("apply-two", json!({"atomicMap": {"field2": "b"}}), true)
            .unwrap();
        assert_eq!(s.live, json!({"atomicMap": {"field2": "b"}}));
        assert_eq!(s.owned("apply-two"), set(&[vec![f("atomicMap")]]));
        assert!(!s.managers.contains_key("apply-one"));
    }

    #[test]
    fn atomic_list_force() {
        // The same for a list without a list type (atomic, as kube's custom resources default):
        // one field, replaced whole by the applier that forces.
        let mut s = State::new(json!({"type": "object", "properties": {"args": {
            "type": "array", "items": {"type": "string"}}}}));
        s.apply("apply-one", json!({"args": ["a", "b"]}), false)
            .unwrap();
        assert_eq!(s.owned("apply-one"), set(&[vec![f("args")]]));
        let err = s
            .apply("apply-two", json!({"args": ["c"]}), false)
            .unwrap_err();
        assert!(
            matches!(err, UpdateError::Conflicts(c) if c.len() == 1 && c[0].path == vec![f("args")])
        );
        s.apply("apply-two", json!({"args": ["c"]}), true).unwrap();
        assert_eq!(s.live, json!({"args": ["c"]}));
        assert!(!s.managers.contains_key("apply-one"));
    }

    #[test]
    fn deduced_leaf_apply_update_apply_no_conflict() {
        // deduced_test.go TestDeduced "leaf_apply_update_apply_no_conflict": without a schema
        // the same ownership as with one.
        apply_update_apply_no_conflict(State::new(json!({})));
    }
}
