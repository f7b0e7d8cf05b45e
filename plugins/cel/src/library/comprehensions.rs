//! Two-variable comprehensions (cel-go `ext/comprehensions.go`, enabled by kube 1.32): over a
//! list the variables are the index and the element, over a map the key and the value.
//!
//! - `r.all(k, v, pred)`, `r.exists(k, v, pred)`, `r.existsOne(k, v, pred)` (and
//!   `exists_one`);
//! - `r.transformList(k, v, [filter,] expr)`: the list of `expr`;
//! - `r.transformMap(k, v, [filter,] expr)`: the map of `k` to `expr`;
//! - `r.transformMapEntry(k, v, [filter,] entry)`: the maps `entry` merged (a key twice:
//!   `insert failed: key <k> already exists`).
//!
//! The `cel` crate evaluates one-variable comprehensions only, so each macro expands to one
//! over `@pairs(r)` — `[k, v]` pairs — with `k` and `v` in its body replaced by
//! `@key(p)` and `@value(p)` of the pair `p`; `@entry`, `@mapOf` and `@merge` build maps.
//! The checker types the pairs as `map(K, V)`, so `k` and `v` keep their types. `@` names
//! cannot be written in CEL.

use cel::common::ast::{CallExpr, ComprehensionExpr, Expr, IdedExpr, ListExpr, LiteralValue};
use cel::common::types::{CelInt, CelList, CelMap, CelMapKey, DYN_TYPE, LIST_TYPE, MAP_TYPE};
use cel::common::value::{CowVal, Val};
use cel::parser::{Macro, MacroExprHelper};
use cel::{DeclarationError, Env, ExecutionError, ParseError};
use std::collections::HashMap;

#[derive(Clone, Copy)]
enum Kind {
    All,
    Exists,
    ExistsOne,
    TransformList,
    TransformMap,
    TransformMapEntry,
}

/// Register the macros and their functions on `env`.
pub fn extension(env: &mut Env) -> Result<(), DeclarationError> {
    let macros: [(&str, Kind, &[usize]); 6] = [
        ("all", Kind::All, &[3]),
        ("exists", Kind::Exists, &[3]),
        ("existsOne", Kind::ExistsOne, &[3]),
        ("transformList", Kind::TransformList, &[3, 4]),
        ("transformMap", Kind::TransformMap, &[3, 4]),
        ("transformMapEntry", Kind::TransformMapEntry, &[3, 4]),
    ];
    for (name, kind, counts) in macros {
        for &n in counts {
            env.add_macro(Macro::receiver(name, n, move |h, t, a| {
                expand(kind, h, t, a)
            }))?;
        }
    }
    env.add_macro(Macro::receiver("exists_one", 3, |h, t, a| {
        expand(Kind::ExistsOne, h, t, a)
    }))?;
    env.add_overload("@pairs", "@pairs_list", vec![LIST_TYPE.to_owned()], pairs)?;
    env.add_overload("@pairs", "@pairs_map", vec![MAP_TYPE.to_owned()], pairs)?;
    env.add_overload("@key", "@key", vec![LIST_TYPE.to_owned()], |a| {
        element(a, 0)
    })?;
    env.add_overload("@value", "@value", vec![LIST_TYPE.to_owned()], |a| {
        element(a, 1)
    })?;
    env.add_overload(
        "@entry",
        "@entry",
        vec![DYN_TYPE.to_owned(), DYN_TYPE.to_owned()],
        entry,
    )?;
    env.add_overload("@mapOf", "@mapOf", vec![LIST_TYPE.to_owned()], map_of)?;
    env.add_overload("@merge", "@merge", vec![LIST_TYPE.to_owned()], merge)
}

fn call(h: &mut MacroExprHelper<'_>, name: &str, args: Vec<IdedExpr>) -> IdedExpr {
    h.next_expr(Expr::Call(CallExpr {
        func_name: name.to_string(),
        target: None,
        args,
    }))
}

fn ident(h: &mut MacroExprHelper<'_>, name: &str) -> IdedExpr {
    h.next_expr(Expr::Ident(name.to_string()))
}

fn literal(h: &mut MacroExprHelper<'_>, l: LiteralValue) -> IdedExpr {
    h.next_expr(Expr::Literal(l))
}

fn expand(
    kind: Kind,
    h: &mut MacroExprHelper<'_>,
    target: &mut Option<IdedExpr>,
    args: &mut Vec<IdedExpr>,
) -> Result<Option<IdedExpr>, ParseError> {
    let name = |e: &IdedExpr| match &e.expr {
        Expr::Ident(n) => Ok(n.clone()),
        _ => Err(h.new_error(e.id, "argument must be a simple name")),
    };
    let (k, v) = (name(&args[0])?, name(&args[1])?);
    if k == v {
        return Err(h.new_error(args[1].id, format!("duplicate variable name: {v}")));
    }
    let range = target.take().expect("a receiver macro has a target");
    let mut rest: Vec<IdedExpr> = args.drain(2..).collect();
    args.clear();
    let range_pairs = call(h, "@pairs", vec![range]);
    let pair = format!("@p{}", range_pairs.id);
    for e in &mut rest {
        substitute(e, &k, &pair, "@key", h);
        substitute(e, &v, &pair, "@value", h);
    }
    let accu = "@result";
    let (filter, body) = match rest.len() {
        2 => (rest.remove(0).into(), rest.remove(0)),
        _ => (None, rest.remove(0)),
    };
    let (init, cond, step, result) = match kind {
        Kind::All | Kind::Exists => {
            let all = matches!(kind, Kind::All);
            let init = literal(h, LiteralValue::Boolean(all.into()));
            let a = ident(h, accu);
            let a = if all { a } else { call(h, "!_", vec![a]) };
            let cond = call(h, "@not_strictly_false", vec![a]);
            let a = ident(h, accu);
            let step = call(h, if all { "_&&_" } else { "_||_" }, vec![a, body]);
            (init, cond, step, ident(h, accu))
        }
        Kind::ExistsOne => {
            let init = literal(h, LiteralValue::Int(0.into()));
            let cond = literal(h, LiteralValue::Boolean(true.into()));
            let (a1, a2) = (ident(h, accu), ident(h, accu));
            let one = literal(h, LiteralValue::Int(1.into()));
            let plus = call(h, "_+_", vec![a1, one]);
            let step = call(h, "_?_:_", vec![body, plus, a2]);
            let (a, one) = (ident(h, accu), literal(h, LiteralValue::Int(1.into())));
            (init, cond, step, call(h, "_==_", vec![a, one]))
        }
        Kind::TransformList | Kind::TransformMap | Kind::TransformMapEntry => {
            let element = match kind {
                Kind::TransformMap => {
                    let p = ident(h, &pair);
                    let key = call(h, "@key", vec![p]);
                    call(h, "@entry", vec![key, body])
                }
                _ => body,
            };
            let init = h.next_expr(Expr::List(ListExpr::new(vec![])));
            let cond = literal(h, LiteralValue::Boolean(true.into()));
            let a = ident(h, accu);
            let item = h.next_expr(Expr::List(ListExpr::new(vec![element])));
            let append = call(h, "_+_", vec![a, item]);
            let step = match filter {
                Some(f) => {
                    let a = ident(h, accu);
                    call(h, "_?_:_", vec![f, append, a])
                }
                None => append,
            };
            (init, cond, step, ident(h, accu))
        }
    };
    let comprehension = h.next_expr(Expr::Comprehension(Box::new(ComprehensionExpr {
        iter_range: range_pairs,
        iter_var: pair,
        iter_var2: None,
        accu_var: accu.to_string(),
        accu_init: init,
        loop_cond: cond,
        loop_step: step,
        result,
    })));
    Ok(Some(match kind {
        Kind::TransformMap => call(h, "@mapOf", vec![comprehension]),
        Kind::TransformMapEntry => call(h, "@merge", vec![comprehension]),
        _ => comprehension,
    }))
}

/// Replace the identifier `var` in `e` by `accessor(pair)`, except where a comprehension
/// inside declares `var` again.
fn substitute(
    e: &mut IdedExpr,
    var: &str,
    pair: &str,
    accessor: &str,
    h: &mut MacroExprHelper<'_>,
) {
    match &mut e.expr {
        Expr::Ident(n) if n == var => {
            let p = ident(h, pair);
            *e = call(h, accessor, vec![p]);
        }
        Expr::Select(s) => substitute(&mut s.operand, var, pair, accessor, h),
        Expr::Call(c) => {
            if let Some(t) = &mut c.target {
                substitute(t, var, pair, accessor, h);
            }
            for a in &mut c.args {
                substitute(a, var, pair, accessor, h);
            }
        }
        Expr::List(l) => {
            for x in &mut l.elements {
                substitute(x, var, pair, accessor, h);
            }
        }
        Expr::Map(m) => {
            for entry in &mut m.entries {
                if let cel::common::ast::EntryExpr::MapEntry(me) = &mut entry.expr {
                    substitute(&mut me.key, var, pair, accessor, h);
                    substitute(&mut me.value, var, pair, accessor, h);
                }
            }
        }
        Expr::Comprehension(c) => {
            substitute(&mut c.iter_range, var, pair, accessor, h);
            substitute(&mut c.accu_init, var, pair, accessor, h);
            let shadowed =
                c.iter_var == var || c.accu_var == var || c.iter_var2.as_deref() == Some(var);
            if !shadowed {
                substitute(&mut c.loop_cond, var, pair, accessor, h);
                substitute(&mut c.loop_step, var, pair, accessor, h);
                substitute(&mut c.result, var, pair, accessor, h);
            }
        }
        _ => {}
    }
}

fn boxed<'v>(v: impl Val + 'v) -> Box<dyn Val + 'v> {
    Box::new(v)
}

/// `@pairs(r)`: `[[0, r[0]], …]` for a list, `[[k, r[k]], …]` for a map.
fn pairs<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let r = &args[0];
    let mut out: Vec<Box<dyn Val + 'v>> = Vec::new();
    if let Some(list) = r.downcast_ref::<CelList>() {
        for (i, x) in list.inner().iter().enumerate() {
            let pair = vec![boxed(CelInt::from(i as i64)), x.clone_as_boxed()];
            out.push(boxed(CelList::from(pair)));
        }
    } else if let (Some(iterable), Some(indexer)) = (r.as_iterable(), r.as_indexer()) {
        let mut keys = iterable.iter();
        while let Some(k) = keys.next() {
            let value = indexer.get(k)?.into_owned();
            out.push(boxed(CelList::from(vec![k.clone_as_boxed(), value])));
        }
    } else {
        return Err(ExecutionError::function_error(
            "@pairs",
            "not a list or map",
        ));
    }
    Ok(CowVal::owned(CelList::from(out)))
}

fn element<'b, 'v>(args: Vec<CowVal<'b, 'v>>, i: usize) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let pair = args[0]
        .downcast_ref::<CelList>()
        .and_then(|l| l.inner().get(i))
        .ok_or_else(|| ExecutionError::function_error("@pair", "not a pair"))?;
    Ok(CowVal::Owned(pair.clone_as_boxed()))
}

fn entry<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let pair: Vec<Box<dyn Val + 'v>> = args.into_iter().map(CowVal::into_owned).collect();
    Ok(CowVal::owned(CelList::from(pair)))
}

/// Insert `k: v` into `map`; a key already there is cel-go's `insert failed` error.
fn insert<'v>(
    map: &mut HashMap<CelMapKey<'v>, Box<dyn Val + 'v>>,
    k: &(dyn Val + 'v),
    v: Box<dyn Val + 'v>,
) -> Result<(), ExecutionError> {
    let key = CelMapKey::try_from(k.clone_as_boxed())?;
    if map.contains_key(&key) {
        let shown = cel::Value::try_from(k)
            .map(|v| format!("{v:?}"))
            .unwrap_or_default();
        return Err(ExecutionError::function_error(
            "@merge",
            format!("insert failed: key {shown} already exists"),
        ));
    }
    map.insert(key, v);
    Ok(())
}

/// `@mapOf([[k, v], …])`: the map of those entries.
fn map_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let mut map = HashMap::new();
    if let Some(list) = args[0].downcast_ref::<CelList>() {
        for pair in list.inner() {
            if let Some([k, v]) = pair.downcast_ref::<CelList>().map(|p| p.inner()) {
                insert(&mut map, k.as_ref(), v.clone_as_boxed())?;
            }
        }
    }
    Ok(CowVal::owned(CelMap::from(map)))
}

/// `@merge([m1, m2, …])`: the maps' entries in one map.
fn merge<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let mut map = HashMap::new();
    if let Some(list) = args[0].downcast_ref::<CelList>() {
        for m in list.inner() {
            let (Some(keys), Some(indexer)) = (m.as_iterable(), m.as_indexer()) else {
                return Err(ExecutionError::function_error("@merge", "not a map"));
            };
            let mut keys = keys.iter();
            while let Some(k) = keys.next() {
                let value = indexer.get(k)?.into_owned();
                insert(&mut map, k, value)?;
            }
        }
    }
    Ok(CowVal::owned(CelMap::from(map)))
}
