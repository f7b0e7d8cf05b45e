//! The later versions of cel-go's optional library (`cel/library.go`, `OptionalTypes` as kube
//! enables it at its latest version) beyond what the `cel` crate has:
//!
//! - `optional.unwrap(<list<optional<T>>>) <list<T>>` and `<list<optional<T>>>.unwrapOpt()`:
//!   the values present, in order;
//! - `<list<T>>.first()`, `<list<T>>.last()` `<optional<T>>`: none for an empty list.

use cel::common::types::{CelList, CelOptional, LIST_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

/// Register the functions on `env`.
pub fn extension(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_overload(
        "optional.unwrap",
        "optional_unwrap",
        vec![LIST_TYPE.to_owned()],
        unwrap,
    )?;
    env.add_member_overload("unwrapOpt", "list_unwrapOpt", LIST_TYPE, vec![], unwrap)?;
    env.add_member_overload("first", "list_first", LIST_TYPE, vec![], |a| end(a, true))?;
    env.add_member_overload("last", "list_last", LIST_TYPE, vec![], |a| end(a, false))
}

fn list<'a, 'v>(v: &'a CowVal<'_, 'v>) -> Result<&'a CelList<'v>, ExecutionError> {
    v.downcast_ref::<CelList>()
        .ok_or_else(|| ExecutionError::function_error("unwrapOpt", "not a list"))
}

fn unwrap<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let mut out: Vec<Box<dyn Val + 'v>> = Vec::new();
    for x in list(&args[0])?.inner() {
        let Some(opt) = x.downcast_ref::<CelOptional>() else {
            return Err(ExecutionError::function_error(
                "optional.unwrap",
                format!("value {:?} is not optional", x.get_type().name()),
            ));
        };
        if let Some(v) = opt.inner() {
            out.push(v.clone_as_boxed());
        }
    }
    Ok(CowVal::owned(CelList::from(out)))
}

fn end<'b, 'v>(args: Vec<CowVal<'b, 'v>>, first: bool) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let items = list(&args[0])?.inner();
    let item = if first { items.first() } else { items.last() };
    Ok(CowVal::owned(match item {
        Some(v) => CelOptional::of(v.clone_as_boxed()),
        None => CelOptional::none(),
    }))
}
