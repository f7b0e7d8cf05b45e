//! The checks a component passes before anything of it runs: WebAssembly component header,
//! the exported contract and its version, the imports — and why a load fails ([`LoadError`]).

use std::path::PathBuf;
use wasmtime::component::Component;
use wasmtime::Engine;

/// The WIT package this host implements.
pub const WIT_PACKAGE: &str = "wasm-apiserver:strategy";
/// The newest WIT version this host implements (`wit/0.3.0/strategy.wit`); it serves every
/// version in [`super::wit::VERSIONS`].
pub const WIT_VERSION: &str = "0.3.0";

/// Why a plugin did not load. The `Display` form names the plugin and the reason.
#[derive(Debug, thiserror::Error)]
#[error("plugin {plugin:?}: {reason}")]
pub struct LoadError {
    /// Plugin name (file stem).
    pub plugin: String,
    /// What was wrong.
    pub reason: LoadErrorKind,
}

/// The reasons a plugin fails to load.
#[derive(Debug, thiserror::Error)]
pub enum LoadErrorKind {
    /// The file could not be read.
    #[error("cannot read {}: {source}", path.file_name().map(|n| n.to_string_lossy()).unwrap_or_default())]
    Io {
        /// File path.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The bytes are not WebAssembly.
    #[error("not a WebAssembly file (no \\0asm header)")]
    NotWasm,
    /// A core module where a component is required.
    #[error(
        "is a core WebAssembly module, not a component: build it with \
         `cargo build --target wasm32-wasip2` (or wrap it with `wasm-tools component new`)"
    )]
    CoreModule,
    /// wasmtime refused to compile it.
    #[error("does not compile: {0}")]
    Compile(String),
    /// Built against a WIT version this host does not implement.
    #[error(
        "was built against {WIT_PACKAGE}@{found}, but this host implements {}; rebuild it \
         against wit/{WIT_VERSION}/",
        implemented_versions()
    )]
    WitVersion {
        /// The version the component exports.
        found: String,
    },
    /// Does not export the strategy interface at all.
    #[error("does not export {WIT_PACKAGE}/strategy (it exports: {exports})")]
    NotAStrategy {
        /// The component's export names.
        exports: String,
    },
    /// Imports something the host does not provide.
    #[error("imports {0}, which this host does not provide (plugins may import only {WIT_PACKAGE}/host, {ADMISSION_PACKAGE}/host and WASI)")]
    ForbiddenImport(String),
    /// Instantiation or a load-time call failed.
    #[error("{0}")]
    Instantiate(String),
    /// The self-description is invalid.
    #[error("invalid self-description: {}", .0.join("; "))]
    Describe(Vec<String>),
    /// The smoke run on the plugin's example failed.
    #[error("smoke test on its example failed: {0}")]
    Smoke(String),
    /// A configured component (`configured-strategy-plugin`, 0.3) where a plain strategy is
    /// required, or the reverse; an admission policy where a strategy is required, or the
    /// reverse.
    #[error("{0}")]
    WrongWorld(String),
    /// An admission policy built against a version of `wasm-apiserver:admission` this host
    /// does not implement.
    #[error(
        "was built against {ADMISSION_PACKAGE}@{found}, but this host implements \
         {ADMISSION_PACKAGE}@{ADMISSION_VERSION}; rebuild it against wit/admission/{ADMISSION_VERSION}/"
    )]
    AdmissionWitVersion {
        /// The version the component exports.
        found: String,
    },
}

/// The admission contract this host implements (`wit/admission/0.1.0/admission.wit`).
pub const ADMISSION_PACKAGE: &str = super::wit::admission_v0_1::PACKAGE;
/// Its version.
pub const ADMISSION_VERSION: &str = super::wit::admission_v0_1::VERSION;

/// The version of `wasm-apiserver:admission/admission@X.Y.Z` the component exports, if it
/// exports it: `Some(Ok)` when this host implements a compatible version (the caret rule of
/// [`check_exports`]).
pub(super) fn admission_export(
    engine: &Engine,
    c: &Component,
) -> Option<Result<String, LoadErrorKind>> {
    let prefix = format!("{ADMISSION_PACKAGE}/admission@");
    let found = c
        .component_type()
        .exports(engine)
        .find_map(|(n, _)| n.strip_prefix(&prefix).map(str::to_string))?;
    Some(if compatible(&found, ADMISSION_VERSION) {
        Ok(found)
    } else {
        Err(LoadErrorKind::AdmissionWitVersion { found })
    })
}

/// `wasm-apiserver:strategy@0.1.0, wasm-apiserver:strategy@0.2.0 and …`: every version this
/// host implements, for messages.
fn implemented_versions() -> String {
    let all: Vec<String> = super::wit::VERSIONS
        .iter()
        .map(|v| format!("{WIT_PACKAGE}@{v}"))
        .collect();
    match all.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => all.join(""),
    }
}

/// `\0asm` + version 1 is a core module; `\0asm` + `0d 00 01 00` is a component (layer 1).
pub fn check_header(bytes: &[u8]) -> Result<(), LoadErrorKind> {
    if bytes.len() < 8 || &bytes[..4] != b"\0asm" {
        return Err(LoadErrorKind::NotWasm);
    }
    if bytes[4..8] == [1, 0, 0, 0] {
        return Err(LoadErrorKind::CoreModule);
    }
    Ok(())
}

/// Find `wasm-apiserver:strategy/strategy@X.Y.Z` (or, from 0.3, `…/configured@X.Y.Z`) among
/// the exports; accept X.Y.Z compatible with one of the versions this host implements
/// ([`super::wit::VERSIONS`]: same major, and same minor while major is 0). Returns the version
/// found and whether the component is a configured one.
pub(super) fn check_exports(
    engine: &Engine,
    c: &Component,
) -> Result<(String, bool), LoadErrorKind> {
    let ty = c.component_type();
    let names: Vec<String> = ty.exports(engine).map(|(n, _)| n.to_string()).collect();
    let plain = format!("{WIT_PACKAGE}/strategy@");
    let configured = format!("{WIT_PACKAGE}/configured@");
    let found = names
        .iter()
        .find_map(|n| n.strip_prefix(&plain).map(|v| (v, false)))
        .or_else(|| {
            names
                .iter()
                .find_map(|n| n.strip_prefix(&configured).map(|v| (v, true)))
        });
    let Some((found, is_configured)) = found else {
        return Err(LoadErrorKind::NotAStrategy {
            exports: if names.is_empty() {
                "nothing".into()
            } else {
                names.join(", ")
            },
        });
    };
    if super::wit::VERSIONS
        .iter()
        .any(|ours| compatible(found, ours))
    {
        Ok((found.to_string(), is_configured))
    } else {
        Err(LoadErrorKind::WitVersion {
            found: found.to_string(),
        })
    }
}

/// Whether a component built against WIT `found` runs on a host implementing `ours`: `ours`
/// must satisfy Cargo's caret requirement `^<found major>.<found minor>.0` — the same major
/// and, while it is 0, the same minor; a host newer within that range serves older
/// components. A version that does not parse is incompatible.
fn compatible(found: &str, ours: &str) -> bool {
    let (Ok(found), Ok(ours)) = (semver::Version::parse(found), semver::Version::parse(ours))
    else {
        return false;
    };
    let req = semver::VersionReq {
        comparators: vec![semver::Comparator {
            op: semver::Op::Caret,
            major: found.major,
            minor: Some(found.minor),
            patch: Some(0),
            pre: semver::Prerelease::EMPTY,
        }],
    };
    req.matches(&ours)
}

/// The WASI packages `wasmtime_wasi::p2::add_to_linker_sync` defines (every 0.2.x import of
/// them resolves to its 0.2 definitions by semver).
const PROVIDED_WASI: [&str; 6] = [
    "wasi:cli/",
    "wasi:clocks/",
    "wasi:filesystem/",
    "wasi:io/",
    "wasi:random/",
    "wasi:sockets/",
];

/// Define every import the host does not provide (`wasi:http`, …) as functions that trap when
/// called, so a runtime that links them but never calls them (StarlingMonkey imports
/// `wasi:http`) loads. Unlike wasmtime's `define_unknown_imports_as_traps`, which stubs an
/// import under its exact name, this leaves the imports the linker resolves by semver (a
/// component's `wasi:cli/environment@0.2.9` to the host's 0.2.12) to those definitions.
pub(super) fn stub_unknown_imports<T: 'static>(
    engine: &Engine,
    linker: &mut wasmtime::component::Linker<T>,
    c: &Component,
    package: &str,
) -> wasmtime::Result<()> {
    use wasmtime::component::types::ComponentItem;
    use wasmtime::component::ResourceType;
    for (name, item) in c.component_type().imports(engine) {
        let provided = name.starts_with(&format!("{package}/"))
            || PROVIDED_WASI
                .iter()
                .any(|p| name.starts_with(p) && name.contains("@0.2."));
        if provided {
            continue;
        }
        let instance = match item.ty {
            ComponentItem::ComponentInstance(instance) => instance,
            // A bare function import.
            ComponentItem::ComponentFunc(_) => {
                let what = name.to_string();
                linker.root().func_new(name, move |_, _, _, _| {
                    wasmtime::bail!("{what} is not provided to strategy plugins")
                })?;
                continue;
            }
            _ => continue,
        };
        let mut defs = linker.instance(name)?;
        for (export, item) in instance.exports(engine) {
            match item.ty {
                ComponentItem::ComponentFunc(_) => {
                    let what = format!("{name}#{export}");
                    defs.func_new(export, move |_, _, _, _| {
                        wasmtime::bail!("{what} is not provided to strategy plugins")
                    })?;
                }
                ComponentItem::Resource(_) => {
                    defs.resource(export, ResourceType::host::<()>(), |_, _| Ok(()))?
                }
                _ => {}
            }
        }
    }
    Ok(())
}

/// Every import is WASI or of `package` (the contract the component exports: a strategy
/// imports `wasm-apiserver:strategy/host`, a policy `wasm-apiserver:admission/host`).
pub(super) fn check_imports(
    engine: &Engine,
    c: &Component,
    package: &str,
) -> Result<(), LoadErrorKind> {
    for (name, _) in c.component_type().imports(engine) {
        let ours = name.starts_with(&format!("{package}/"));
        if !ours && !name.starts_with("wasi:") {
            return Err(LoadErrorKind::ForbiddenImport(name.to_string()));
        }
    }
    Ok(())
}
