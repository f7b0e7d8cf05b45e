//! The run-time cost budget (cel-go `interpreter/runtimecost.go`, kube's `PerCallLimit` and
//! per-object budgets): the cost of an evaluation counted while the `cel` crate's interpreter
//! runs it, which stops it once the cost passes its limit.
//!
//! The `cel` crate has no cost tracker, so the expression is rewritten once when compiled:
//!
//! - each comprehension's loop condition is wrapped in `@tick(cond, k)`, `k` being the
//!   [`step_cost`]s of its condition and step — charged on every iteration, and the hook that
//!   stops a long loop;
//! - each argument a call's cost depends on ([`call_formula`]) is wrapped in
//!   `@cost(arg, site, i)`, which measures it and, at the call's last measured argument,
//!   charges the call's cost; an argument written as a literal is measured when compiled;
//! - the steps outside every loop are charged once, before evaluating.
//!
//! The count is cel-go's for what it evaluates, except that a loop iteration is charged for
//! both sides of its `&&` and `||` even when one is skipped, and for the dearer branch of its
//! `?:`: never less than cel-go's actual cost, never more than kube's static estimate of it,
//! so everything kube's estimate admits also evaluates within kube's limit here. `@` names cannot be written in CEL, so no
//! expression can call the hooks itself.

use crate::cost::{call_formula, call_name, step_cost, Formula, Measure};
use cel::common::ast::{CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedExpr, LiteralValue};
use cel::common::types::{CelInt, DYN_TYPE, INT_TYPE};
use cel::common::value::CowVal;
use cel::{DeclarationError, Env, ExecutionError};
use std::cell::RefCell;
use std::sync::Arc;

/// cel-go's `EvalCancelledError` message for `CostLimitExceeded`.
pub const COST_LIMIT_EXCEEDED: &str = "operation cancelled: actual cost limit exceeded";

/// One call whose cost is computed from measured arguments.
#[derive(Debug)]
struct Site {
    formula: Formula,
    /// Measures of the arguments known when compiled (literals).
    known: [Option<Measure>; 2],
    /// The argument index whose measurement charges the call (the last one evaluated), or
    /// [`RESULT`].
    last: i64,
}

/// The `@cost` index of a measured call result (`join`).
const RESULT: i64 = 9;

/// An expression rewritten to count its cost.
#[derive(Debug)]
pub(crate) struct Instrumented {
    pub expr: IdedExpr,
    /// The steps evaluated once, outside every loop.
    pub base: u64,
    sites: Arc<Vec<Site>>,
}

struct Tracker {
    cost: u64,
    limit: u64,
    exceeded: bool,
    sites: Arc<Vec<Site>>,
    measured: Vec<[Measure; 2]>,
}

thread_local! {
    static TRACKER: RefCell<Option<Tracker>> = const { RefCell::new(None) };
}

impl Instrumented {
    /// Run `f` (the evaluation of [`Instrumented::expr`]) counting its cost against `limit`.
    /// Returns what `f` returned and the cost; `Err(spent)` when the cost passed `limit`.
    pub(crate) fn run<T>(&self, limit: u64, f: impl FnOnce() -> T) -> Result<(T, u64), u64> {
        let tracker = Tracker {
            cost: self.base,
            limit,
            exceeded: self.base > limit,
            measured: vec![[Measure::default(); 2]; self.sites.len()],
            sites: self.sites.clone(),
        };
        if tracker.exceeded {
            return Err(tracker.cost);
        }
        TRACKER.with(|t| *t.borrow_mut() = Some(tracker));
        let out = f();
        let tracker = TRACKER.with(|t| t.borrow_mut().take()).expect("set above");
        if tracker.exceeded {
            Err(tracker.cost)
        } else {
            Ok((out, tracker.cost))
        }
    }
}

/// Charge `n`; an error once the limit is passed.
fn charge(n: u64) -> Result<(), ExecutionError> {
    TRACKER.with(|t| {
        let mut t = t.borrow_mut();
        let Some(t) = t.as_mut() else {
            return Ok(());
        };
        t.cost = t.cost.saturating_add(n);
        if t.cost > t.limit {
            t.exceeded = true;
        }
        if t.exceeded {
            Err(ExecutionError::function_error("@cost", COST_LIMIT_EXCEEDED))
        } else {
            Ok(())
        }
    })
}

fn int_arg(args: &[CowVal<'_, '_>], i: usize) -> i64 {
    args.get(i)
        .and_then(|v| v.downcast_ref::<CelInt>())
        .map(|i| *i.inner())
        .unwrap_or(0)
}

/// `@tick(cond, k)`: charge `k`, give `cond`.
fn tick<'b, 'v>(mut args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    charge(int_arg(&args, 1).max(0) as u64)?;
    Ok(args.swap_remove(0))
}

/// `@cost(value, site, i)`: measure argument `i` of call `site`; at its last measured
/// argument, charge the call. Gives `value`.
fn cost<'b, 'v>(mut args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (site, index) = (int_arg(&args, 1) as usize, int_arg(&args, 2));
    let due = TRACKER.with(|t| {
        let mut t = t.borrow_mut();
        let t = t.as_mut()?;
        let s = t.sites.get(site)?;
        let m = Measure::of(args[0].as_ref(), s.formula == Formula::Traversal);
        let mut measures = t.measured[site];
        match index {
            RESULT => {}
            i => measures[i as usize] = m,
        }
        t.measured[site] = measures;
        if index != s.last {
            return None;
        }
        for (i, known) in s.known.iter().enumerate() {
            if let Some(known) = known {
                measures[i] = *known;
            }
        }
        Some(s.formula.cost(&measures, m))
    });
    if let Some(n) = due {
        charge(n)?;
    }
    Ok(args.swap_remove(0))
}

/// Declare `@tick` and `@cost` on `env`.
pub(crate) fn register(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_overload(
        "@tick",
        "@tick",
        vec![DYN_TYPE.to_owned(), INT_TYPE.to_owned()],
        tick,
    )?;
    env.add_overload(
        "@cost",
        "@cost",
        vec![
            DYN_TYPE.to_owned(),
            INT_TYPE.to_owned(),
            INT_TYPE.to_owned(),
        ],
        cost,
    )
}

/// Rewrite `expr` to count its cost (the module's documentation says how).
pub(crate) fn instrument(expr: &IdedExpr) -> Instrumented {
    let mut r = Rewriter { sites: Vec::new() };
    let mut base = 0;
    let expr = r.rewrite(expr, &mut base);
    Instrumented {
        expr,
        base,
        sites: Arc::new(r.sites),
    }
}

struct Rewriter {
    sites: Vec<Site>,
}

fn call(name: &str, args: Vec<IdedExpr>) -> IdedExpr {
    IdedExpr {
        id: 0,
        expr: Expr::Call(CallExpr {
            func_name: name.to_string(),
            target: None,
            args,
        }),
    }
}

fn int(i: i64) -> IdedExpr {
    IdedExpr {
        id: 0,
        expr: Expr::Literal(LiteralValue::Int(i.into())),
    }
}

fn literal(e: &IdedExpr) -> Option<&LiteralValue> {
    match &e.expr {
        Expr::Literal(l) => Some(l),
        _ => None,
    }
}

impl Rewriter {
    /// `e` rewritten, its steps outside loops added to `bucket`.
    fn rewrite(&mut self, e: &IdedExpr, bucket: &mut u64) -> IdedExpr {
        *bucket += step_cost(e);
        let expr = match &e.expr {
            Expr::Call(c) => return self.rewrite_call(e, c, bucket),
            Expr::Comprehension(c) => {
                let mut per_iteration = 0;
                let mut loop_cond = self.rewrite(&c.loop_cond, &mut per_iteration);
                let mut loop_step = self.rewrite(&c.loop_step, &mut per_iteration);
                // A `map`/`filter` step the `cel` crate runs in place never evaluates its
                // (literal) condition: its guard, or the element it appends, is evaluated on
                // every iteration instead.
                match appended(c, &mut loop_step) {
                    Some(every_iteration) => {
                        let e = std::mem::take(every_iteration);
                        *every_iteration = call("@tick", vec![e, int(per_iteration as i64)]);
                    }
                    None => {
                        loop_cond = call("@tick", vec![loop_cond, int(per_iteration as i64)]);
                    }
                }
                Expr::Comprehension(Box::new(ComprehensionExpr {
                    iter_range: self.rewrite(&c.iter_range, bucket),
                    iter_var: c.iter_var.clone(),
                    iter_var2: c.iter_var2.clone(),
                    accu_var: c.accu_var.clone(),
                    accu_init: self.rewrite(&c.accu_init, bucket),
                    loop_cond,
                    loop_step,
                    result: self.rewrite(&c.result, bucket),
                }))
            }
            Expr::Select(s) => {
                let mut s = s.clone();
                s.operand = Box::new(self.rewrite(&s.operand, bucket));
                Expr::Select(s)
            }
            Expr::List(l) => {
                let mut l = l.clone();
                l.elements = l.elements.iter().map(|x| self.rewrite(x, bucket)).collect();
                Expr::List(l)
            }
            Expr::Map(m) => {
                let mut m = m.clone();
                for entry in &mut m.entries {
                    if let EntryExpr::MapEntry(me) = &mut entry.expr {
                        me.key = self.rewrite(&me.key, bucket);
                        me.value = self.rewrite(&me.value, bucket);
                    }
                }
                Expr::Map(m)
            }
            Expr::Struct(s) => {
                let mut s = s.clone();
                for entry in &mut s.entries {
                    if let EntryExpr::StructField(f) = &mut entry.expr {
                        f.value = self.rewrite(&f.value, bucket);
                    }
                }
                Expr::Struct(s)
            }
            other => other.clone(),
        };
        IdedExpr { id: e.id, expr }
    }

    fn rewrite_call(&mut self, e: &IdedExpr, c: &CallExpr, bucket: &mut u64) -> IdedExpr {
        let name = call_name(e).unwrap_or_default();
        let namespaced = name.contains('.');
        // A list literal added to a list is list concatenation (cost 1), left as written so
        // the `cel` crate's in-place `map`/`filter` accumulation still recognises it.
        let list_concat = name == "_+_" && c.args.iter().any(|a| matches!(a.expr, Expr::List(_)));
        let formula = call_formula(&name).filter(|_| !list_concat);
        if list_concat {
            *bucket += 1;
        }
        // The call's arguments, a member call's target first.
        let mut operands: Vec<&IdedExpr> = Vec::new();
        if let (Some(t), false) = (&c.target, namespaced) {
            operands.push(t);
        }
        operands.extend(c.args.iter());
        if let (true, [cond, yes, no]) = (name == "_?_:_", operands.as_slice()) {
            // One branch runs: charge the dearer one's steps, as the estimate does.
            let cond = self.rewrite(cond, bucket);
            let (mut a, mut b) = (0, 0);
            let (yes, no) = (self.rewrite(yes, &mut a), self.rewrite(no, &mut b));
            *bucket += a.max(b);
            return rebuild(e, c, namespaced, vec![cond, yes, no]);
        }
        let mut rewritten: Vec<IdedExpr> =
            operands.iter().map(|a| self.rewrite(a, bucket)).collect();
        let Some(formula) = formula else {
            return rebuild(e, c, namespaced, rewritten);
        };
        let mut known = [None; 2];
        let mut dynamic = Vec::new();
        for &i in formula.arguments() {
            match operands.get(i).and_then(|a| literal(a)) {
                Some(l) => known[i] = Some(Measure::of_literal(l)),
                None if i < operands.len() => dynamic.push(i),
                None => {}
            }
        }
        // Equality or comparison with a literal: at most the literal's cost.
        if formula == Formula::Min && dynamic.len() < 2 {
            let literal_size = known.iter().flatten().map(|m| m.size).min().unwrap_or(1);
            *bucket += crate::cost::scaled(literal_size, crate::cost::STRING_TRAVERSAL_COST_FACTOR);
            return rebuild(e, c, namespaced, rewritten);
        }
        if dynamic.is_empty() && formula != Formula::Joined {
            *bucket += formula.cost(&known.map(Option::unwrap_or_default), Measure::default());
            return rebuild(e, c, namespaced, rewritten);
        }
        let site = self.sites.len() as i64;
        let last = if formula == Formula::Joined {
            RESULT
        } else {
            *dynamic.last().expect("not empty") as i64
        };
        self.sites.push(Site {
            formula,
            known,
            last,
        });
        for &i in &dynamic {
            let arg = std::mem::take(&mut rewritten[i]);
            rewritten[i] = call("@cost", vec![arg, int(site), int(i as i64)]);
        }
        let rebuilt = rebuild(e, c, namespaced, rewritten);
        if last == RESULT {
            return call("@cost", vec![rebuilt, int(site), int(RESULT)]);
        }
        rebuilt
    }
}

/// In a comprehension of the shape the `cel` crate accumulates in place (`@result + [e]`, or
/// `guard ? @result + [e] : @result`, with a literal condition and `@result` as the result):
/// the expression of `step` evaluated on every iteration (the guard, else `e`).
fn appended<'s>(c: &ComprehensionExpr, step: &'s mut IdedExpr) -> Option<&'s mut IdedExpr> {
    let is_accu = |e: &IdedExpr| matches!(&e.expr, Expr::Ident(n) if *n == c.accu_var);
    if !is_accu(&c.result) || !matches!(c.loop_cond.expr, Expr::Literal(_)) {
        return None;
    }
    let Expr::Call(call) = &mut step.expr else {
        return None;
    };
    if call.target.is_some() {
        return None;
    }
    let is_append = |e: &IdedExpr| match &e.expr {
        Expr::Call(add) => {
            add.func_name == "_+_"
                && add.target.is_none()
                && matches!(add.args.as_slice(), [l, r] if is_accu(l)
                    && matches!(&r.expr, Expr::List(list) if !list.elements.is_empty()))
        }
        _ => false,
    };
    let guarded = call.func_name == "_?_:_"
        && matches!(call.args.as_slice(), [_, s, o] if is_append(s) && is_accu(o));
    if guarded {
        return call.args.first_mut();
    }
    if !is_append(&IdedExpr {
        id: 0,
        expr: Expr::Call(call.clone()),
    }) {
        return None;
    }
    match &mut call.args[1].expr {
        Expr::List(list) => list.elements.first_mut(),
        _ => None,
    }
}

/// The call `c` with its (target and) arguments replaced by `operands`.
fn rebuild(e: &IdedExpr, c: &CallExpr, namespaced: bool, mut operands: Vec<IdedExpr>) -> IdedExpr {
    let target = match (&c.target, namespaced) {
        (Some(t), true) => Some(t.clone()),
        (Some(_), false) => Some(Box::new(operands.remove(0))),
        (None, _) => None,
    };
    IdedExpr {
        id: e.id,
        expr: Expr::Call(CallExpr {
            func_name: c.func_name.clone(),
            target,
            args: operands,
        }),
    }
}

#[cfg(test)]
mod tests {
    use crate::limits::PER_CALL_LIMIT;
    use crate::{Expression, Value};
    use serde_json::{json, Value as Json};

    fn cost(rule: &str, obj: &Json) -> u64 {
        let e = Expression::compile(rule).unwrap();
        let out = e.evaluate_with_limit(&[("self", obj)], PER_CALL_LIMIT);
        out.unwrap_or_else(|e| panic!("{rule}: {e}")).cost
    }

    /// Costs as cel-go's tracker counts them (`interpreter/runtimecost_test.go`'s rules,
    /// worked by its model).
    #[test]
    fn costs_are_cel_go_s() {
        let obj = json!({"spec": {"replicas": 3, "name": "a".repeat(1000),
                                  "items": [1, 2, 3], "labels": {"a": "b"}}});
        for (rule, want) in [
            // An identifier and two selections (3), the comparison (1).
            ("self.spec.replicas >= 1", 4),
            ("1 + 2 == 3", 2),
            ("'hello'.contains('ell')", 1),
            // The list (10); per element, the condition `@not_strictly_false(accu)` (2) and
            // the step `accu && x > 0` (3); the result (1).
            ("[1, 2, 3].all(x, x > 0)", 10 + 3 * 5 + 1),
            // The string's 1001 characters × 0.1, by the pattern's 4 × 0.25, and `self.spec.name`.
            ("self.spec.name.matches('^a+$')", 101 + 3),
            ("self.spec.name.startsWith('a')", 100 + 3),
            // Equality is bounded by the smaller side.
            ("self.spec.name == 'a'", 1 + 3),
            ("self.spec.name == self.spec.name", 100 + 6),
            // `in` a list costs the list's length; `in` a map 1.
            ("2 in self.spec.items", 3 + 3),
            ("'a' in self.spec.labels", 1 + 3),
            // `map` accumulates in place from `[]` (10); each element costs its item (x * 2:
            // 2) and the append (`@result + [...]`: 1 + 10 + 1).
            (
                "self.spec.items.map(x, x * 2).size() == 3",
                3 + 10 + 3 * (2 + 12) + 1 + 1 + 1,
            ),
            ("self.spec.items.sum() == 6", 3 + 3 + 1),
        ] {
            assert_eq!(cost(rule, &obj), want, "{rule}");
        }
    }

    /// A rule whose worst case is far past the limit is stopped once its actual cost passes
    /// it, naming what it had spent; under the limit it runs to the end.
    #[test]
    fn evaluation_stops_at_the_limit() {
        let items: Vec<u64> = (0..2000).collect();
        let obj = json!({"items": items});
        let rule = "self.items.all(x, self.items.all(y, x == y || x != y))";
        let e = Expression::compile(rule).unwrap();
        let err = e.evaluate(&[("self", &obj)]).unwrap_err();
        assert_eq!(
            err.message,
            "operation cancelled: actual cost limit exceeded"
        );
        let spent = err.cost_limit_exceeded.unwrap();
        assert!(
            spent > PER_CALL_LIMIT && spent < PER_CALL_LIMIT + 20_000,
            "{spent}"
        );
        // An error absorbed by `||` does not hide it.
        let e = Expression::compile(&format!("({rule}) || true")).unwrap();
        assert!(e
            .evaluate(&[("self", &obj)])
            .unwrap_err()
            .cost_limit_exceeded
            .is_some());
        // The same rule over a small list is within the limit.
        let small = json!({"items": [1, 2, 3]});
        let e = Expression::compile(rule).unwrap();
        assert_eq!(e.evaluate(&[("self", &small)]), Ok(Value::Bool(true)));
        // A caller's smaller budget (what is left of an object's) stops it sooner.
        let out = e.evaluate_with_limit(&[("self", &small)], 20).unwrap_err();
        assert!(out.cost_limit_exceeded.is_some());
    }
}
