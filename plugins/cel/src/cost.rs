//! What evaluating costs, in cel-go's units: each step as cel-go's `CostTracker` counts it
//! (`interpreter/runtimecost.go`), and each function call by its arguments' sizes, as cel-go's
//! `costCall` and kube's `CostEstimator.CallCost` (`k8s.io/apiserver/pkg/cel/library/cost.go`)
//! compute it.
//!
//! Steps ([`step_cost`]): a literal and a `has()` test (kube's `PresenceTestHasCost(false)`)
//! cost 0; an identifier and a field selection 1 each; a list literal 10, a map literal 30; `&&`, `||`, `?:` and comprehensions
//! nothing of their own (their parts are counted); a call 1 unless its cost depends on its
//! arguments ([`call_formula`]).

use cel::common::ast::{Expr, IdedExpr, LiteralValue};
use cel::common::types::{CelBytes, CelMap, CelString};
use cel::common::value::Val;

/// cel-go `common.StringTraversalCostFactor`: a string or bytes traversal costs a tenth of
/// its length.
pub const STRING_TRAVERSAL_COST_FACTOR: f64 = 0.1;
/// cel-go `common.RegexStringLengthCostFactor`: each 4 characters of a pattern are guessed to
/// be one expression.
pub const REGEX_STRING_LENGTH_COST_FACTOR: f64 = 0.25;
/// cel-go `common.SelectAndIdentCost`.
pub const SELECT_AND_IDENT_COST: u64 = 1;
/// cel-go `common.ListCreateBaseCost`.
pub const LIST_CREATE_BASE_COST: u64 = 10;
/// cel-go `common.MapCreateBaseCost`.
pub const MAP_CREATE_BASE_COST: u64 = 30;
/// cel-go `common.StructCreateBaseCost`.
pub const STRUCT_CREATE_BASE_COST: u64 = 40;

/// kube's cost of one authorization check (`library/cost.go`).
pub const AUTHZ_CHECK_COST: u64 = 350_000;

/// `ceil(n × factor)`.
pub(crate) fn scaled(n: u64, factor: f64) -> u64 {
    (n as f64 * factor).ceil() as u64
}

/// The cost of evaluating `e` itself, its parts not counted; a call whose cost depends on its
/// arguments ([`call_formula`]) is 0 here.
pub(crate) fn step_cost(e: &IdedExpr) -> u64 {
    match &e.expr {
        Expr::Literal(_) | Expr::Comprehension(_) | Expr::Unspecified => 0,
        // kube keeps `has()` free (`PresenceTestHasCost(false)`, `environment/base.go`).
        Expr::Select(s) if s.test => 0,
        Expr::Ident(_) | Expr::Select(_) => SELECT_AND_IDENT_COST,
        Expr::List(_) => LIST_CREATE_BASE_COST,
        Expr::Map(_) => MAP_CREATE_BASE_COST,
        Expr::Struct(_) => STRUCT_CREATE_BASE_COST,
        Expr::Call(call) => match call.func_name.as_str() {
            "_&&_" | "_||_" | "_?_:_" => 0,
            _ if call_formula(call_name(e).as_deref().unwrap_or_default()).is_some() => 0,
            _ => 1,
        },
    }
}

/// The name a call is known by in [`call_formula`]: its function, qualified when written
/// `sets.contains(…)`.
pub(crate) fn call_name(e: &IdedExpr) -> Option<String> {
    let Expr::Call(call) = &e.expr else {
        return None;
    };
    match call.target.as_deref().map(|t| &t.expr) {
        Some(Expr::Ident(ns))
            if matches!(
                ns.as_str(),
                "sets" | "ip" | "format" | "optional" | "strings"
            ) =>
        {
            Some(format!("{ns}.{}", call.func_name))
        }
        _ => Some(call.func_name.clone()),
    }
}

/// How a call's cost follows from its arguments (a member call's target is argument 0).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Formula {
    /// `ceil(size(arg) × factor)`.
    Scaled(usize, f64),
    /// `ceil((1 + size(0)) × 0.1) × ceil(size(1) × 0.25)`: a regular expression over a string.
    Regex,
    /// `ceil(size(0) × 0.1) × ceil(size(1) × 0.1)`: `contains`.
    Product,
    /// `ceil(min(size(0), size(1)) × 0.1)`: equality; comparison of strings or bytes (1 for
    /// other comparisons).
    Min,
    /// `ceil((size(0) + size(1)) × 0.1)` for strings or bytes; 1 for other values.
    Concat,
    /// `size(1)` when it is a list (`x in list`); 1 for a map.
    InList,
    /// kube's `traversalCost` of argument 0 (a list library function).
    Traversal,
    /// `size(0) × size(1)`: a `sets` function.
    Pairs,
    /// `ceil(size(result) × 0.2)`: `join`.
    Joined,
    /// `string(bytes)`, `bytes(string)`: `ceil(size(0) × 0.1)`; 1 for other conversions.
    Conversion,
    /// `ip(string)`: `ceil(size(0) × 0.1)`; `<CIDR>.ip()`: 1.
    Ip,
    /// A fixed cost: an authorization `check` (350,000, so that two fit one call's limit).
    Fixed(u64),
    /// `containsIP`, `containsCIDR`: `ceil(2 × 0.1)` (+ `ceil(0.1) + 1` for a CIDR), plus
    /// `ceil(size(1) × 0.1)` when the argument is a string.
    Contains { cidr: bool },
}

/// The formula of a call whose cost depends on its arguments, by function name; `None`: it
/// costs 1.
pub(crate) fn call_formula(function: &str) -> Option<Formula> {
    let f = STRING_TRAVERSAL_COST_FACTOR;
    Some(match function {
        "check" => Formula::Fixed(AUTHZ_CHECK_COST),
        "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf" => Formula::Traversal,
        "url" | "lowerAscii" | "upperAscii" | "substring" | "trim" | "quantity" | "isQuantity"
        | "cidr" | "isIP" | "isCIDR" | "semver" | "isSemver" | "startsWith" | "endsWith" => {
            Formula::Scaled(0, f)
        }
        "replace" | "split" | "ip.isCanonical" => Formula::Scaled(0, 2.0 * f),
        "join" => Formula::Joined,
        "find" | "findAll" | "matches" => Formula::Regex,
        "contains" => Formula::Product,
        "containsIP" => Formula::Contains { cidr: false },
        "containsCIDR" => Formula::Contains { cidr: true },
        "sets.contains" | "sets.equivalent" | "sets.intersects" => Formula::Pairs,
        "ip" => Formula::Ip,
        "string" | "bytes" => Formula::Conversion,
        "@in" => Formula::InList,
        "_==_" | "_!=_" | "_<_" | "_<=_" | "_>_" | "_>=_" => Formula::Min,
        "_+_" => Formula::Concat,
        _ => return None,
    })
}

/// What a formula reads of one argument (or of the result): its size, whether it is a string
/// or bytes, a map, and kube's traversal cost of it.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Measure {
    pub size: u64,
    pub text: bool,
    pub map: bool,
    pub traversal: u64,
}

impl Measure {
    /// Measure `v`; its traversal cost only when `traverse` (it walks the whole value).
    pub(crate) fn of(v: &dyn Val, traverse: bool) -> Measure {
        Measure {
            size: actual_size(v),
            text: v.downcast_ref::<CelString>().is_some() || v.downcast_ref::<CelBytes>().is_some(),
            map: v.downcast_ref::<CelMap>().is_some(),
            traversal: if traverse { traversal_cost(v) } else { 0 },
        }
    }

    /// The measure of a literal argument, known before evaluation.
    pub(crate) fn of_literal(l: &LiteralValue) -> Measure {
        let (size, text) = match l {
            LiteralValue::String(s) => (s.inner().chars().count() as u64, true),
            LiteralValue::Bytes(b) => (b.inner().len() as u64, true),
            _ => (1, false),
        };
        Measure {
            size,
            text,
            map: false,
            traversal: if text {
                (size as f64 * STRING_TRAVERSAL_COST_FACTOR) as u64
            } else {
                1
            },
        }
    }
}

impl Formula {
    /// Which arguments the formula reads (the result: [`Formula::Joined`] reads none).
    pub(crate) fn arguments(self) -> &'static [usize] {
        match self {
            Formula::Scaled(..) | Formula::Traversal | Formula::Ip | Formula::Conversion => &[0],
            Formula::Joined | Formula::Fixed(_) => &[],
            Formula::InList => &[1],
            Formula::Contains { .. } => &[1],
            _ => &[0, 1],
        }
    }

    /// The cost, given the measures of [`Formula::arguments`] by index (others default) and of
    /// the result for [`Formula::Joined`].
    pub(crate) fn cost(self, args: &[Measure; 2], result: Measure) -> u64 {
        let f = STRING_TRAVERSAL_COST_FACTOR;
        let [a, b] = args;
        match self {
            Formula::Scaled(i, factor) => scaled(args[i].size, factor),
            Formula::Regex => scaled(1 + a.size, f)
                .saturating_mul(scaled(b.size, REGEX_STRING_LENGTH_COST_FACTOR)),
            Formula::Product => scaled(a.size, f).saturating_mul(scaled(b.size, f)),
            Formula::Min => scaled(a.size.min(b.size), f),
            Formula::Concat if a.text => scaled(a.size + b.size, f),
            Formula::Concat => 1,
            Formula::InList if !b.map => b.size,
            Formula::InList => 1,
            Formula::Traversal => a.traversal,
            Formula::Pairs => a.size.saturating_mul(b.size).max(1),
            Formula::Joined => scaled(result.size, 2.0 * f),
            Formula::Fixed(n) => n,
            Formula::Conversion | Formula::Ip if a.text => scaled(a.size, f),
            Formula::Conversion | Formula::Ip => 1,
            Formula::Contains { cidr } => {
                // A CIDR value has no size: cel-go counts it as 1.
                let mut cost = scaled(2, f);
                if cidr {
                    cost += scaled(1, f) + 1;
                }
                if b.text {
                    cost += scaled(b.size, f);
                }
                cost
            }
        }
    }
}

/// cel-go's `actualSize`: a string's characters, a byte sequence's, list's or map's length;
/// 1 for anything else.
pub(crate) fn actual_size(v: &dyn Val) -> u64 {
    v.as_sizer()
        .map(|s| (*s.size().inner()).max(0) as u64)
        .unwrap_or(1)
}

/// kube's `traversalCost`: a string or bytes a tenth of its length (rounded down), a list or
/// map the sum over its elements (keys and values), anything else 1.
fn traversal_cost(v: &dyn Val) -> u64 {
    if let Some(s) = v.downcast_ref::<CelString>() {
        return (s.inner().len() as f64 * STRING_TRAVERSAL_COST_FACTOR) as u64;
    }
    if let Some(b) = v.downcast_ref::<CelBytes>() {
        return (b.inner().len() as f64 * STRING_TRAVERSAL_COST_FACTOR) as u64;
    }
    let Some(iterable) = v.as_iterable() else {
        return 1;
    };
    // A map iterates its keys; its values are traversed as well.
    let map_values = v.downcast_ref::<CelMap>().and_then(|_| v.as_indexer());
    let mut cost = 0u64;
    let mut items = iterable.iter();
    while let Some(item) = items.next() {
        cost = cost.saturating_add(traversal_cost(item));
        if let Some(Ok(value)) = map_values.map(|ix| ix.get(item)) {
            cost = cost.saturating_add(traversal_cost(value.as_ref()));
        }
    }
    cost
}
