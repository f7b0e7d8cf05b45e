//! `fieldpath.Set` (structured-merge-diff `fieldpath/set.go`, `serialize.go`): a set of field
//! paths as a tree — the elements that are members at this level, and the sets below each
//! element that has children — with union, intersection and difference, and the `FieldsV1`
//! JSON that `metadata.managedFields[].fieldsV1` carries (`{"f:spec":{".":{},"f:replicas":{}}}`:
//! each key a serialized [`PathElement`], `"."` marking a node that is itself a member).

use super::path_element::{PathElement, PathElementError};
use serde_json::{Map, Value};
use std::cmp::Ordering;

/// A set of field paths. Both lists are sorted by [`PathElement`]'s order and hold each
/// element once; a child set may be empty only transiently (operations drop empty children
/// where structured-merge-diff does).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Set {
    members: Vec<PathElement>,
    children: Vec<(PathElement, Set)>,
}

/// Builds a set level by level from members and child sets given in any order, sorting once
/// at the end: inserting client-ordered list items one path at a time into the sorted vectors
/// would be quadratic in the length of the list.
#[derive(Default)]
pub struct SetBuilder {
    members: Vec<PathElement>,
    children: Vec<(PathElement, Set)>,
}

impl SetBuilder {
    /// Add `pe` as a member of this level.
    pub fn member(&mut self, pe: PathElement) {
        self.members.push(pe);
    }

    /// Add the paths of `set` below `pe` (nothing when it is empty).
    pub fn child(&mut self, pe: PathElement, set: Set) {
        if !set.is_empty() {
            self.children.push((pe, set));
        }
    }

    /// The set: members sorted without duplicates, children sorted with the sets of equal
    /// elements united.
    pub fn build(mut self) -> Set {
        self.members.sort();
        self.members.dedup();
        self.children.sort_by(|a, b| a.0.cmp(&b.0));
        let mut children: Vec<(PathElement, Set)> = Vec::with_capacity(self.children.len());
        for (pe, set) in self.children {
            match children.last_mut() {
                Some((last, acc)) if *last == pe => *acc = acc.union(&set),
                _ => children.push((pe, set)),
            }
        }
        Set {
            members: self.members,
            children,
        }
    }
}

/// Why a `FieldsV1` document is not a field set (`Set.FromJSON`): not a JSON object of
/// objects, or a key that is not a path element (unknown element types are skipped, as
/// structured-merge-diff does, so newer writers do not break older readers).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid fieldsV1: {0}")]
pub struct FieldsV1Error(pub String);

impl Set {
    /// The empty set.
    pub fn new() -> Set {
        Set::default()
    }

    /// Add `path` (`Set.Insert`); the empty path adds nothing.
    pub fn insert(&mut self, path: &[PathElement]) {
        match path {
            [] => {}
            [last] => {
                if let Err(at) = self.members.binary_search(last) {
                    self.members.insert(at, last.clone());
                }
            }
            [first, rest @ ..] => self.descend(first).insert(rest),
        }
    }

    /// The child set under `pe`, created empty if missing (`SetNodeMap.Descend`).
    fn descend(&mut self, pe: &PathElement) -> &mut Set {
        let at = match self.children.binary_search_by(|(p, _)| p.cmp(pe)) {
            Ok(at) => at,
            Err(at) => {
                self.children.insert(at, (pe.clone(), Set::new()));
                at
            }
        };
        &mut self.children[at].1
    }

    /// Whether `path` is a member (`Set.Has`); never the empty path.
    pub fn has(&self, path: &[PathElement]) -> bool {
        match path {
            [] => false,
            [last] => self.members.binary_search(last).is_ok(),
            [first, rest @ ..] => self
                .children
                .binary_search_by(|(p, _)| p.cmp(first))
                .is_ok_and(|at| self.children[at].1.has(rest)),
        }
    }

    /// The elements that are members at this level, in order.
    pub fn members(&self) -> &[PathElement] {
        &self.members
    }

    /// The elements with paths below them and their sets, in order.
    pub fn children(&self) -> &[(PathElement, Set)] {
        &self.children
    }

    /// A set from its members and children, both sorted and free of duplicates.
    pub(crate) fn from_parts(members: Vec<PathElement>, children: Vec<(PathElement, Set)>) -> Set {
        debug_assert!(members.windows(2).all(|w| w[0] < w[1]));
        debug_assert!(children.windows(2).all(|w| w[0].0 < w[1].0));
        Set { members, children }
    }

    /// The paths below `pe`, without it (`Set.WithPrefix`); `None` when there are none.
    pub fn with_prefix(&self, pe: &PathElement) -> Option<&Set> {
        self.children
            .binary_search_by(|(p, _)| p.cmp(pe))
            .ok()
            .map(|at| &self.children[at].1)
    }

    /// The paths of `self` not in `other`, where a member of `other` also removes every path
    /// below it (`Set.RecursiveDifference`: how ignored and reset fields are filtered out).
    pub fn recursive_difference(&self, other: &Set) -> Set {
        self.difference_by(other, true)
    }

    /// Whether the set has no member at any depth (`Set.Empty`).
    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.iter().all(|(_, s)| s.is_empty())
    }

    /// Every path in the set, in order (`Set.Iterate`).
    pub fn paths(&self) -> Vec<Vec<PathElement>> {
        let mut out = Vec::new();
        self.collect(&mut Vec::new(), &mut out);
        out
    }

    fn collect(&self, prefix: &mut Vec<PathElement>, out: &mut Vec<Vec<PathElement>>) {
        for m in &self.members {
            let mut p = prefix.clone();
            p.push(m.clone());
            out.push(p);
        }
        for (pe, child) in &self.children {
            prefix.push(pe.clone());
            child.collect(prefix, out);
            prefix.pop();
        }
    }

    /// The paths in either set (`Set.Union`).
    pub fn union(&self, other: &Set) -> Set {
        let members = merge(&self.members, &other.members, |_| true, |_| true, |_| true);
        let mut children = Vec::new();
        let (mut i, mut j) = (0, 0);
        while i < self.children.len() && j < other.children.len() {
            let (a, b) = (&self.children[i], &other.children[j]);
            match a.0.cmp(&b.0) {
                Ordering::Less => {
                    children.push(a.clone());
                    i += 1;
                }
                Ordering::Greater => {
                    children.push(b.clone());
                    j += 1;
                }
                Ordering::Equal => {
                    children.push((a.0.clone(), a.1.union(&b.1)));
                    i += 1;
                    j += 1;
                }
            }
        }
        children.extend_from_slice(&self.children[i..]);
        children.extend_from_slice(&other.children[j..]);
        Set { members, children }
    }

    /// The paths in both sets (`Set.Intersection`); children left empty are dropped.
    pub fn intersection(&self, other: &Set) -> Set {
        let members = merge(
            &self.members,
            &other.members,
            |_| false,
            |_| false,
            |_| true,
        );
        let mut children = Vec::new();
        for (pe, set) in &self.children {
            if let Ok(at) = other.children.binary_search_by(|(p, _)| p.cmp(pe)) {
                let both = set.intersection(&other.children[at].1);
                if !both.is_empty() {
                    children.push((pe.clone(), both));
                }
            }
        }
        Set { members, children }
    }

    /// The paths of `self` not in `other` (`Set.Difference`): members are removed by
    /// `other`'s members, children by `other`'s children (a member of `other` does not remove
    /// the paths below it — that is `RecursiveDifference`); children left empty are dropped.
    pub fn difference(&self, other: &Set) -> Set {
        self.difference_by(other, false)
    }

    /// [`Set::difference`], or with `recursive` [`Set::recursive_difference`].
    fn difference_by(&self, other: &Set, recursive: bool) -> Set {
        let members = merge(
            &self.members,
            &other.members,
            |_| true,
            |_| false,
            |_| false,
        );
        let mut children = Vec::new();
        for (pe, set) in &self.children {
            if recursive && other.members.binary_search(pe).is_ok() {
                continue;
            }
            match other.with_prefix(pe) {
                Some(o) => {
                    let rest = set.difference_by(o, recursive);
                    if !rest.is_empty() {
                        children.push((pe.clone(), rest));
                    }
                }
                None => children.push((pe.clone(), set.clone())),
            }
        }
        Set { members, children }
    }

    /// The set as `FieldsV1` JSON text (`Set.ToJSON`, `emitContentsV1`): object keys in
    /// element order (fields, keys, values, indexes — not string order), `"."` first in a node
    /// that is also a member.
    pub fn to_fields_v1(&self) -> String {
        let mut out = String::from("{");
        self.write_contents(false, &mut out);
        out.push('}');
        out
    }

    fn write_contents(&self, include_self: bool, out: &mut String) {
        let mut first = true;
        let mut key = |out: &mut String, k: &str| {
            if !first {
                out.push(',');
            }
            first = false;
            out.push_str(&Value::String(k.to_string()).to_string());
            out.push(':');
        };
        if include_self && !(self.members.is_empty() && self.children.is_empty()) {
            key(out, ".");
            out.push_str("{}");
        }
        let (mut mi, mut ci) = (0, 0);
        while mi < self.members.len() || ci < self.children.len() {
            let order = match (self.members.get(mi), self.children.get(ci)) {
                (Some(m), Some((c, _))) => m.cmp(c),
                (Some(_), None) => Ordering::Less,
                _ => Ordering::Greater,
            };
            match order {
                Ordering::Less => {
                    key(out, &self.members[mi].serialize());
                    out.push_str("{}");
                    mi += 1;
                }
                Ordering::Greater | Ordering::Equal => {
                    let (pe, child) = &self.children[ci];
                    key(out, &pe.serialize());
                    out.push('{');
                    child.write_contents(order == Ordering::Equal, out);
                    out.push('}');
                    if order == Ordering::Equal {
                        mi += 1;
                    }
                    ci += 1;
                }
            }
        }
    }

    /// Parse `FieldsV1` JSON (`Set.FromJSON`). Errors: [`FieldsV1Error`].
    pub fn from_fields_v1(text: &str) -> Result<Set, FieldsV1Error> {
        let v: Value = serde_json::from_str(text).map_err(|e| FieldsV1Error(e.to_string()))?;
        Set::from_fields_v1_value(&v)
    }

    /// [`Set::from_fields_v1`] on an already decoded `fieldsV1` value.
    pub fn from_fields_v1_value(v: &Value) -> Result<Set, FieldsV1Error> {
        let Value::Object(map) = v else {
            return Err(FieldsV1Error("not a JSON object".into()));
        };
        Ok(read_object(map)?.0.unwrap_or_default())
    }
}

/// Sorted merge of two sorted element lists keeping those only in `a` (`keep_a`), only in `b`
/// (`keep_b`) and in both (`keep_both`).
fn merge(
    a: &[PathElement],
    b: &[PathElement],
    keep_a: impl Fn(&PathElement) -> bool,
    keep_b: impl Fn(&PathElement) -> bool,
    keep_both: impl Fn(&PathElement) -> bool,
) -> Vec<PathElement> {
    let mut out = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            Ordering::Less => {
                if keep_a(&a[i]) {
                    out.push(a[i].clone());
                }
                i += 1;
            }
            Ordering::Greater => {
                if keep_b(&b[j]) {
                    out.push(b[j].clone());
                }
                j += 1;
            }
            Ordering::Equal => {
                if keep_both(&a[i]) {
                    out.push(a[i].clone());
                }
                i += 1;
                j += 1;
            }
        }
    }
    out.extend(a[i..].iter().filter(|e| keep_a(e)).cloned());
    out.extend(b[j..].iter().filter(|e| keep_b(e)).cloned());
    out
}

/// `readIterV1`: the children of one `FieldsV1` object and whether the node itself is a member
/// (it has `"."`, or nothing below it).
fn read_object(map: &Map<String, Value>) -> Result<(Option<Set>, bool), FieldsV1Error> {
    // Keys come in string order, not element order: collect, then sort once.
    let mut children = SetBuilder::default();
    let mut any = false;
    let mut is_member = false;
    for (key, value) in map {
        if key == "." {
            is_member = true;
            continue;
        }
        let pe = match PathElement::deserialize(key) {
            Ok(pe) => pe,
            Err(PathElementError::UnknownType) => continue,
            Err(PathElementError::Invalid(e)) => {
                return Err(FieldsV1Error(format!("parsing key as path element: {e}")))
            }
        };
        let Value::Object(inner) = value else {
            return Err(FieldsV1Error(format!(
                "the value of {key:?} is not an object"
            )));
        };
        let (grandchildren, child_is_member) = read_object(inner)?;
        any = true;
        if child_is_member {
            children.member(pe.clone());
        }
        if let Some(g) = grandchildren {
            children.child(pe, g);
        }
    }
    if !any {
        is_member = true;
    }
    Ok((any.then(|| children.build()), is_member))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn f(name: &str) -> PathElement {
        PathElement::Field(name.into())
    }

    /// Ported from structured-merge-diff `fieldpath/serialize_test.go`
    /// `TestSerializeV1GoldenData`: each document reads and writes back byte for byte.
    #[test]
    fn golden_fields_v1_round_trip() {
        let examples = [
            r#"{"f:aaa":{},"f:aab":{},"f:aac":{},"f:aad":{},"f:aae":{},"f:aaf":{},"k:{\"name\":\"first\"}":{},"k:{\"name\":\"second\"}":{},"k:{\"port\":443,\"protocol\":\"tcp\"}":{},"k:{\"port\":443,\"protocol\":\"udp\"}":{},"v:1":{},"v:2":{},"v:3":{},"v:\"aa\"":{},"v:\"ab\"":{},"v:true":{},"i:1":{},"i:2":{},"i:3":{},"i:4":{}}"#,
            r#"{"f:aaa":{"k:{\"name\":\"second\"}":{"v:3":{"f:aab":{}}},"v:3":{},"v:true":{}},"f:aab":{"f:aaa":{},"f:aaf":{"k:{\"port\":443,\"protocol\":\"udp\"}":{"k:{\"port\":443,\"protocol\":\"tcp\"}":{}}},"k:{\"name\":\"first\"}":{}},"f:aac":{"f:aaa":{"v:1":{}},"f:aac":{},"v:3":{"k:{\"name\":\"second\"}":{}}},"f:aad":{"f:aac":{"v:1":{}},"f:aaf":{"k:{\"name\":\"first\"}":{"k:{\"name\":\"first\"}":{}}},"i:1":{"i:1":{},"i:3":{"v:true":{}}}},"f:aae":{"f:aae":{},"k:{\"port\":443,\"protocol\":\"tcp\"}":{"k:{\"port\":443,\"protocol\":\"udp\"}":{}},"i:4":{"f:aaf":{}}},"f:aaf":{"i:1":{"f:aac":{}},"i:2":{},"i:3":{}},"k:{\"name\":\"first\"}":{"f:aad":{"f:aaf":{}}},"k:{\"port\":443,\"protocol\":\"tcp\"}":{"f:aaa":{"f:aad":{}}},"k:{\"port\":443,\"protocol\":\"udp\"}":{"f:aac":{},"k:{\"name\":\"first\"}":{"i:3":{}},"k:{\"port\":443,\"protocol\":\"udp\"}":{"i:4":{}}},"v:1":{"f:aac":{"i:4":{}},"f:aaf":{},"k:{\"port\":443,\"protocol\":\"tcp\"}":{}},"v:2":{"f:aad":{"f:aaf":{}},"i:1":{}},"v:3":{"f:aaa":{},"k:{\"name\":\"first\"}":{},"i:2":{}},"v:\"aa\"":{"f:aab":{"f:aaf":{}},"f:aae":{},"k:{\"name\":\"first\"}":{"f:aad":{}},"i:2":{}},"v:\"ab\"":{"f:aaf":{"i:4":{}},"k:{\"port\":443,\"protocol\":\"tcp\"}":{},"k:{\"port\":443,\"protocol\":\"udp\"}":{},"v:1":{"k:{\"port\":443,\"protocol\":\"udp\"}":{}},"i:1":{"f:aae":{"i:4":{}}}},"v:true":{"k:{\"name\":\"second\"}":{"f:aaa":{}},"i:2":{"k:{\"port\":443,\"protocol\":\"tcp\"}":{}}},"i:1":{"i:3":{"f:aaf":{}}},"i:2":{"f:aae":{},"k:{\"port\":443,\"protocol\":\"tcp\"}":{"v:1":{}}},"i:3":{"f:aab":{"v:true":{"v:\"aa\"":{}}},"f:aaf":{},"i:1":{}},"i:4":{"v:\"aa\"":{"f:aab":{"k:{\"name\":\"second\"}":{}}}}}"#,
            r#"{"f:spec":{".":{},"f:apps":{".":{},"k:{\"name\":\" app-💻\"}":{".":{},"f:container":{".":{},"f:image":{},"f:name":{},"f:ports":{".":{},"k:{\"name\":\"port 🔑\"}":{".":{},"f:containerPort":{},"f:name":{}}}},"f:name":{}},"k:{\"name\":\" app-🚀\"}":{".":{},"f:container":{".":{},"f:image":{},"f:name":{},"f:ports":{".":{},"k:{\"name\":\"port-✅ \"}":{".":{},"f:containerPort":{},"f:name":{}}}},"f:name":{}}}}}"#,
        ];
        for text in examples {
            let set = Set::from_fields_v1(text).unwrap();
            assert_eq!(set.to_fields_v1(), text);
        }
    }

    /// `TestDeserializeForValidNonNormalized` (first case): whitespace, keys out of order, key
    /// fields out of order, a value with a leading space — written back normalized.
    #[test]
    fn non_normalized_fields_v1_is_normalized() {
        let messy = "{\n  \"f:aad\": {},\n  \"f:aaa\": {},\n  \"f:aab\": {},\n  \"f:aac\": {},\n  \"f:aae\": {},\n  \"f:aaf\": {},\n\n\n  \"k:{\\\"name\\\":\\\"first\\\"}\": {},\n  \"k:{\\\"name\\\":\\\"second\\\"}\": {},\n  \"k:{\\\"port\\\":443,\\\"protocol\\\":\\\"tcp\\\"}\": {},\n  \"k:{ \\\"protocol\\\":\\\"udp\\\",\\\"port\\\":443}\": {},\n  \"v:1\": {},\n\n  \"v:2\": {},\n  \"v: 3\": {},\n  \"v:\\\"aa\\\"\": {},\n\n  \"v:\\\"ab\\\"\": {},\n  \"v:true\": {},\n  \"i:1\": {},\n  \t\"i:2\": {},\n  \"i:3\": {}  ,\n  \"i:4\":    {}\n}";
        let want = r#"{"f:aaa":{},"f:aab":{},"f:aac":{},"f:aad":{},"f:aae":{},"f:aaf":{},"k:{\"name\":\"first\"}":{},"k:{\"name\":\"second\"}":{},"k:{\"port\":443,\"protocol\":\"tcp\"}":{},"k:{\"port\":443,\"protocol\":\"udp\"}":{},"v:1":{},"v:2":{},"v:3":{},"v:\"aa\"":{},"v:\"ab\"":{},"v:true":{},"i:1":{},"i:2":{},"i:3":{},"i:4":{}}"#;
        assert_eq!(Set::from_fields_v1(messy).unwrap().to_fields_v1(), want);
    }

    /// `TestSerializeV1`: random sets of 50 paths of depth 2–5 survive a round trip.
    #[test]
    fn random_sets_round_trip() {
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut next = move |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        let elements = [
            f("aaa"),
            f("aab"),
            f("a b"),
            PathElement::Key(vec![("name".into(), json!("first"))]),
            PathElement::Key(vec![
                ("port".into(), json!(443)),
                ("protocol".into(), json!("tcp")),
            ]),
            PathElement::Value(json!(1)),
            PathElement::Value(json!("aa")),
            PathElement::Value(json!(true)),
            PathElement::Index(1),
            PathElement::Index(4),
        ];
        for _ in 0..200 {
            let mut set = Set::new();
            for _ in 0..50 {
                let depth = 2 + next(4) as usize;
                let path: Vec<PathElement> = (0..depth)
                    .map(|_| elements[next(elements.len() as u64) as usize].clone())
                    .collect();
                set.insert(&path);
                assert!(set.has(&path));
            }
            let text = set.to_fields_v1();
            let back = Set::from_fields_v1(&text).unwrap();
            assert_eq!(back, set, "{text}");
            assert_eq!(back.to_fields_v1(), text);
        }
    }

    /// `set_test.go` `TestSetUnion`/`TestSetIntersection`/`TestSetDifference` in small.
    #[test]
    fn union_intersection_difference() {
        let p = |names: &[&str]| names.iter().map(|n| f(n)).collect::<Vec<_>>();
        let mut a = Set::new();
        a.insert(&p(&["spec", "replicas"]));
        a.insert(&p(&["spec", "template", "image"]));
        a.insert(&p(&["metadata", "labels", "app"]));
        let mut b = Set::new();
        b.insert(&p(&["spec", "replicas"]));
        b.insert(&p(&["spec", "paused"]));
        b.insert(&p(&["metadata"]));

        let u = a.union(&b);
        for path in a.paths().iter().chain(b.paths().iter()) {
            assert!(u.has(path), "{path:?}");
        }
        assert_eq!(u.paths().len(), 5);

        let i = a.intersection(&b);
        assert_eq!(i.paths(), vec![p(&["spec", "replicas"])]);

        let d = a.difference(&b);
        assert_eq!(
            d.paths(),
            vec![
                p(&["metadata", "labels", "app"]),
                p(&["spec", "template", "image"])
            ]
        );
        // A member of `b` does not remove what is below it (that is RecursiveDifference).
        assert!(d.has(&p(&["metadata", "labels", "app"])));
        assert!(a.difference(&a).is_empty());
        assert_eq!(a.difference(&Set::new()), a);
    }

    /// `FromJSON` errors, and unknown element types skipped.
    #[test]
    fn bad_fields_v1_is_refused() {
        for bad in [
            "[]",
            "{\"f:a\":1}",
            "{\"i:x\":{}}",
            "{\"f:a\":{}} trailing",
            "{",
        ] {
            assert!(Set::from_fields_v1(bad).is_err(), "{bad}");
        }
        let set = Set::from_fields_v1(r#"{"f:a":{},"r:future":{}}"#).unwrap();
        assert_eq!(set.to_fields_v1(), r#"{"f:a":{}}"#);
        assert!(Set::from_fields_v1("{}").unwrap().is_empty());
    }
}
