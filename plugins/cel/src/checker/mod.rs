//! Type checking of a parsed expression against declared variables: cel-go `checker/checker.go`
//! (identifiers, field selection, calls and overload resolution, list and map literals,
//! comprehensions — the expanded macros), with cel-go's error texts
//! (`checker/errors.go`):
//!
//! - `undeclared reference to 'x' (in container '')`;
//! - `found no matching overload for '_+_' applied to '(int, string)'` (a member call:
//!   `'string.(int)'`);
//! - `undefined field 'x'`, `type 'int' does not support field selection`;
//! - `expected type 'bool' but found 'int'`;
//! - `expression of type 'int' cannot be range of a comprehension (must be list, map, or
//!   dynamic)`;
//! - literals kube validates when compiled (cel-go `validator.go`, enabled in
//!   `k8s.io/apiserver/pkg/cel/environment/base.go`): `invalid duration argument`,
//!   `invalid timestamp argument`, `invalid matches argument`; a list or map literal whose
//!   elements (keys, values) are not all of one type, outside `format()`'s arguments:
//!   `expected type 'int' but found 'string'`.
//!
//! Each error is located at its expression, formatted as cel-go's `ERROR: <input>:1:5: …`
//! with the source line and a caret.

mod assignability;
pub(crate) mod decls;
#[cfg(test)]
mod tests;

use crate::types::{Bound, Type};
use crate::CompileError;
use assignability::Mapping;
use cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue, SourceInfo};
use std::collections::{BTreeMap, HashMap};

/// The variables an expression may reference, with their types (kube's per-use sets:
/// `self` and `oldSelf` for a CRD rule; `object`, `oldObject`, `request`, … for admission).
#[derive(Clone, Debug, Default)]
pub struct Variables(BTreeMap<String, Type>, bool);

impl Variables {
    /// No variables.
    pub fn new() -> Variables {
        Variables::default()
    }

    /// These variables and `name` of type `t`.
    pub fn with(mut self, name: &str, t: Type) -> Variables {
        self.0.insert(name.to_string(), t);
        self
    }

    /// The type of `name`, if declared.
    pub fn get(&self, name: &str) -> Option<&Type> {
        self.0.get(name)
    }

    /// These variables, and the object types of a MutatingAdmissionPolicy's expressions
    /// ([`crate::mutation`]): `Object{…}` and `Object.<field>…{…}` literals with any fields,
    /// `JSONPatch{op, path, from, value}`.
    pub fn with_mutation_types(mut self) -> Variables {
        self.1 = true;
        self
    }
}

/// A checked expression: the type it evaluates to and the type of each of its nodes, by id
/// (type parameters left unbound are `dyn`).
#[derive(Debug)]
pub struct Checked {
    pub output: Type,
    pub types: HashMap<u64, Type>,
}

/// Check `expr` (parsed from `info.source`) against `variables`. Errors: every error cel-go
/// would report, one per line group, as one [`CompileError`].
pub fn check(
    expr: &IdedExpr,
    info: &SourceInfo,
    variables: &Variables,
) -> Result<Checked, CompileError> {
    let mut c = Checker {
        variables,
        scopes: Vec::new(),
        mapping: Mapping::default(),
        types: HashMap::new(),
        errors: Vec::new(),
        next_var: 0,
    };
    c.check(expr);
    if c.errors.is_empty() {
        let types: HashMap<u64, Type> = c
            .types
            .iter()
            .map(|(id, t)| (*id, c.mapping.substitute(t, true)))
            .collect();
        validate_literals(expr, &types, false, &mut c.errors);
    }
    if !c.errors.is_empty() {
        let text: Vec<String> = c
            .errors
            .iter()
            .map(|(id, msg)| located(info, *id, msg))
            .collect();
        return Err(CompileError(text.join("\n")));
    }
    let types: HashMap<u64, Type> = c
        .types
        .iter()
        .map(|(id, t)| (*id, c.mapping.substitute(t, true)))
        .collect();
    Ok(Checked {
        output: types[&expr.id].clone(),
        types,
    })
}

/// cel-go's `Error.ToDisplayString`: `ERROR: <input>:line:column: message`, then the source
/// line and a caret under the column (columns count characters, from 1).
pub(crate) fn located(info: &SourceInfo, id: u64, msg: &str) -> String {
    let Some((start, _)) = info.offset_for(id) else {
        return format!("ERROR: <input>:-1:0: {msg}");
    };
    let (mut line_no, mut line_start) = (1, 0);
    for (i, c) in info.source.char_indices() {
        if i >= start as usize {
            break;
        }
        if c == '\n' {
            line_no += 1;
            line_start = i + 1;
        }
    }
    let line = info.source[line_start..].lines().next().unwrap_or("");
    let column = info.source[line_start..(start as usize).min(info.source.len())]
        .chars()
        .count()
        + 1;
    format!(
        "ERROR: <input>:{line_no}:{column}: {msg}\n | {}\n | {:.>column$}",
        line.replace('\t', " "),
        "^"
    )
}

struct Checker<'a> {
    variables: &'a Variables,
    /// Comprehension variables, innermost last.
    scopes: Vec<(String, Type)>,
    mapping: Mapping,
    types: HashMap<u64, Type>,
    errors: Vec<(u64, String)>,
    next_var: u32,
}

impl Checker<'_> {
    fn new_type_var(&mut self) -> Type {
        self.next_var += 1;
        Type::param(&format!("_var{}", self.next_var))
    }

    fn set(&mut self, e: &IdedExpr, t: Type) -> Type {
        self.types.insert(e.id, t.clone());
        t
    }

    fn error(&mut self, e: &IdedExpr, msg: String) {
        self.errors.push((e.id, msg));
    }

    fn check(&mut self, e: &IdedExpr) -> Type {
        let t = match &e.expr {
            Expr::Literal(l) => literal_type(l),
            Expr::Ident(name) => self.check_ident(e, name),
            // A declared variable with a qualified name (`authorizer.requestResource`), as
            // cel-go resolves it, unless a comprehension variable shadows its first part.
            Expr::Select(s) if !s.test && self.qualified_variable(e).is_some() => {
                self.qualified_variable(e).unwrap_or(Type::Error)
            }
            Expr::Select(s) => {
                let t = self.check_select_field(e, &s.operand, &s.field, false);
                if s.test {
                    Type::Bool
                } else {
                    self.mapping.substitute(&t, false)
                }
            }
            Expr::Call(call) => self.check_call(e, call),
            Expr::List(list) => {
                let mut elem: Option<Type> = None;
                for (i, el) in list.elements.iter().enumerate() {
                    let mut t = self.check(el);
                    if list.optional_indices.contains(&i) {
                        t = self.unwrap_optional_element(el, t);
                    }
                    elem = Some(self.join(el, elem, t));
                }
                let elem = elem.unwrap_or_else(|| self.new_type_var());
                Type::List(Box::new(elem), Bound(Some(list.elements.len() as u64)))
            }
            Expr::Map(map) => {
                let (mut key, mut value) = (None, None);
                for entry in &map.entries {
                    let EntryExpr::MapEntry(entry) = &entry.expr else {
                        continue;
                    };
                    let k = self.check(&entry.key);
                    key = Some(self.join(&entry.key, key, k));
                    let mut v = self.check(&entry.value);
                    if entry.optional {
                        v = self.unwrap_optional_element(&entry.value, v);
                    }
                    value = Some(self.join(&entry.value, value, v));
                }
                let key = key.unwrap_or_else(|| self.new_type_var());
                let value = value.unwrap_or_else(|| self.new_type_var());
                Type::Map(
                    Box::new(key),
                    Box::new(value),
                    Bound(Some(map.entries.len() as u64)),
                )
            }
            Expr::Struct(s) => self.check_struct(e, s),
            Expr::Comprehension(c) => self.check_comprehension(c),
            Expr::Unspecified => Type::Error,
        };
        self.set(e, t)
    }

    /// A struct literal: only the mutation types, when declared ([`crate::mutation`]), as
    /// kube's `dynamic.ObjectType` (any field, of type `dyn`) and `JSONPatchType`.
    fn check_struct(&mut self, e: &IdedExpr, s: &cel::common::ast::StructExpr) -> Type {
        let name = s.type_name.as_str();
        let kind = crate::mutation::struct_kind(name).filter(|_| self.variables.1);
        let Some(kind) = kind else {
            self.error(
                e,
                format!("undeclared reference to '{name}' (in container '')"),
            );
            return Type::Error;
        };
        for entry in &s.entries {
            if let EntryExpr::StructField(f) = &entry.expr {
                let t = self.check(&f.value);
                if kind == crate::mutation::StructKind::JsonPatch {
                    match f.field.as_str() {
                        "op" | "path" | "from" => {
                            if !matches!(t, Type::String(_) | Type::Dyn | Type::Error) {
                                self.error(
                                    &f.value,
                                    format!("expected type of field '{}' is 'string' but provided type is '{t}'", f.field),
                                );
                            }
                        }
                        "value" => {}
                        other => self.error(e, format!("undefined field '{other}'")),
                    }
                }
            }
        }
        match kind {
            crate::mutation::StructKind::Object if name == crate::mutation::OBJECT => {
                Type::Opaque(crate::mutation::OBJECT)
            }
            crate::mutation::StructKind::Object => Type::Dyn,
            crate::mutation::StructKind::JsonPatch => Type::Opaque(crate::mutation::JSON_PATCH),
        }
    }

    /// The type of the declared variable `e` names, when `e` is a qualified name
    /// (`a.b.c`) whose first part no comprehension variable shadows.
    fn qualified_variable(&self, e: &IdedExpr) -> Option<Type> {
        let mut segments = Vec::new();
        let mut at = e;
        loop {
            match &at.expr {
                Expr::Select(s) if !s.test => {
                    segments.push(s.field.as_str());
                    at = &s.operand;
                }
                Expr::Ident(name) => {
                    segments.push(name.as_str());
                    break;
                }
                _ => return None,
            }
        }
        segments.reverse();
        if segments.len() < 2 || self.scopes.iter().any(|(n, _)| n == segments[0]) {
            return None;
        }
        self.variables.0.get(&segments.join(".")).cloned()
    }

    fn check_ident(&mut self, e: &IdedExpr, name: &str) -> Type {
        if let Some((_, t)) = self.scopes.iter().rev().find(|(n, _)| n == name) {
            return t.clone();
        }
        if let Some(t) = self.variables.0.get(name) {
            return t.clone();
        }
        if let Some(t) = type_name(name) {
            return Type::Type(Box::new(t));
        }
        self.error(
            e,
            format!("undeclared reference to '{name}' (in container '')"),
        );
        Type::Error
    }

    /// cel-go `checkSelectField`: a map's value type, an object's field type, `dyn` for `dyn`;
    /// an optional operand (or `?.`) makes the result optional.
    fn check_select_field(
        &mut self,
        e: &IdedExpr,
        operand: &IdedExpr,
        field: &str,
        optional: bool,
    ) -> Type {
        let operand_type = self.check(operand);
        let operand_type = self.mapping.substitute(&operand_type, false);
        let (target, is_optional) = match operand_type {
            Type::Optional(t) => (*t, true),
            t => (t, false),
        };
        let result = match &target {
            Type::Map(_, v, _) => (**v).clone(),
            Type::Object(o) => match o.fields.get(field) {
                Some(f) => f.ty.clone(),
                None => {
                    self.error(e, format!("undefined field '{field}'"));
                    Type::Error
                }
            },
            Type::Param(_) => {
                self.mapping.is_assignable(&Type::Dyn, &target);
                Type::Dyn
            }
            t if t.is_dyn_or_error() => Type::Dyn,
            // The mutation types' fields: `JSONPatch`'s are declared, `Object`'s any.
            Type::Opaque(n) if *n == crate::mutation::JSON_PATCH => match field {
                "op" | "path" | "from" => Type::STRING,
                "value" => Type::Dyn,
                _ => {
                    self.error(e, format!("undefined field '{field}'"));
                    Type::Error
                }
            },
            Type::Opaque(n) if *n == crate::mutation::OBJECT => Type::Dyn,
            t => {
                self.error(e, format!("type '{t}' does not support field selection"));
                Type::Dyn
            }
        };
        if is_optional || optional {
            Type::optional(result)
        } else {
            result
        }
    }

    fn check_call(&mut self, e: &IdedExpr, call: &cel::common::ast::CallExpr) -> Type {
        let name = call.func_name.as_str();
        if name == "_?._" {
            if let [operand, field] = call.args.as_slice() {
                if let Expr::Literal(LiteralValue::String(f)) = &field.expr {
                    let t = self.check_select_field(e, operand, f.inner(), true);
                    return self.mapping.substitute(&t, false);
                }
            }
            self.error(e, "unsupported optional field selection".to_string());
            return Type::Error;
        }
        let mut arg_types: Vec<Type> = call.args.iter().map(|a| self.check(a)).collect();
        let Some(target) = &call.target else {
            return match decls::FUNCTIONS.get(name) {
                Some(overloads) => self.resolve(e, name, overloads, None, arg_types),
                None => {
                    self.error(
                        e,
                        format!("undeclared reference to '{name}' (in container '')"),
                    );
                    Type::Error
                }
            };
        };
        // `a.b.f()` is the namespaced function `a.b.f` when that is declared and `a` is not a
        // variable; otherwise `f` called on `a.b`.
        if let Some(prefix) = qualified_name(target) {
            let root = prefix.split('.').next().unwrap_or_default();
            let shadowed =
                self.scopes.iter().any(|(n, _)| n == root) || self.variables.0.contains_key(root);
            if let Some(overloads) = decls::FUNCTIONS.get(format!("{prefix}.{name}").as_str()) {
                if !shadowed {
                    let qualified = format!("{prefix}.{name}");
                    return self.resolve(e, &qualified, overloads, None, arg_types);
                }
            }
        }
        let target_type = self.check(target);
        match decls::FUNCTIONS.get(name) {
            Some(overloads) => {
                arg_types.insert(0, target_type);
                self.resolve(e, name, overloads, Some(()), arg_types)
            }
            None => {
                self.error(
                    e,
                    format!("undeclared reference to '{name}' (in container '')"),
                );
                Type::Error
            }
        }
    }

    /// cel-go `resolveOverload`: every overload of the call's style whose parameters the
    /// arguments are assignable to; the first one's result type, or `dyn` when matching
    /// overloads disagree.
    fn resolve(
        &mut self,
        e: &IdedExpr,
        name: &str,
        overloads: &[decls::Overload],
        member: Option<()>,
        arg_types: Vec<Type>,
    ) -> Type {
        let mut result: Option<Type> = None;
        for o in overloads.iter().filter(|o| o.member == member.is_some()) {
            let mut fresh = Mapping::default();
            for p in &o.type_params {
                let v = self.new_type_var();
                fresh.bind(p, v);
            }
            let params: Vec<Type> = o
                .params
                .iter()
                .map(|p| fresh.substitute(p, false))
                .collect();
            if self.mapping.is_assignable_list(&arg_types, &params) {
                let r = self
                    .mapping
                    .substitute(&fresh.substitute(&o.result, false), false);
                result = Some(match result {
                    None => r,
                    Some(prev) if prev == Type::Dyn || prev == r => prev,
                    Some(_) => Type::Dyn,
                });
            }
        }
        match result {
            Some(r) => r,
            // A two-variable comprehension's range (`@pairs`) is reported as cel-go does.
            None if name == "@pairs" => {
                let t = self.mapping.substitute(&arg_types[0], true);
                self.error(
                    e,
                    format!(
                        "expression of type '{t}' cannot be range of a comprehension \
                         (must be list, map, or dynamic)"
                    ),
                );
                Type::Error
            }
            None => {
                let args: Vec<String> = arg_types
                    .iter()
                    .map(|t| self.mapping.substitute(t, true).to_string())
                    .collect();
                let signature = match member {
                    Some(()) => format!("{}.({})", args[0], args[1..].join(", ")),
                    None => format!("({})", args.join(", ")),
                };
                self.error(
                    e,
                    format!("found no matching overload for '{name}' applied to '{signature}'"),
                );
                Type::Error
            }
        }
    }

    fn check_comprehension(&mut self, c: &cel::common::ast::ComprehensionExpr) -> Type {
        let range = self.check(&c.iter_range);
        let accu = self.check(&c.accu_init);
        let range = self.mapping.substitute(&range, false);
        let (var1, var2) = match &range {
            Type::List(elem, _) if c.iter_var2.is_some() => (Type::Int, (**elem).clone()),
            Type::List(elem, _) => ((**elem).clone(), Type::Dyn),
            Type::Map(k, v, _) => ((**k).clone(), (**v).clone()),
            t @ (Type::Dyn | Type::Error | Type::Param(_)) => {
                let t = t.clone();
                self.mapping.is_assignable(&Type::Dyn, &t);
                (Type::Dyn, Type::Dyn)
            }
            t => {
                let msg = format!(
                    "expression of type '{t}' cannot be range of a comprehension \
                     (must be list, map, or dynamic)"
                );
                self.error(&c.iter_range, msg);
                (Type::Error, Type::Error)
            }
        };
        let depth = self.scopes.len();
        self.scopes.push((c.accu_var.clone(), accu.clone()));
        self.scopes.push((c.iter_var.clone(), var1));
        if let Some(v2) = &c.iter_var2 {
            self.scopes.push((v2.clone(), var2));
        }
        let cond = self.check(&c.loop_cond);
        self.assert_type(&c.loop_cond, &Type::Bool, &cond);
        let step = self.check(&c.loop_step);
        self.assert_type(&c.loop_step, &accu, &step);
        // The result sees the accumulator, not the iteration variables.
        self.scopes.truncate(depth + 1);
        let result = self.check(&c.result);
        self.scopes.truncate(depth);
        self.mapping.substitute(&result, false)
    }

    fn assert_type(&mut self, e: &IdedExpr, want: &Type, got: &Type) {
        if !self.mapping.is_assignable(want, got) {
            let want = self.mapping.substitute(want, true);
            let got = self.mapping.substitute(got, true);
            self.error(e, format!("expected type '{want}' but found '{got}'"));
        }
    }

    fn unwrap_optional_element(&mut self, e: &IdedExpr, t: Type) -> Type {
        match t {
            Type::Optional(inner) => *inner,
            t if t.is_dyn_or_error() => t,
            t => {
                let msg = format!(
                    "expected type '{}' but found '{t}'",
                    Type::optional(t.clone())
                );
                self.error(e, msg);
                Type::Error
            }
        }
    }

    /// cel-go `joinTypes` with dynamic aggregate literals: the more general of two element
    /// types, or `dyn` when they differ (kube's homogeneity is a validator:
    /// [`validate_literals`]).
    fn join(&mut self, _e: &IdedExpr, previous: Option<Type>, current: Type) -> Type {
        match previous {
            None => current,
            Some(prev) if self.mapping.is_assignable(&prev, &current) => {
                assignability::most_general(&prev, &current)
            }
            Some(_) => Type::Dyn,
        }
    }
}

fn literal_type(l: &LiteralValue) -> Type {
    match l {
        LiteralValue::Boolean(_) => Type::Bool,
        LiteralValue::Bytes(b) => Type::Bytes(Bound(Some(b.inner().len() as u64))),
        LiteralValue::Double(_) => Type::Double,
        LiteralValue::Int(_) => Type::Int,
        LiteralValue::Null => Type::Null,
        LiteralValue::String(s) => Type::String(Bound(Some(s.inner().len() as u64))),
        LiteralValue::UInt(_) => Type::Uint,
    }
}

/// The type a type name denotes as a value (`int` in `type(x) == int`).
fn type_name(name: &str) -> Option<Type> {
    if let Some(t) = Type::scalar_named(name) {
        return Some(t);
    }
    Some(match name {
        "list" => Type::list(Type::Dyn),
        "map" => Type::map(Type::Dyn, Type::Dyn),
        "type" => Type::Type(Box::new(Type::Dyn)),
        _ => return None,
    })
}

/// `a.b.c` as written, when the expression is identifiers and field selections only.
fn qualified_name(e: &IdedExpr) -> Option<String> {
    match &e.expr {
        Expr::Ident(name) => Some(name.clone()),
        Expr::Select(s) if !s.test => Some(format!("{}.{}", qualified_name(&s.operand)?, s.field)),
        _ => None,
    }
}

/// cel-go's validators as kube enables them: a literal argument of `duration(…)`,
/// `timestamp(…)` or `matches(…)` that would fail when evaluated, and (`cel.HomogeneousAggregateLiterals`)
/// a list or map literal mixing types — except inside `format()`, which cel-go's strings
/// library exempts — fail when compiled.
fn validate_literals(
    e: &IdedExpr,
    types: &HashMap<u64, Type>,
    in_format: bool,
    errors: &mut Vec<(u64, String)>,
) {
    let type_of = |x: &IdedExpr| types.get(&x.id).cloned().unwrap_or(Type::Dyn);
    let mut homogeneous = |items: &mut dyn Iterator<Item = (&IdedExpr, bool)>| {
        let mut first: Option<Type> = None;
        for (x, optional) in items {
            let mut t = type_of(x);
            if optional {
                if let Type::Optional(inner) = t {
                    t = *inner;
                }
            }
            match &first {
                None => first = Some(t),
                Some(f) if *f == t => {}
                Some(f) => {
                    errors.push((x.id, format!("expected type '{f}' but found '{t}'")));
                    break;
                }
            }
        }
    };
    match &e.expr {
        Expr::List(l) if !in_format => homogeneous(
            &mut l
                .elements
                .iter()
                .enumerate()
                .map(|(i, x)| (x, l.optional_indices.contains(&i))),
        ),
        Expr::Map(m) if !in_format => {
            let entries: Vec<_> = m
                .entries
                .iter()
                .filter_map(|en| match &en.expr {
                    EntryExpr::MapEntry(me) => Some(me),
                    _ => None,
                })
                .collect();
            homogeneous(&mut entries.iter().map(|me| (&me.key, false)));
            homogeneous(&mut entries.iter().map(|me| (&me.value, me.optional)));
        }
        Expr::Call(call) => {
            if let Some(Expr::Literal(LiteralValue::String(s))) = call.args.first().map(|a| &a.expr)
            {
                let s = s.inner();
                let valid = match call.func_name.as_str() {
                    "duration" if call.target.is_none() => {
                        Some(crate::value::parse_go_duration(s).is_some())
                    }
                    "timestamp" if call.target.is_none() => {
                        Some(chrono::DateTime::parse_from_rfc3339(s).is_ok())
                    }
                    // Through the per-thread cache of compiled patterns: the evaluation finds it there.
                    "matches" if call.target.is_some() => {
                        Some(crate::library::regex::with_compiled(s, |_| ()).is_ok())
                    }
                    _ => None,
                };
                if valid == Some(false) {
                    errors.push((
                        call.args[0].id,
                        format!("invalid {} argument", call.func_name),
                    ));
                }
            }
        }
        _ => {}
    }
    let in_format = in_format || matches!(&e.expr, Expr::Call(c) if c.func_name == "format");
    children(e, &mut |x| validate_literals(x, types, in_format, errors));
}

/// Call `f` on each expression directly inside `e`.
pub(crate) fn children(e: &IdedExpr, f: &mut impl FnMut(&IdedExpr)) {
    match &e.expr {
        Expr::Select(s) => f(&s.operand),
        Expr::Call(c) => {
            if let Some(t) = &c.target {
                f(t);
            }
            c.args.iter().for_each(f);
        }
        Expr::List(l) => l.elements.iter().for_each(f),
        Expr::Map(m) => {
            for entry in &m.entries {
                if let EntryExpr::MapEntry(me) = &entry.expr {
                    f(&me.key);
                    f(&me.value);
                }
            }
        }
        Expr::Struct(s) => {
            for entry in &s.entries {
                if let EntryExpr::StructField(field) = &entry.expr {
                    f(&field.value);
                }
            }
        }
        Expr::Comprehension(c) => {
            for x in [
                &c.iter_range,
                &c.accu_init,
                &c.loop_cond,
                &c.loop_step,
                &c.result,
            ] {
                f(x);
            }
        }
        _ => {}
    }
}
