//! Kubernetes' CEL libraries (`k8s.io/apiserver/pkg/cel/library`), registered on the
//! environment every [`crate::Expression`] compiles in. One file per library, named as kube's.

pub mod cidr;
pub mod format;
pub mod ip;
pub mod lists;
pub mod quantity;
pub mod regex;
pub mod semver;
pub mod sets;

use cel::{DeclarationError, Env};

/// Register every library this crate implements on `env` (the crate documentation's table says
/// which).
pub fn register(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_extension(ip::extension)?;
    env.add_extension(cidr::extension)?;
    env.add_extension(format::extension)?;
    env.add_extension(lists::extension)?;
    env.add_extension(quantity::extension)?;
    env.add_extension(regex::extension)?;
    env.add_extension(semver::extension)?;
    env.add_extension(sets::extension)
}
