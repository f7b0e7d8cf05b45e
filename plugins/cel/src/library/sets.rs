//! cel-go's sets extension as kube enables it (`ext.Sets()`, kube 1.29): lists taken as sets,
//! compared by CEL equality.
//!
//! - `sets.contains(<list>, <list>) <bool>`: every element of the second is in the first;
//! - `sets.equivalent(<list>, <list>) <bool>`: each contains the other (duplicates ignored);
//! - `sets.intersects(<list>, <list>) <bool>`: some element is in both.

use super::lists::{arg, elements};
use cel::common::types::{CelBool, LIST_TYPE};
use cel::common::value::{CowVal, Val};
use cel::{DeclarationError, Env, ExecutionError};

/// Register the sets functions on `env`.
pub fn extension(env: &mut Env) -> Result<(), DeclarationError> {
    let lists = || vec![LIST_TYPE, LIST_TYPE];
    env.add_overload(
        "sets.contains",
        "list_sets_contains_list",
        lists(),
        contains,
    )?;
    env.add_overload(
        "sets.equivalent",
        "list_sets_equivalent_list",
        lists(),
        equivalent,
    )?;
    env.add_overload(
        "sets.intersects",
        "list_sets_intersects_list",
        lists(),
        intersects,
    )?;
    Ok(())
}

type Elements<'a, 'v> = Vec<&'a (dyn Val + 'v)>;

/// Both lists' elements, borrowed.
type Both<'a, 'v> = (Elements<'a, 'v>, Elements<'a, 'v>);

fn both<'a, 'v>(args: &'a [CowVal<'_, 'v>]) -> Result<Both<'a, 'v>, ExecutionError> {
    Ok((elements(arg(args, 0)?)?, elements(arg(args, 1)?)?))
}

/// Whether every element of `b` equals some element of `a`.
fn includes_all(a: &Elements<'_, '_>, b: &Elements<'_, '_>) -> bool {
    b.iter().all(|x| a.iter().any(|y| y.equals(*x)))
}

fn contains<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (a, b) = both(&args)?;
    Ok(CowVal::owned(CelBool::from(includes_all(&a, &b))))
}

fn equivalent<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (a, b) = both(&args)?;
    Ok(CowVal::owned(CelBool::from(
        includes_all(&a, &b) && includes_all(&b, &a),
    )))
}

fn intersects<'b, 'v>(args: Vec<CowVal<'b, 'v>>) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let (a, b) = both(&args)?;
    Ok(CowVal::owned(CelBool::from(
        b.iter().any(|x| a.iter().any(|y| y.equals(*x))),
    )))
}
