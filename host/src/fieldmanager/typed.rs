//! Operations on an object typed by its [`Schema`] (structured-merge-diff `typed`): the field
//! set it sets (`tofieldset.go`), what changed between two versions (`compare.go`), the merge
//! of an applied configuration into a live object (`merge.go`, `ruleKeepRHS`), and the removal
//! of a field set (`remove.go`). Lists are walked by their items' names (`helpers.go`
//! `listItemToPathElement`), maps by key; atomic lists and maps, scalars, and values whose
//! JSON type differs from the schema are leaves.
//!
//! Errors are the strings structured-merge-diff gives for items that cannot be named: a keyed
//! list item that is not an object or omits every key, a set item that is an object, a list
//! or null, and (in an applied configuration) two items with the same name.

use super::path_element::{path_string, PathElement};
use super::schema::{Atom, ListSchema, ListType, MapView, Schema};
use super::set::{Set, SetBuilder};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// `typed.Comparison`: the fields removed, modified and added from one object to another.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Comparison {
    /// Paths set before and not after.
    pub removed: Set,
    /// Leaves whose value changed.
    pub modified: Set,
    /// Paths set after and not before.
    pub added: Set,
}

impl Comparison {
    /// Nothing changed (`IsSame`).
    pub fn is_same(&self) -> bool {
        self.removed.is_empty() && self.modified.is_empty() && self.added.is_empty()
    }

    /// Drop `fields` and everything below them from all three sets (`ExcludeFields`).
    pub fn exclude(&mut self, fields: &Set) {
        if fields.is_empty() {
            return;
        }
        self.removed = self.removed.recursive_difference(fields);
        self.modified = self.modified.recursive_difference(fields);
        self.added = self.added.recursive_difference(fields);
    }
}

type Path = Vec<PathElement>;

fn err_at(path: &Path, msg: impl std::fmt::Display) -> String {
    if path.is_empty() {
        msg.to_string()
    } else {
        format!("{}: {msg}", path_string(path))
    }
}

/// `listItemToPathElement`: the name of a list item. Keyed lists use the item's key fields (a
/// missing key takes its schema default, else is left out; omitting every key is an error);
/// sets use the item's value.
pub fn list_item_name(list: &ListSchema, item: &Value) -> Result<PathElement, String> {
    match &list.list_type {
        ListType::Map(keys) => {
            let Value::Object(m) = item else {
                return Err(if item.is_null() {
                    "associative list with keys may not have a null element".into()
                } else {
                    "associative list with keys may not have non-map elements".into()
                });
            };
            let mut fields: Vec<(String, Value)> = Vec::with_capacity(keys.len());
            for (k, default) in keys {
                if let Some(v) = m.get(k) {
                    fields.push((k.clone(), v.clone()));
                } else if let Some(d) = default {
                    fields.push((k.clone(), d.clone()));
                }
            }
            if fields.is_empty() {
                let names: Vec<&str> = keys.iter().map(|(k, _)| k.as_str()).collect();
                return Err(format!(
                    "associative list with keys has an element that omits all key fields {names:?} (and doesn't have default values for any key fields)"
                ));
            }
            fields.sort_by(|a, b| a.0.cmp(&b.0));
            Ok(PathElement::Key(fields))
        }
        ListType::Set | ListType::Atomic => match item {
            Value::Object(_) => {
                Err("associative list without keys has an element that's a map type".into())
            }
            Value::Array(_) => Err("not supported: associative list with lists as elements".into()),
            Value::Null => {
                Err("associative list without keys has an element that's an explicit null".into())
            }
            v => Ok(PathElement::Value(v.clone())),
        },
    }
}

/// The name of every item of a list, in order. Errors: the first item that cannot be named,
/// as `<path>: element <i>: <why>`.
fn item_names(ls: &ListSchema, items: &[Value], path: &Path) -> Result<Vec<PathElement>, String> {
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            list_item_name(ls, item).map_err(|e| err_at(path, format!("element {i}: {e}")))
        })
        .collect()
}

/// The items of a list value (none for an absent or non-list value).
fn items_of(v: Option<&Value>) -> &[Value] {
    v.and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// `value.Equals`: JSON equality where an integer and a float of the same value are equal.
pub fn values_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            if x.is_f64() || y.is_f64() {
                x.as_f64() == y.as_f64()
            } else {
                x == y
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| values_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| values_equal(v, w)))
        }
        _ => a == b,
    }
}

fn empty_or_none(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) => true,
        Some(Value::Array(a)) => a.is_empty(),
        Some(Value::Object(m)) => m.is_empty(),
        Some(_) => false,
    }
}

// ---------------------------------------------------------------------------------------
// ToFieldSet

/// `TypedValue.ToFieldSet`: every path the object sets — leaves, list items (each also a
/// member), map entries that are null, empty, or not declared fields. Errors: an item that
/// cannot be named.
pub fn to_field_set(schema: &Schema, v: &Value) -> Result<Set, String> {
    Ok(field_set(schema, v, &mut Vec::new())?.1)
}

/// Whether `v`'s own path is a member (a leaf), and the paths below it, relative. Each level
/// is built once from its children (`SetBuilder`), whatever order a client sent them in.
fn field_set(schema: &Schema, v: &Value, path: &mut Path) -> Result<(bool, Set), String> {
    match schema.atom(v) {
        Atom::Leaf => Ok((true, Set::new())),
        Atom::List(l) => {
            if l.list_type == ListType::Atomic {
                return Ok((true, Set::new()));
            }
            let items = items_of(Some(v));
            let names = item_names(l, items, path)?;
            let mut seen = BTreeSet::new();
            let duplicates: BTreeSet<&PathElement> =
                names.iter().filter(|pe| !seen.insert(*pe)).collect();
            let mut b = SetBuilder::default();
            // Duplicated items are owned as a whole, not descended into.
            for pe in &duplicates {
                b.member((*pe).clone());
            }
            for (pe, item) in names.iter().zip(items) {
                if duplicates.contains(pe) {
                    continue;
                }
                path.push(pe.clone());
                let (_, below) = field_set(&l.items, item, path)?;
                path.pop();
                b.child(pe.clone(), below);
                b.member(pe.clone());
            }
            Ok((false, b.build()))
        }
        Atom::Map(m) => {
            if m.atomic() {
                return Ok((true, Set::new()));
            }
            let mut b = SetBuilder::default();
            for (k, val) in v.as_object().into_iter().flatten() {
                let pe = PathElement::Field(k.clone());
                path.push(pe.clone());
                let (own, below) = field_set(m.child(k), val, path)?;
                path.pop();
                let empty_map = val.as_object().is_some_and(Map::is_empty);
                if own || val.is_null() || empty_map || !m.declares(k) {
                    b.member(pe.clone());
                }
                b.child(pe, below);
            }
            Ok((false, b.build()))
        }
    }
}

// ---------------------------------------------------------------------------------------
// Compare

/// `TypedValue.Compare`: the paths removed, modified (leaves whose value differs) and added
/// from `lhs` to `rhs`. Duplicated list items are compared as a group. Errors: an item that
/// cannot be named.
pub fn compare(schema: &Schema, lhs: &Value, rhs: &Value) -> Result<Comparison, String> {
    Ok(compare_node(schema, Some(lhs), Some(rhs), &mut Vec::new())?.1)
}

/// The atom two sides are walked as: the side present, or the right one when both are of a
/// kind; `None` when they differ (handled as one changed leaf).
fn joint_atom<'a>(schema: &'a Schema, l: Option<&Value>, r: Option<&Value>) -> Option<Atom<'a>> {
    match (l, r) {
        (None, None) => Some(Atom::Leaf),
        (Some(l), None) => Some(schema.atom(l)),
        (None, Some(r)) => Some(schema.atom(r)),
        (Some(l), Some(r)) => {
            let (a, b) = (schema.atom(l), schema.atom(r));
            let same = matches!(
                (&a, &b),
                (Atom::Leaf, Atom::Leaf)
                    | (Atom::List(_), Atom::List(_))
                    | (Atom::Map(_), Atom::Map(_))
            );
            same.then_some(b)
        }
    }
}

/// Which of the three sets a node's own path is in.
#[derive(Clone, Copy, Default)]
struct Own {
    added: bool,
    removed: bool,
    modified: bool,
}

/// A leaf's own change.
fn leaf_change(l: Option<&Value>, r: Option<&Value>) -> Own {
    match (l, r) {
        (None, Some(_)) => Own {
            added: true,
            ..Own::default()
        },
        (Some(_), None) => Own {
            removed: true,
            ..Own::default()
        },
        (Some(l), Some(r)) if !values_equal(l, r) => Own {
            modified: true,
            ..Own::default()
        },
        _ => Own::default(),
    }
}

/// One level of a comparison, built from its children.
#[derive(Default)]
struct ComparisonBuilder {
    removed: SetBuilder,
    modified: SetBuilder,
    added: SetBuilder,
}

impl ComparisonBuilder {
    fn add(&mut self, pe: PathElement, own: Own, below: Comparison) {
        if own.removed {
            self.removed.member(pe.clone());
        }
        if own.modified {
            self.modified.member(pe.clone());
        }
        if own.added {
            self.added.member(pe.clone());
        }
        self.removed.child(pe.clone(), below.removed);
        self.modified.child(pe.clone(), below.modified);
        self.added.child(pe, below.added);
    }

    fn build(self) -> Comparison {
        Comparison {
            removed: self.removed.build(),
            modified: self.modified.build(),
            added: self.added.build(),
        }
    }
}

/// A node's own change and the changes below it (relative paths).
fn compare_node(
    schema: &Schema,
    l: Option<&Value>,
    r: Option<&Value>,
    path: &mut Path,
) -> Result<(Own, Comparison), String> {
    let below = match joint_atom(schema, l, r) {
        None | Some(Atom::Leaf) => return Ok((leaf_change(l, r), Comparison::default())),
        Some(Atom::List(ls)) => {
            if ls.list_type == ListType::Atomic || (empty_or_none(l) && empty_or_none(r)) {
                return Ok((leaf_change(l, r), Comparison::default()));
            }
            compare_list(ls, l, r, path)?
        }
        Some(Atom::Map(m)) => {
            if m.atomic() || (empty_or_none(l) && empty_or_none(r)) {
                return Ok((leaf_change(l, r), Comparison::default()));
            }
            let lm = l.and_then(Value::as_object);
            let rm = r.and_then(Value::as_object);
            let keys: BTreeSet<&String> = lm
                .into_iter()
                .flatten()
                .chain(rm.into_iter().flatten())
                .map(|(k, _)| k)
                .collect();
            let mut b = ComparisonBuilder::default();
            for k in keys {
                let pe = PathElement::Field(k.clone());
                path.push(pe.clone());
                let (own, below) = compare_node(
                    m.child(k),
                    lm.and_then(|m| m.get(k)),
                    rm.and_then(|m| m.get(k)),
                    path,
                )?;
                path.pop();
                b.add(pe, own, below);
            }
            b.build()
        }
    };
    // A container that appeared or went is itself added or removed.
    let own = Own {
        added: l.is_none(),
        removed: l.is_some() && r.is_none(),
        modified: false,
    };
    Ok((own, below))
}

/// A list's item names in first-seen order, and every item of each name.
type ItemIndex<'v> = (Vec<PathElement>, BTreeMap<PathElement, Vec<&'v Value>>);

/// Items by name, in first-seen order, each with every item of that name.
fn index_items<'v>(
    ls: &ListSchema,
    items: &'v [Value],
    path: &Path,
) -> Result<ItemIndex<'v>, String> {
    let mut order = Vec::new();
    let mut by_name: BTreeMap<PathElement, Vec<&Value>> = BTreeMap::new();
    for (pe, item) in item_names(ls, items, path)?.into_iter().zip(items) {
        let entry = by_name.entry(pe.clone()).or_default();
        if entry.is_empty() {
            order.push(pe);
        }
        entry.push(item);
    }
    Ok((order, by_name))
}

fn compare_list(
    ls: &ListSchema,
    l: Option<&Value>,
    r: Option<&Value>,
    path: &mut Path,
) -> Result<Comparison, String> {
    let li = items_of(l);
    let ri = items_of(r);
    let (mut all, lv) = index_items(ls, li, path)?;
    let (rorder, rv) = index_items(ls, ri, path)?;
    all.extend(rorder.into_iter().filter(|pe| !lv.contains_key(pe)));
    let mut b = ComparisonBuilder::default();
    for pe in all {
        let ll = lv.get(&pe).map(Vec::as_slice).unwrap_or_default();
        let rl = rv.get(&pe).map(Vec::as_slice).unwrap_or_default();
        path.push(pe.clone());
        let (own, below) = match (ll.len(), rl.len()) {
            (0 | 1, 0 | 1) => {
                compare_node(&ls.items, ll.first().copied(), rl.first().copied(), path)?
            }
            (a, b) if a >= 2 && b >= 2 => {
                let same = a == b && ll.iter().zip(rl).all(|(x, y)| values_equal(x, y));
                (
                    Own {
                        modified: !same,
                        ..Own::default()
                    },
                    Comparison::default(),
                )
            }
            (a, _) if a >= 2 => {
                let (mut own, below) = match rl.first() {
                    Some(r0) => compare_node(&ls.items, None, Some(r0), path)?,
                    None => (Own::default(), Comparison::default()),
                };
                own.removed = true;
                (own, below)
            }
            _ => {
                let (mut own, below) = match ll.first() {
                    Some(l0) => compare_node(&ls.items, Some(l0), None, path)?,
                    None => (Own::default(), Comparison::default()),
                };
                own.added = true;
                (own, below)
            }
        };
        path.pop();
        b.add(pe, own, below);
    }
    Ok(b.build())
}

// ---------------------------------------------------------------------------------------
// Merge

/// `TypedValue.Merge` with `ruleKeepRHS`: `rhs` (an applied configuration) merged into `lhs`
/// (the live object) — leaves and atomic values from `rhs` where it has them, maps merged by
/// key, associative lists by item name in structured-merge-diff's order (`rhs`'s order for
/// the items it names, `lhs`'s other items kept where they were). Errors: an item that cannot
/// be named, two items of `rhs` with the same name.
pub fn merge(schema: &Schema, lhs: &Value, rhs: &Value) -> Result<Value, String> {
    Ok(merge_node(schema, Some(lhs), Some(rhs), &mut Vec::new())?
        .unwrap_or_else(|| Value::Object(Map::new())))
}

fn merge_node(
    schema: &Schema,
    l: Option<&Value>,
    r: Option<&Value>,
    path: &mut Path,
) -> Result<Option<Value>, String> {
    let (l, atom) = match joint_atom(schema, l, r) {
        Some(a) => (l, a),
        // Of different kinds: the right side alone (the left one is not a container here).
        None => (None, schema.atom(r.expect("both sides present"))),
    };
    let leaf = || r.or(l).cloned();
    match atom {
        Atom::Leaf => Ok(leaf()),
        Atom::List(ls) => {
            if ls.list_type == ListType::Atomic || (empty_or_none(l) && empty_or_none(r)) {
                return Ok(leaf());
            }
            merge_list(ls, l, r, path)
        }
        Atom::Map(m) => {
            if m.atomic() || (empty_or_none(l) && empty_or_none(r)) {
                return Ok(leaf());
            }
            merge_map(m, l, r, path)
        }
    }
}

fn merge_map(
    m: MapView<'_>,
    l: Option<&Value>,
    r: Option<&Value>,
    path: &mut Path,
) -> Result<Option<Value>, String> {
    let lm = l.and_then(Value::as_object);
    let rm = r.and_then(Value::as_object);
    let mut out = Map::new();
    let keys: BTreeSet<&String> = lm
        .into_iter()
        .flatten()
        .chain(rm.into_iter().flatten())
        .map(|(k, _)| k)
        .collect();
    for k in keys {
        path.push(PathElement::Field(k.clone()));
        let v = merge_node(
            m.child(k),
            lm.and_then(|m| m.get(k)),
            rm.and_then(|m| m.get(k)),
            path,
        )?;
        path.pop();
        if let Some(v) = v {
            out.insert(k.clone(), v);
        }
    }
    Ok((!out.is_empty()).then_some(Value::Object(out)))
}

static NULL: Value = Value::Null;

fn merge_list(
    ls: &ListSchema,
    l: Option<&Value>,
    r: Option<&Value>,
    path: &mut Path,
) -> Result<Option<Value>, String> {
    let li = items_of(l);
    let ri = items_of(r);
    // indexListPathElements: the applied side may not repeat a name; the live side may (a
    // repeated name merges as null).
    let rhs_pes = item_names(ls, ri, path)?;
    let mut observed_rhs: BTreeMap<PathElement, &Value> = BTreeMap::new();
    for (pe, item) in rhs_pes.iter().zip(ri) {
        if observed_rhs.insert(pe.clone(), item).is_some() {
            return Err(err_at(
                path,
                format!(
                    "duplicate entries for key {}",
                    path_string(std::slice::from_ref(pe))
                ),
            ));
        }
    }
    let lhs_pes = item_names(ls, li, path)?;
    let mut observed_lhs: BTreeMap<PathElement, &Value> = BTreeMap::new();
    for (pe, item) in lhs_pes.iter().zip(li) {
        if observed_lhs.insert(pe.clone(), item).is_some() {
            observed_lhs.insert(pe.clone(), &NULL);
        }
    }
    let mut shared: VecDeque<&PathElement> = rhs_pes
        .iter()
        .filter(|pe| observed_lhs.contains_key(*pe))
        .collect();
    let mut next_shared = shared.pop_front();
    let mut merged_rhs: BTreeSet<&PathElement> = BTreeSet::new();
    let mut out = Vec::with_capacity(li.len().max(ri.len()));
    let (llen, rlen) = (lhs_pes.len(), rhs_pes.len());
    let (mut lx, mut rx) = (0, 0);
    let item = |pe: &PathElement,
                lc: Option<&Value>,
                rc: Option<&Value>,
                path: &mut Path,
                out: &mut Vec<Value>|
     -> Result<(), String> {
        path.push(pe.clone());
        let v = merge_node(&ls.items, lc, rc, path)?;
        path.pop();
        out.extend(v);
        Ok(())
    };
    while lx < llen || rx < rlen {
        if lx < llen && rx < rlen {
            let pe = &lhs_pes[lx];
            if *pe == rhs_pes[rx] {
                merged_rhs.insert(pe);
                item(
                    pe,
                    observed_lhs.get(pe).copied(),
                    observed_rhs.get(pe).copied(),
                    path,
                    &mut out,
                )?;
                lx += 1;
                rx += 1;
                next_shared = shared.pop_front();
                continue;
            }
            if observed_rhs.contains_key(pe) && next_shared.is_some_and(|n| n != pe) {
                lx += 1;
                continue;
            }
        }
        if lx < llen {
            let pe = &lhs_pes[lx];
            if !observed_rhs.contains_key(pe) {
                item(pe, Some(&li[lx]), None, path, &mut out)?;
                lx += 1;
                continue;
            } else if merged_rhs.contains(pe) {
                lx += 1;
            }
        }
        if rx < rlen {
            let pe = &rhs_pes[rx];
            merged_rhs.insert(pe);
            item(
                pe,
                observed_lhs.get(pe).copied(),
                observed_rhs.get(pe).copied(),
                path,
                &mut out,
            )?;
            rx += 1;
            if next_shared == Some(pe) {
                next_shared = shared.pop_front();
            }
        }
    }
    Ok((!out.is_empty()).then_some(Value::Array(out)))
}

// ---------------------------------------------------------------------------------------
// Remove

/// `TypedValue.RemoveItems`: `v` without the paths of `set` — a member removes the field or
/// item with everything below it, a child set removes within. A map or list left empty by a
/// removal is dropped from its parent (structured-merge-diff leaves a `null` there, which a
/// Go struct then omits).
pub fn remove_items(schema: &Schema, v: &Value, set: &Set) -> Value {
    remove_node(schema, v, set).unwrap_or_else(|| Value::Object(Map::new()))
}

fn remove_node(schema: &Schema, v: &Value, set: &Set) -> Option<Value> {
    match schema.atom(v) {
        Atom::Leaf => Some(v.clone()),
        Atom::List(ls) => {
            let items = v.as_array()?;
            if items.is_empty() {
                return None;
            }
            if ls.list_type == ListType::Atomic {
                return Some(v.clone());
            }
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                let Ok(pe) = list_item_name(ls, item) else {
                    out.push(item.clone());
                    continue;
                };
                if set.has(std::slice::from_ref(&pe)) {
                    continue;
                }
                match set.with_prefix(&pe).filter(|s| !s.is_empty()) {
                    Some(sub) => out.extend(remove_node(&ls.items, item, sub)),
                    None => out.push(item.clone()),
                }
            }
            (!out.is_empty()).then_some(Value::Array(out))
        }
        Atom::Map(m) => {
            let map = v.as_object()?;
            if map.is_empty() {
                return None;
            }
            if m.atomic() {
                return Some(v.clone());
            }
            let mut out = Map::new();
            for (k, val) in map {
                let pe = PathElement::Field(k.clone());
                if set.has(std::slice::from_ref(&pe)) {
                    continue;
                }
                match set.with_prefix(&pe).filter(|s| !s.is_empty()) {
                    Some(sub) => {
                        if let Some(val) = remove_node(m.child(k), val, sub) {
                            out.insert(k.clone(), val);
                        }
                    }
                    None => {
                        out.insert(k.clone(), val.clone());
                    }
                }
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
    }
}

/// `Set.EnsureNamedFieldsAreMembers`: every declared field that has paths below it in `set`
/// becomes a member too, at every depth (so removing the set removes such a field when
/// nothing else keeps something under it).
pub fn ensure_named_fields_are_members(set: &Set, schema: Option<&Schema>) -> Set {
    let map = match schema {
        Some(Schema::Map(m)) => Some(m),
        _ => None,
    };
    let list = match schema {
        Some(Schema::List(l)) => Some(l),
        _ => None,
    };
    let mut members: BTreeSet<PathElement> = set.members().iter().cloned().collect();
    let mut children = Vec::with_capacity(set.children().len());
    for (pe, child) in set.children() {
        let child_schema: Option<&Schema> = match pe {
            PathElement::Field(name) => {
                if map.is_some_and(|m| m.declares(name)) {
                    members.insert(pe.clone());
                }
                map.map(|m| &**m.child(name))
            }
            PathElement::Key(_) => list.map(|l| &*l.items),
            _ => None,
        };
        children.push((
            pe.clone(),
            ensure_named_fields_are_members(child, child_schema),
        ));
    }
    Set::from_parts(members.into_iter().collect(), children)
}
