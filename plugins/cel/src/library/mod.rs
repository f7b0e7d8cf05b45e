//! Kubernetes' CEL libraries (`k8s.io/apiserver/pkg/cel/library`), registered on the
//! environment every [`crate::Expression`] compiles in. One file per library, named as kube's.

use cel::{DeclarationError, Env};

/// `Val` and `StaticVal` for a library's opaque value type `$t` (`Clone`, `Debug`) of CEL type
/// `$cel_type`: two values are equal when `$eq(a, b)` holds (`PartialEq` by default).
macro_rules! opaque_val {
    ($t:ty, $cel_type:expr) => {
        opaque_val!($t, $cel_type, |a: &$t, b: &$t| a == b);
    };
    ($t:ty, $cel_type:expr, $eq:expr) => {
        impl cel::common::value::Val for $t {
            fn get_type(&self) -> &cel::common::types::Type {
                <Self as cel::common::value::Val>::cel_type()
            }
            fn cel_type() -> &'static cel::common::types::Type {
                &$cel_type
            }
            fn equals(&self, other: &dyn cel::common::value::Val) -> bool {
                other.downcast_ref::<$t>().is_some_and(|o| $eq(self, o))
            }
            fn clone_as_boxed<'v>(&self) -> Box<dyn cel::common::value::Val + 'v> {
                Box::new(self.clone())
            }
            fn as_any(&self) -> Option<&dyn std::any::Any> {
                Some(self)
            }
        }

        impl cel::common::value::StaticVal for $t {}
    };
}
pub(crate) use opaque_val;

pub mod authz;
pub mod cidr;
pub mod comprehensions;
pub mod format;
pub mod ip;
pub mod jsonpatch;
pub mod lists;
pub mod optionals;
pub mod quantity;
pub mod regex;
pub mod semver;
pub mod sets;
pub mod urls;

#[cfg(test)]
mod tests;

/// Register every library this crate implements on `env` (the crate documentation's table says
/// which).
pub fn register(env: &mut Env) -> Result<(), DeclarationError> {
    // cel-go's `ext.Strings` as kube enables it (version 2); the `cel` crate's is version 3,
    // whose `reverse` the checker does not declare.
    env.add_extension(cel::extensions::strings)?;
    env.add_extension(authz::extension)?;
    env.add_extension(comprehensions::extension)?;
    env.add_extension(ip::extension)?;
    env.add_extension(jsonpatch::extension)?;
    env.add_extension(cidr::extension)?;
    env.add_extension(format::extension)?;
    env.add_extension(lists::extension)?;
    env.add_extension(optionals::extension)?;
    env.add_extension(quantity::extension)?;
    env.add_extension(regex::extension)?;
    env.add_extension(semver::extension)?;
    env.add_extension(sets::extension)?;
    env.add_extension(urls::extension)
}
