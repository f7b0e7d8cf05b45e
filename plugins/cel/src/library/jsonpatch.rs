//! kube's JSON patch library (`k8s.io/apiserver/pkg/cel/library/jsonpatch.go`), for the paths
//! of a MutatingAdmissionPolicy's `JSONPatch` operations:
//!
//! - `jsonpatch.escapeKey(<string>) <string>`: a key as one JSON Pointer segment (RFC 6901
//!   §3: `~` as `~0`, then `/` as `~1`), e.g. `"/metadata/labels/" +
//!   jsonpatch.escapeKey("example.com/team")`.

use cel::common::types::CelString;
use cel::{DeclarationError, Env};

/// Register `jsonpatch.escapeKey` on `env`.
pub fn extension(env: &mut Env) -> Result<(), DeclarationError> {
    cel::add_overload!(env, fn escape_key: (CelString) -> CelString,
        name = "jsonpatch.escapeKey")?;
    Ok(())
}

fn escape_key(s: &CelString<'_>) -> CelString<'static> {
    CelString::from(s.inner().replace('~', "~0").replace('/', "~1"))
}
