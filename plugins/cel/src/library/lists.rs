//! kube's list functions (`k8s.io/apiserver/pkg/cel/library/lists.go`, kube 1.0):
//!
//! - `<list<T>>.isSorted() <bool>` (T comparable: int, uint, double, bool, duration,
//!   timestamp, string, bytes): no element orders after its successor;
//! - `<list<T>>.sum() <T>` (T int, uint, double, duration): the sum, `0` for an empty list
//!   (kube's zero of the list's declared type; without a type checker here, `int`);
//! - `<list<T>>.min() <T>`, `<list<T>>.max() <T>`: the least and the greatest element; on an
//!   empty list the error `min called on empty list` / `max called on empty list`;
//! - `<list<T>>.indexOf(<T>) <int>`, `<list<T>>.lastIndexOf(<T>) <int>`: the first and the
//!   last index of an equal element, `-1` when none.
//!
//! As kube's, comparisons that fail (elements of different types) are ignored: they neither
//! unsort a list nor replace a minimum or maximum.

use cel::common::types::{CelInt, DYN_TYPE, LIST_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};
use std::cmp::Ordering;

/// Register the list functions on `env`.
pub fn extension(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_member_overload("isSorted", "list_is_sorted", LIST_TYPE, vec![], is_sorted)?;
    env.add_member_overload("sum", "list_sum", LIST_TYPE, vec![], sum)?;
    env.add_member_overload("min", "list_min", LIST_TYPE, vec![], min)?;
    env.add_member_overload("max", "list_max", LIST_TYPE, vec![], max)?;
    env.add_member_overload(
        "indexOf",
        "list_a_index_of_int",
        LIST_TYPE,
        vec![DYN_TYPE],
        index_of,
    )?;
    env.add_member_overload(
        "lastIndexOf",
        "list_a_last_index_of_int",
        LIST_TYPE,
        vec![DYN_TYPE],
        last_index_of,
    )?;
    Ok(())
}

/// Argument `i` of an overload's call (`0`: the receiver).
pub(super) fn arg<'a, 'v>(
    args: &'a [CowVal<'_, 'v>],
    i: usize,
) -> Result<&'a (dyn Val + 'v), ExecutionError> {
    args.get(i)
        .map(|a| a.as_ref())
        .ok_or_else(ExecutionError::missing_argument_or_target)
}

/// The elements of `list`, borrowed from it. Errors: it is not a list.
pub(super) fn elements<'a, 'v>(
    list: &'a (dyn Val + 'v),
) -> Result<Vec<&'a (dyn Val + 'v)>, ExecutionError> {
    let iterable = list
        .as_iterable()
        .ok_or_else(|| ExecutionError::UnexpectedType {
            got: list.get_type().name().to_owned(),
            want: "list".to_owned(),
        })?;
    let mut items = iterable.iter();
    let mut out = Vec::new();
    while let Some(item) = items.next() {
        out.push(item);
    }
    Ok(out)
}

/// How `a` orders against `b`; `None` when they do not compare.
fn compare(a: &dyn Val, b: &dyn Val) -> Option<Ordering> {
    a.as_comparer().and_then(|c| c.compare(b).ok())
}

fn is_sorted<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let items = elements(arg(&args, 0)?)?;
    let sorted = items
        .windows(2)
        .all(|w| compare(w[0], w[1]) != Some(Ordering::Greater));
    Ok(CowVal::owned(cel::common::types::CelBool::from(sorted)))
}

fn sum<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let items = elements(arg(&args, 0)?)?;
    let Some((first, rest)) = items.split_first() else {
        return Ok(CowVal::owned(CelInt::from(0)));
    };
    let mut acc = first.clone_as_boxed();
    for item in rest {
        let adder = acc
            .as_adder()
            .ok_or_else(|| ExecutionError::UnexpectedType {
                got: acc.get_type().name().to_owned(),
                want: "int, uint, double or duration".to_owned(),
            })?;
        let next = adder.add(*item)?.as_ref().clone_as_boxed();
        acc = next;
    }
    Ok(CowVal::Owned(acc))
}

/// The element `min` or `max` picks: the first, unless a later one orders before it (`min`)
/// or after it (`max`).
fn extreme<'b, 'v>(
    args: Vec<CowVal<'b, 'v>>,
    name: &str,
    replace_when: Ordering,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let items = elements(arg(&args, 0)?)?;
    let mut result = *items.first().ok_or_else(|| {
        ExecutionError::function_error(name, format!("{name} called on empty list"))
    })?;
    for item in &items[1..] {
        if compare(result, *item) == Some(replace_when) {
            result = *item;
        }
    }
    Ok(CowVal::Owned(result.clone_as_boxed()))
}

fn min<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    extreme(args, "min", Ordering::Greater)
}

fn max<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    extreme(args, "max", Ordering::Less)
}

/// The index of the first (`last` false) or last element equal to `args[1]`, `-1` when none.
fn position<'b, 'v>(
    args: Vec<CowVal<'b, 'v>>,
    last: bool,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let items = elements(arg(&args, 0)?)?;
    let wanted = arg(&args, 1)?;
    let found = if last {
        items.iter().rposition(|i| i.equals(wanted))
    } else {
        items.iter().position(|i| i.equals(wanted))
    };
    Ok(CowVal::owned(CelInt::from(found.map_or(-1, |i| i as i64))))
}

fn index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    position(args, false)
}

fn last_index_of<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    position(args, true)
}
