//! kube's quantity library (`k8s.io/apiserver/pkg/cel/library/quantity.go`, kube 1.28) over
//! the apimachinery crate's `resource.Quantity` port:
//!
//! - `quantity(<string>) <Quantity>` (the parse error is `ParseQuantity`'s message),
//!   `isQuantity(<string>) <bool>`, `sign(<Quantity>) <int>`;
//! - `<Quantity>.isGreaterThan(<Quantity>)`, `isLessThan`, `compareTo` (`-1`, `0`, `1`);
//! - `<Quantity>.asApproximateFloat() <double>`, `isInteger() <bool>`, `asInteger() <int>`
//!   (`cannot convert value to integer` when it is not an integer that fits 64 bits);
//! - `<Quantity>.add(<Quantity>|<int>)`, `sub(<Quantity>|<int>)`;
//! - `==` between quantities compares their values (`quantity("200M") == quantity("0.2G")`).
//!
//! Newer kube releases add `mul`, `div` and `divInt`: not yet here.

use cel::common::types::{CelBool, CelDouble, CelInt, CelString, Type};
use cel::{DeclarationError, Env, ExecutionError};
use std::cmp::Ordering;
use wasm_apiserver_apimachinery::quantity::{self, Quantity};

/// `kubernetes.Quantity`, the type of [`QuantityVal`].
pub static QUANTITY_TYPE: Type = Type::new_unspecified_type("kubernetes.Quantity");

const NANOS: i128 = 1_000_000_000;

/// A `resource.Quantity` as a CEL value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QuantityVal(pub Quantity);

super::opaque_val!(QuantityVal, QUANTITY_TYPE);

/// Register the quantity library on `env`.
pub fn extension(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_type(QUANTITY_TYPE.to_owned())?;
    cel::add_overload!(env, fn parse: (CelString) -> Result<QuantityVal>, name = "quantity")?;
    cel::add_overload!(env, fn is_quantity: (CelString) -> CelBool, name = "isQuantity")?;
    cel::add_overload!(env, fn sign: (QuantityVal) -> CelInt)?;
    cel::add_member_overload!(env, fn is_greater_than: (QuantityVal, QuantityVal) -> CelBool,
        name = "isGreaterThan")?;
    cel::add_member_overload!(env, fn is_less_than: (QuantityVal, QuantityVal) -> CelBool,
        name = "isLessThan")?;
    cel::add_member_overload!(env, fn compare_to: (QuantityVal, QuantityVal) -> CelInt,
        name = "compareTo")?;
    cel::add_member_overload!(env, fn as_approximate_float: (QuantityVal) -> CelDouble,
        name = "asApproximateFloat")?;
    cel::add_member_overload!(env, fn is_integer: (QuantityVal) -> CelBool, name = "isInteger")?;
    cel::add_member_overload!(env, fn as_integer: (QuantityVal) -> Result<CelInt>,
        name = "asInteger")?;
    cel::add_member_overload!(env, fn add: (QuantityVal, QuantityVal) -> QuantityVal)?;
    cel::add_member_overload!(env, fn add_int: (QuantityVal, CelInt) -> QuantityVal, name = "add")?;
    cel::add_member_overload!(env, fn sub: (QuantityVal, QuantityVal) -> QuantityVal)?;
    cel::add_member_overload!(env, fn sub_int: (QuantityVal, CelInt) -> QuantityVal, name = "sub")?;
    Ok(())
}

fn parse(s: &CelString<'_>) -> Result<QuantityVal, ExecutionError> {
    quantity::parse(s.inner())
        .map(QuantityVal)
        .map_err(|e| ExecutionError::function_error("quantity", e))
}

fn is_quantity(s: &CelString<'_>) -> CelBool {
    CelBool::from(quantity::parse(s.inner()).is_ok())
}

fn sign(q: &QuantityVal) -> CelInt {
    CelInt::from(q.0.signum() as i64)
}

fn ordering(o: Ordering) -> i64 {
    match o {
        Ordering::Less => -1,
        Ordering::Equal => 0,
        Ordering::Greater => 1,
    }
}

fn is_greater_than(q: &QuantityVal, other: &QuantityVal) -> CelBool {
    CelBool::from(q.0 > other.0)
}

fn is_less_than(q: &QuantityVal, other: &QuantityVal) -> CelBool {
    CelBool::from(q.0 < other.0)
}

fn compare_to(q: &QuantityVal, other: &QuantityVal) -> CelInt {
    CelInt::from(ordering(q.0.cmp(&other.0)))
}

fn as_approximate_float(q: &QuantityVal) -> CelDouble {
    CelDouble::from(q.0.nanos as f64 / NANOS as f64)
}

/// `Quantity.AsInt64`: the value when it is a whole number that fits 64 bits.
fn as_i64(q: &QuantityVal) -> Option<i64> {
    (q.0.nanos % NANOS == 0)
        .then(|| i64::try_from(q.0.nanos / NANOS).ok())
        .flatten()
}

fn is_integer(q: &QuantityVal) -> CelBool {
    CelBool::from(as_i64(q).is_some())
}

fn as_integer(q: &QuantityVal) -> Result<CelInt, ExecutionError> {
    as_i64(q).map(CelInt::from).ok_or_else(|| {
        ExecutionError::function_error("asInteger", "cannot convert value to integer")
    })
}

fn of_int(i: &CelInt) -> Quantity {
    Quantity::from_nanos((*i.inner() as i128).saturating_mul(NANOS))
}

fn add(q: &QuantityVal, other: &QuantityVal) -> QuantityVal {
    QuantityVal(q.0 + other.0)
}

fn add_int(q: &QuantityVal, i: &CelInt) -> QuantityVal {
    QuantityVal(q.0 + of_int(i))
}

fn sub(q: &QuantityVal, other: &QuantityVal) -> QuantityVal {
    QuantityVal(q.0 - other.0)
}

fn sub_int(q: &QuantityVal, i: &CelInt) -> QuantityVal {
    QuantityVal(q.0 - of_int(i))
}
