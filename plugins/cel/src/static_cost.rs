//! The static cost estimate of a checked expression: cel-go's `checker/cost.go` with kube's
//! `CostEstimator.EstimateCallCost` (`k8s.io/apiserver/pkg/cel/library/cost.go`) and the sizes
//! a schema bounds (kube's `sizeEstimator`, here the [`Bound`](crate::types::Bound)s the
//! checker's types carry).
//!
//! kube refuses a CustomResourceDefinition rule whose estimated worst case passes
//! [`STATIC_ESTIMATED_COST_LIMIT`](crate::limits::STATIC_ESTIMATED_COST_LIMIT); this server
//! accepts it with [`cost_error_message`]'s text as a warning and bounds it when evaluated
//! ([`crate::runtime_cost`]).
//!
//! Where this estimate differs from kube's: a scalar read from a schema has size 1 here and 0
//! in kube's path lookup (an equality of two such fields estimates 1, not 0), and an
//! `x-kubernetes-int-or-string` value's size is unknown rather than the request size. Both
//! only ever raise the estimate.

use crate::checker::Checked;
use crate::cost::{
    LIST_CREATE_BASE_COST, MAP_CREATE_BASE_COST, REGEX_STRING_LENGTH_COST_FACTOR,
    SELECT_AND_IDENT_COST, STRING_TRAVERSAL_COST_FACTOR, STRUCT_CREATE_BASE_COST,
};
use crate::types::Type;
use cel::common::ast::{ComprehensionExpr, EntryExpr, Expr, IdedExpr, LiteralValue};
use std::collections::HashMap;

/// A range of costs (or of sizes: [`SizeEstimate`]), saturating at `u64::MAX`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CostEstimate {
    pub min: u64,
    pub max: u64,
}

/// A range of sizes: a string's characters, a list's items, a map's entries.
pub type SizeEstimate = CostEstimate;

const UNKNOWN: SizeEstimate = CostEstimate {
    min: 0,
    max: u64::MAX,
};

impl CostEstimate {
    /// `[n, n]`.
    pub const fn fixed(n: u64) -> CostEstimate {
        CostEstimate { min: n, max: n }
    }

    fn add(self, o: CostEstimate) -> CostEstimate {
        CostEstimate {
            min: self.min.saturating_add(o.min),
            max: self.max.saturating_add(o.max),
        }
    }

    fn multiply(self, o: CostEstimate) -> CostEstimate {
        CostEstimate {
            min: self.min.saturating_mul(o.min),
            max: self.max.saturating_mul(o.max),
        }
    }

    /// cel-go `MultiplyByCostFactor`: each end times `f`, rounded up.
    fn by_factor(self, f: f64) -> CostEstimate {
        let scale = |x: u64| {
            let v = (x as f64 * f).ceil();
            if v >= u64::MAX as f64 {
                u64::MAX
            } else {
                v as u64
            }
        };
        CostEstimate {
            min: scale(self.min),
            max: scale(self.max),
        }
    }

    fn union(self, o: CostEstimate) -> CostEstimate {
        CostEstimate {
            min: self.min.min(o.min),
            max: self.max.max(o.max),
        }
    }
}

/// kube's `getCostErrorMessage` (`apiextensions-apiserver/pkg/apis/apiextensions/validation/
/// validation.go`): `<cost name> exceeds budget by factor of <f> (try simplifying the rule, or
/// adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are
/// declared)`.
pub fn cost_error_message(cost_name: &str, expected: u64, limit: u64) -> String {
    let factor = expected as f64 / limit as f64;
    let factor = if factor > 100.0 {
        "more than 100x".to_string()
    } else if factor < 1.5 {
        format!("{factor:.6}x")
    } else {
        format!("{factor:.1}x")
    };
    format!(
        "{cost_name} exceeds budget by factor of {factor} (try simplifying the rule, or adding \
         maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
    )
}

/// The warning for a rule kube would refuse for its estimated cost — `expected` is its
/// estimate's maximum times how often it may run per object (kube's `getExpressionCost`) —
/// or `None` when kube accepts it: kube's message, then that kube's limit is passed and how
/// this server bounds the rule instead.
pub fn kube_limit_warning(expected: u64) -> Option<String> {
    let limit = crate::limits::STATIC_ESTIMATED_COST_LIMIT;
    (expected > limit).then(|| {
        format!(
            "{}; kube-apiserver refuses rules estimated above {limit}: this server accepts it \
             and stops an evaluation past the per-call limit of {}",
            cost_error_message("estimated rule cost", expected, limit),
            crate::limits::PER_CALL_LIMIT
        )
    })
}

/// The estimated cost of `expr`, whose types `checked` holds.
pub fn estimate(expr: &IdedExpr, checked: &Checked) -> CostEstimate {
    let mut c = Coster {
        types: &checked.types,
        sizes: HashMap::new(),
        locals: Vec::new(),
    };
    c.cost(expr)
}

struct Coster<'a> {
    types: &'a HashMap<u64, Type>,
    /// Sizes computed for call results and comprehensions, by expression id.
    sizes: HashMap<u64, SizeEstimate>,
    /// Accumulators and iteration variables in scope, with a known size.
    locals: Vec<(String, Option<SizeEstimate>)>,
}

fn is_scalar(t: &Type) -> bool {
    match t {
        Type::Bool | Type::Int | Type::Uint | Type::Double | Type::Duration | Type::Timestamp => {
            true
        }
        Type::Optional(inner) => is_scalar(inner),
        _ => false,
    }
}

impl Coster<'_> {
    fn type_of(&self, e: &IdedExpr) -> Type {
        self.types.get(&e.id).cloned().unwrap_or(Type::Dyn)
    }

    /// cel-go `computeSize`: a computed size, a literal's, the schema's bound (an object:
    /// 0, as kube's `MaxElements`), 1 for a scalar, a local variable's; `None`: unknown.
    fn compute_size(&self, e: &IdedExpr) -> Option<SizeEstimate> {
        if let Some(s) = self.sizes.get(&e.id) {
            return Some(*s);
        }
        match &e.expr {
            Expr::Literal(l) => {
                return Some(CostEstimate::fixed(match l {
                    LiteralValue::String(s) => s.inner().chars().count() as u64,
                    LiteralValue::Bytes(b) => b.inner().len() as u64,
                    _ => 1,
                }))
            }
            Expr::List(l) => return Some(CostEstimate::fixed(l.elements.len() as u64)),
            Expr::Map(m) => return Some(CostEstimate::fixed(m.entries.len() as u64)),
            _ => {}
        }
        let t = self.type_of(e);
        if let Expr::Ident(name) = &e.expr {
            if let Some((_, size)) = self.locals.iter().rev().find(|(n, _)| n == name) {
                if size.is_some() {
                    return *size;
                }
            }
        }
        if let Some(max) = t.bound() {
            return Some(CostEstimate { min: 0, max });
        }
        if matches!(t, Type::Object(_)) {
            return Some(CostEstimate::fixed(0));
        }
        if is_scalar(&t) {
            return Some(CostEstimate::fixed(1));
        }
        None
    }

    fn size(&self, e: &IdedExpr) -> SizeEstimate {
        self.compute_size(e).unwrap_or(UNKNOWN)
    }

    fn cost(&mut self, e: &IdedExpr) -> CostEstimate {
        let ident = CostEstimate::fixed(SELECT_AND_IDENT_COST);
        match &e.expr {
            Expr::Literal(_) | Expr::Unspecified => CostEstimate::fixed(0),
            Expr::Ident(_) => ident,
            // kube keeps `has()` free (`PresenceTestHasCost(false)`).
            Expr::Select(s) if s.test => self.cost(&s.operand),
            Expr::Select(s) => {
                let operand = self.cost(&s.operand);
                match self.type_of(&s.operand) {
                    Type::Map(..) | Type::Object(_) | Type::Param(_) => operand.add(ident),
                    _ => operand,
                }
            }
            Expr::List(l) => l
                .elements
                .iter()
                .fold(CostEstimate::fixed(LIST_CREATE_BASE_COST), |sum, x| {
                    sum.add(self.cost(x))
                }),
            Expr::Map(m) => {
                let mut sum = CostEstimate::fixed(MAP_CREATE_BASE_COST);
                for entry in &m.entries {
                    if let EntryExpr::MapEntry(me) = &entry.expr {
                        sum = sum.add(self.cost(&me.key)).add(self.cost(&me.value));
                    }
                }
                sum
            }
            Expr::Struct(s) => {
                let mut sum = CostEstimate::fixed(STRUCT_CREATE_BASE_COST);
                for entry in &s.entries {
                    if let EntryExpr::StructField(f) = &entry.expr {
                        sum = sum.add(self.cost(&f.value));
                    }
                }
                sum
            }
            Expr::Comprehension(c) => self.cost_comprehension(e, c),
            Expr::Call(_) => self.cost_call(e),
        }
    }

    fn cost_comprehension(&mut self, e: &IdedExpr, c: &ComprehensionExpr) -> CostEstimate {
        let is_bind = matches!(&c.iter_range.expr, Expr::List(l) if l.elements.is_empty())
            && matches!(&c.loop_cond.expr, Expr::Literal(LiteralValue::Boolean(b)) if !*b.inner())
            && c.accu_var != "@result";
        let mut sum = self.cost(&c.iter_range).add(self.cost(&c.accu_init));
        let accu_size = self.compute_size(&c.accu_init);
        self.locals.push((c.accu_var.clone(), accu_size));
        if is_bind {
            sum = sum.add(self.cost(&c.result));
            self.locals.pop();
            if let Some(s) = self.compute_size(&c.result) {
                self.sizes.insert(e.id, s);
            }
            return sum;
        }
        let depth = self.locals.len();
        // The iteration variable's size comes from its (element) type.
        self.locals.push((c.iter_var.clone(), None));
        if let Some(v2) = &c.iter_var2 {
            self.locals.push((v2.clone(), None));
        }
        let loop_cost = self.cost(&c.loop_cond);
        let step_cost = self.cost(&c.loop_step);
        self.locals.truncate(depth);
        sum = sum.add(self.cost(&c.result));
        self.locals.pop();
        let range = self.size(&c.iter_range);
        sum = sum.add(range.multiply(step_cost.add(loop_cost)));
        match &c.accu_init.expr {
            Expr::Literal(_) => {
                if let Some(s) = accu_size {
                    self.sizes.insert(e.id, s);
                }
            }
            Expr::List(_) | Expr::Map(_) => {
                self.sizes.insert(e.id, range);
            }
            _ => {}
        }
        sum
    }

    fn cost_call(&mut self, e: &IdedExpr) -> CostEstimate {
        let Expr::Call(call) = &e.expr else {
            unreachable!("a call")
        };
        let name = crate::cost::call_name(e).unwrap_or_default();
        let namespaced = name.contains('.');
        if name == "dyn" && call.args.len() == 1 {
            let cost = self.cost(&call.args[0]).add(CostEstimate::fixed(1));
            if let Some(s) = self.compute_size(&call.args[0]) {
                self.sizes.insert(e.id, s);
            }
            return cost;
        }
        let arg_costs: Vec<CostEstimate> = call.args.iter().map(|a| self.cost(a)).collect();
        let args_sum = arg_costs
            .iter()
            .fold(CostEstimate::fixed(0), |s, c| s.add(*c));
        let target = call.target.as_deref().filter(|_| !namespaced);
        let target_cost = target
            .map(|t| self.cost(t))
            .unwrap_or(CostEstimate::fixed(0));
        let (fn_cost, result_size) = self.function_cost(&name, target, &call.args, &arg_costs);
        let fn_cost = fn_cost.unwrap_or_else(|| CostEstimate::fixed(1).add(args_sum));
        let result_size = result_size.or_else(|| self.compute_size(e));
        if let Some(s) = result_size {
            self.sizes.insert(e.id, s);
        }
        target_cost.add(fn_cost)
    }

    /// The cost of the call itself and of its arguments (not its target), and its result's
    /// size when the function says; `None`: 1 plus the arguments.
    fn function_cost(
        &mut self,
        name: &str,
        target: Option<&IdedExpr>,
        args: &[IdedExpr],
        arg_costs: &[CostEstimate],
    ) -> (Option<CostEstimate>, Option<SizeEstimate>) {
        let f = STRING_TRAVERSAL_COST_FACTOR;
        let args_sum = arg_costs
            .iter()
            .fold(CostEstimate::fixed(0), |s, c| s.add(*c));
        let with_args = |c: CostEstimate| Some(c.add(args_sum));
        let is_text = |t: &Type| matches!(t, Type::String(_) | Type::Bytes(_));
        let maybe_text = |t: &Type| is_text(t) || matches!(t, Type::Dyn | Type::Param(_));
        match (name, target) {
            // kube (library/cost.go EstimateCallCost).
            ("isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf", Some(t)) => {
                let cost = match self.type_of(t) {
                    Type::List(elem, _) => {
                        let mut el = CostEstimate::fixed(1);
                        if is_text(&elem) {
                            let elem_size = elem
                                .bound()
                                .map(|max| CostEstimate { min: 0, max })
                                .unwrap_or(UNKNOWN);
                            el = el.add(elem_size.by_factor(f));
                        }
                        self.size(t).multiply(el)
                    }
                    _ => self.size(t).by_factor(f),
                };
                (with_args(cost), None)
            }
            ("find" | "findAll", Some(t)) if !args.is_empty() => {
                let size = self.size(t);
                let str_cost = size.add(CostEstimate::fixed(1)).by_factor(f);
                let regex_cost = self
                    .size(&args[0])
                    .by_factor(REGEX_STRING_LENGTH_COST_FACTOR);
                let result = CostEstimate {
                    min: 0,
                    max: size.max,
                };
                (with_args(str_cost.multiply(regex_cost)), Some(result))
            }
            ("check", Some(_)) => (
                with_args(CostEstimate::fixed(crate::cost::AUTHZ_CHECK_COST)),
                None,
            ),
            // A two-variable comprehension's pairs and maps are as large as their range.
            ("@pairs" | "@mapOf" | "@merge", None) if args.len() == 1 => {
                (with_args(CostEstimate::fixed(1)), Some(self.size(&args[0])))
            }
            ("url", None) if args.len() == 1 => (with_args(self.size(&args[0]).by_factor(f)), None),
            ("lowerAscii" | "upperAscii" | "substring" | "trim", Some(t)) => {
                let size = self.size(t);
                (with_args(size.by_factor(f)), Some(size))
            }
            ("replace", Some(t)) if args.len() >= 2 => {
                let size = self.replaced_size(t, &args[0], &args[1]);
                (with_args(self.size(t).by_factor(2.0 * f)), Some(size))
            }
            ("split", Some(t)) => {
                let size = self.size(t);
                // At worst every character is an element, unless a literal limit says fewer.
                let max = match args.get(1).map(|a| &a.expr) {
                    Some(Expr::Literal(LiteralValue::Int(n))) if *n.inner() >= 0 => {
                        *n.inner() as u64
                    }
                    _ => size.max,
                };
                let result = CostEstimate { min: 0, max };
                (with_args(size.by_factor(2.0 * f)), Some(result))
            }
            ("join", Some(t)) => {
                let list = self.size(t);
                let mut size = match self.type_of(t) {
                    Type::List(elem, _) => list.multiply(
                        elem.bound()
                            .map(|max| CostEstimate { min: 0, max })
                            .unwrap_or(UNKNOWN),
                    ),
                    _ => CostEstimate::fixed(0),
                };
                if let Some(sep) = args.first() {
                    let separators = CostEstimate {
                        min: list.min.saturating_sub(1),
                        max: list.max.saturating_sub(1),
                    };
                    size = size.add(self.size(sep).multiply(separators));
                }
                (with_args(size.by_factor(f)), Some(size))
            }
            ("format", Some(t)) if args.len() == 1 => {
                let target = self.size(t);
                let result = target.add(self.size(&args[0]));
                (with_args(target.by_factor(f)), Some(result))
            }
            ("strings.quote", None) if args.len() == 1 => {
                let sz = self.size(&args[0]);
                let result = CostEstimate {
                    min: sz.min.saturating_add(2),
                    max: sz.max.saturating_mul(2).saturating_add(2),
                };
                (with_args(sz.by_factor(f)), Some(result))
            }
            ("ip", Some(_)) if args.is_empty() => (with_args(CostEstimate::fixed(1)), None),
            (
                "masked"
                | "prefixLength"
                | "family"
                | "isUnspecified"
                | "isLoopback"
                | "isLinkLocalMulticast"
                | "isLinkLocalUnicast"
                | "sign"
                | "asInteger"
                | "isInteger"
                | "asApproximateFloat"
                | "isGreaterThan"
                | "isLessThan"
                | "compareTo"
                | "add"
                | "sub",
                _,
            ) => (with_args(CostEstimate::fixed(1)), None),
            ("containsIP" | "containsCIDR", Some(_)) if !args.is_empty() => {
                // An IP is 4 or 16 bytes.
                let sz = CostEstimate { min: 4, max: 16 };
                let mut cost = sz.add(sz).by_factor(f);
                if name == "containsCIDR" {
                    cost = cost.add(sz.by_factor(f)).add(CostEstimate::fixed(1));
                }
                if is_text(&self.type_of(&args[0])) {
                    cost = cost.add(self.size(&args[0]).by_factor(f));
                }
                (with_args(cost), None)
            }
            // cel-go (checker/cost.go functionCost).
            ("string" | "bytes", None) if args.len() == 1 => {
                let from = self.type_of(&args[0]);
                let converts = match name {
                    "string" => matches!(from, Type::Bytes(_)),
                    _ => matches!(from, Type::String(_)),
                };
                if !converts {
                    return (None, None);
                }
                let sz = self.size(&args[0]);
                let result = match name {
                    "string" => CostEstimate {
                        min: sz.min / 4,
                        max: sz.max,
                    },
                    _ => CostEstimate {
                        min: sz.min,
                        max: sz.max.saturating_mul(4),
                    },
                };
                (with_args(sz.by_factor(f)), Some(result))
            }
            ("startsWith" | "endsWith", Some(_)) if args.len() == 1 => {
                (with_args(self.size(&args[0]).by_factor(f)), None)
            }
            ("@in", None) if args.len() == 2 => match self.type_of(&args[1]) {
                Type::Map(..) => (None, None),
                _ => (with_args(self.size(&args[1])), None),
            },
            ("matches", Some(t)) if args.len() == 1 => {
                let str_cost = self.size(t).add(CostEstimate::fixed(1)).by_factor(f);
                let regex_cost = self
                    .size(&args[0])
                    .by_factor(REGEX_STRING_LENGTH_COST_FACTOR);
                (with_args(str_cost.multiply(regex_cost)), None)
            }
            ("contains", Some(t)) if args.len() == 1 => {
                let cost = self
                    .size(t)
                    .by_factor(f)
                    .multiply(self.size(&args[0]).by_factor(f));
                (with_args(cost), None)
            }
            ("_&&_" | "_||_", None) if arg_costs.len() == 2 => {
                let (lhs, rhs) = (arg_costs[0], arg_costs[1]);
                let cost = CostEstimate {
                    min: lhs.min,
                    max: lhs.add(rhs).max,
                };
                (Some(cost), None)
            }
            ("_?_:_", None) if arg_costs.len() == 3 => {
                let size = self.size(&args[1]).union(self.size(&args[2]));
                let cost = arg_costs[0].add(arg_costs[1].union(arg_costs[2]));
                (Some(cost), Some(size))
            }
            ("_+_", None) if args.len() == 2 => {
                let (l, r) = (self.type_of(&args[0]), self.type_of(&args[1]));
                let result = self.size(&args[0]).add(self.size(&args[1]));
                let cost = if matches!(l, Type::List(..)) || matches!(r, Type::List(..)) {
                    CostEstimate::fixed(1)
                } else if maybe_text(&l) && maybe_text(&r) {
                    result.by_factor(f)
                } else {
                    return (None, None);
                };
                (with_args(cost), Some(result))
            }
            ("_==_" | "_!=_", None) if args.len() == 2 => (with_args(self.smaller(args)), None),
            ("_<_" | "_<=_" | "_>_" | "_>=_", None)
                if args.len() == 2 && maybe_text(&self.type_of(&args[0])) =>
            {
                (with_args(self.smaller(args)), None)
            }
            ("_[_]", None) if args.len() == 2 => {
                // An element's size is its type's.
                (None, None)
            }
            _ => (None, None),
        }
    }

    /// kube's estimate of `target.replace(old, new)`'s size: the most replacements of the
    /// shortest `old` by the longest `new`, the fewest of the longest by the shortest.
    fn replaced_size(&self, target: &IdedExpr, old: &IdedExpr, new: &IdedExpr) -> SizeEstimate {
        let (sz, from, to) = (self.size(target), self.size(old), self.size(new));
        let (mut count, mut retained) = (CostEstimate::fixed(0), CostEstimate::fixed(0));
        if from.min == 0 {
            // An empty `old` surrounds every character with `new`.
            count.max = sz.max.saturating_add(1);
            retained.max = sz.max;
        } else if to.max <= from.min {
            retained.max = sz.max;
        } else {
            count.max = sz.max.div_ceil(from.min);
        }
        if from.max == 0 {
            count.min = sz.min.saturating_add(1);
            retained.min = sz.min;
        } else if from.max <= to.min {
            retained.min = sz.min;
        } else {
            count.min = sz.min.div_ceil(from.max);
        }
        count.multiply(to).add(retained)
    }

    /// `[min, smaller max] × 0.1` of two operands (min 1 when the smaller max is not 0).
    fn smaller(&self, args: &[IdedExpr]) -> CostEstimate {
        let smallest_max = self.size(&args[0]).max.min(self.size(&args[1]).max);
        CostEstimate {
            min: u64::from(smallest_max > 0),
            max: smallest_max,
        }
        .by_factor(STRING_TRAVERSAL_COST_FACTOR)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::limits::STATIC_ESTIMATED_COST_LIMIT;
    use crate::schema::schema_type;
    use crate::{Expression, Variables};
    use serde_json::json;

    fn estimate_of(rule: &str, schema: &serde_json::Value) -> CostEstimate {
        let t = schema_type(schema, "selfType", false).unwrap();
        let vars = Variables::new().with("self", t.clone()).with("oldSelf", t);
        let e = Expression::compile_checked(rule, &vars).unwrap_or_else(|e| panic!("{e}"));
        e.estimated_cost().unwrap()
    }

    /// Estimates worked by cel-go's and kube's model (cases after kube's
    /// `apiextensions-apiserver/pkg/apiserver/schema/cel/compilation_test.go` cost tests).
    #[test]
    fn estimates_are_kube_s() {
        let bounded = json!({"type": "object", "properties": {
            "name": {"type": "string", "maxLength": 10},
            "names": {"type": "array", "maxItems": 10,
                      "items": {"type": "string", "maxLength": 10}},
            "replicas": {"type": "integer"}}});
        for (rule, want) in [
            // self (1) + .replicas (1) + the comparison (1).
            ("self.replicas >= 1", CostEstimate::fixed(3)),
            ("self == oldSelf", CostEstimate { min: 2, max: 2 }),
            // self.name (2); (0 to 40 bytes + 1) × 0.1, × the 4-character pattern × 0.25.
            ("self.name.matches('^a+$')", CostEstimate { min: 3, max: 7 }),
            // self.names (2) and the result (1); up to 10 names × the condition
            // `@not_strictly_false(accu)` (2) and the step `accu && n.startsWith('a')` (1 to 3).
            (
                "self.names.all(n, n.startsWith('a'))",
                CostEstimate {
                    min: 3,
                    max: 3 + 10 * 5,
                },
            ),
        ] {
            assert_eq!(estimate_of(rule, &bounded), want, "{rule}");
        }
        let unbounded = json!({"type": "object", "properties": {
            "names": {"type": "array", "items": {"type": "string"}}}});
        let e = estimate_of("self.names.all(n, n.matches('^[a-z]+$'))", &unbounded);
        assert!(e.max > STATIC_ESTIMATED_COST_LIMIT, "{e:?}");
        let e = estimate_of("self.names.all(a, self.names.all(b, a != b))", &unbounded);
        assert!(e.max > 100 * STATIC_ESTIMATED_COST_LIMIT, "{e:?}");
    }

    /// The invariant the run-time budget rests on: what an evaluation is charged is never
    /// more than the static estimate's maximum, here over objects that fill their bounds.
    #[test]
    fn evaluations_cost_no_more_than_estimated() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "maxLength": 8},
            "tags": {"type": "array", "maxItems": 6, "items": {"type": "string", "maxLength": 8}},
            "labels": {"type": "object", "maxProperties": 4,
                       "additionalProperties": {"type": "string", "maxLength": 8}},
            "replicas": {"type": "integer"}}});
        let tags: Vec<String> = (0..6).map(|i| format!("tag-{i:04}")).collect();
        let obj = json!({"name": "abcdefgh", "tags": tags, "replicas": 3,
                         "labels": {"a": "12345678", "b": "x", "c": "y", "d": "z"}});
        let t = schema_type(&schema, "selfType", false).unwrap();
        let vars = Variables::new().with("self", t);
        for rule in [
            "self.tags.all(t, t.matches('^tag-[0-9]+$') && t.startsWith('tag'))",
            "self.tags.map(t, t + '-x').exists(t, t.contains('5'))",
            "self.tags.filter(t, t != self.name).size() == 6",
            "self.name in self.tags || self.labels.all(k, self.labels[k].size() < 9)",
            "self.replicas > 1 ? self.name.endsWith('h') : self.tags.exists_one(t, t == 'x')",
            "self.tags.all(a, self.tags.exists(b, a == b))",
            "self.name.lowerAscii().split('d').size() <= 9 && self.name.upperAscii() != ''",
            "self.tags.join(',').replace(',', ';').size() > 0",
            "self.name.substring(1).indexOf('b') >= 0 && self.name.trim().charAt(0) == 'a'",
            "'%s!'.format([self.name]).endsWith('!') && strings.quote(self.name).size() > 8",
            "self.tags.all(i, t, t.startsWith('tag') && i < 6)",
            "self.labels.transformMap(k, v, v + k).size() == 4",
            "self.tags.transformList(i, t, i > 2, t).size() == 3",
        ] {
            let e = Expression::compile_checked(rule, &vars).unwrap_or_else(|e| panic!("{e}"));
            let estimate = e.estimated_cost().unwrap();
            let actual = e
                .evaluate_with_limit(&[("self", &obj)], u64::MAX)
                .unwrap()
                .cost;
            assert!(actual <= estimate.max, "{rule}: {actual} > {estimate:?}");
            assert!(actual >= estimate.min, "{rule}: {actual} < {estimate:?}");
        }
    }

    #[test]
    fn the_message_is_kube_s() {
        assert_eq!(
            cost_error_message("estimated rule cost", 25_000_000, 10_000_000),
            "estimated rule cost exceeds budget by factor of 2.5x (try simplifying the rule, or \
             adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are \
             declared)"
        );
        assert!(cost_error_message("x", 12, 10).contains("factor of 1.200000x"));
        assert_eq!(kube_limit_warning(10_000_000), None);
        let w = kube_limit_warning(30_000_000).unwrap();
        assert!(
            w.starts_with("estimated rule cost exceeds budget by factor of 3.0x"),
            "{w}"
        );
        assert!(
            w.contains("kube-apiserver refuses rules estimated above 10000000"),
            "{w}"
        );
        assert!(cost_error_message("x", 1_000_000, 10).contains("factor of more than 100x"));
    }
}
