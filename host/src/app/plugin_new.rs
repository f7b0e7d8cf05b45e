//! `wasm-apiserver plugin new NAME --lang rust|python|js`: write a plugin project that builds
//! with one command (`./build.sh`) and passes `plugin test` as written — the starting point of
//! the author's guide for each language. With `--policy`, an admission policy project instead
//! (world `admission-plugin` of `wit/admission/0.1.0`): one validating rule (a ConfigMap needs
//! an `owner` label, the label named by its settings), two fixtures for `plugin test`,
//! `build.sh` and a README.
//!
//! Every project has the source with one validation rule (`spec.message` is required), two
//! fixtures (a valid create, the 422), `build.sh` and a README. A Python or JavaScript project
//! carries a copy of its SDK (`wasm_apiserver/`, `sdk/`) and of the WIT (`wit/`), taken from
//! this binary, so it builds anywhere its toolchain installs (componentize-py from PyPI,
//! componentize-js from npm, pinned to the versions `plugins/build-languages.sh` uses). A Rust
//! project depends on `wasm-apiserver-sdk` by path (`--sdk-path`, default the source tree this
//! binary was built from).

use std::path::{Path, PathBuf};

/// The componentize-py release projects are built with (PyPI).
pub const COMPONENTIZE_PY_VERSION: &str = "0.25.1";
/// The componentize-js release projects are built with (npm).
pub const COMPONENTIZE_JS_VERSION: &str = "0.23.0";

/// What `plugin new` was asked for.
#[derive(Debug, Clone)]
pub struct Options {
    /// Project and component name (a DNS-1035 label).
    pub name: String,
    /// `rust`, `python` or `js`.
    pub lang: String,
    /// API group.
    pub group: String,
    /// Kind; derived from the name when `None`.
    pub kind: Option<String>,
    /// Parent directory of the project.
    pub dir: PathBuf,
    /// Rust: the SDK crate's directory.
    pub sdk_path: Option<PathBuf>,
    /// An admission policy project instead of a strategy.
    pub policy: bool,
}

const WIT: &str = include_str!("../../../wit/0.2.0/strategy.wit");
const ADMISSION_WIT: &str = include_str!("../../../wit/admission/0.1.0/admission.wit");
const README: &str = include_str!("plugin_new/common/README.md");
const FIXTURES: [(&str, &str); 2] = [
    (
        "fixtures/create-valid.json",
        include_str!("plugin_new/common/create-valid.json"),
    ),
    (
        "fixtures/create-without-message.json",
        include_str!("plugin_new/common/create-without-message.json"),
    ),
];
const RUST: [(&str, &str); 3] = [
    ("Cargo.toml", include_str!("plugin_new/rust/Cargo.toml")),
    ("src/lib.rs", include_str!("plugin_new/rust/lib.rs")),
    ("build.sh", include_str!("plugin_new/rust/build.sh")),
];
/// `--policy`, every language: the fixtures and the README.
const POLICY_COMMON: [(&str, &str); 3] = [
    (
        "fixtures/create-labelled.json",
        include_str!("plugin_new/policy/create-labelled.json"),
    ),
    (
        "fixtures/create-without-label.json",
        include_str!("plugin_new/policy/create-without-label.json"),
    ),
    ("README.md", include_str!("plugin_new/policy/README.md")),
];
/// `--policy --lang rust`.
const POLICY_RUST: [(&str, &str); 3] = [
    ("Cargo.toml", include_str!("plugin_new/policy/Cargo.toml")),
    ("src/lib.rs", include_str!("plugin_new/policy/lib.rs")),
    ("build.sh", include_str!("plugin_new/rust/build.sh")),
];
/// `--policy --lang python` (the SDK is [`PYTHON_SDK`]).
const POLICY_PYTHON: [(&str, &str); 3] = [
    ("app.py", include_str!("plugin_new/policy/app.py")),
    ("build.sh", include_str!("plugin_new/python/build.sh")),
    ("wit/admission.wit", ADMISSION_WIT),
];
/// `--policy --lang js`: the admission module of the SDK only (index.js binds the strategy
/// world, which a policy does not have).
const POLICY_JS: [(&str, &str); 5] = [
    ("app.js", include_str!("plugin_new/policy/app.js")),
    (
        "package.json",
        include_str!("plugin_new/policy/package.json"),
    ),
    ("build.sh", include_str!("plugin_new/js/build.sh")),
    ("wit/admission.wit", ADMISSION_WIT),
    (
        "sdk/admission.js",
        include_str!("../../../plugins/sdk-js/admission.js"),
    ),
];
const PYTHON: [(&str, &str); 3] = [
    ("app.py", include_str!("plugin_new/python/app.py")),
    ("build.sh", include_str!("plugin_new/python/build.sh")),
    ("wit/strategy.wit", WIT),
];
/// The Python SDK, copied into strategy and policy projects alike.
const PYTHON_SDK: [(&str, &str); 6] = [
    (
        "wasm_apiserver/__init__.py",
        include_str!("../../../plugins/sdk-python/wasm_apiserver/__init__.py"),
    ),
    (
        "wasm_apiserver/export.py",
        include_str!("../../../plugins/sdk-python/wasm_apiserver/export.py"),
    ),
    (
        "wasm_apiserver/field.py",
        include_str!("../../../plugins/sdk-python/wasm_apiserver/field.py"),
    ),
    (
        "wasm_apiserver/strategy.py",
        include_str!("../../../plugins/sdk-python/wasm_apiserver/strategy.py"),
    ),
    (
        "wasm_apiserver/validation.py",
        include_str!("../../../plugins/sdk-python/wasm_apiserver/validation.py"),
    ),
    (
        "wasm_apiserver/admission.py",
        include_str!("../../../plugins/sdk-python/wasm_apiserver/admission.py"),
    ),
];
const JS: [(&str, &str); 9] = [
    ("app.js", include_str!("plugin_new/js/app.js")),
    ("package.json", include_str!("plugin_new/js/package.json")),
    ("build.sh", include_str!("plugin_new/js/build.sh")),
    ("wit/strategy.wit", WIT),
    (
        "sdk/index.js",
        include_str!("../../../plugins/sdk-js/index.js"),
    ),
    (
        "sdk/field.js",
        include_str!("../../../plugins/sdk-js/field.js"),
    ),
    (
        "sdk/strategy.js",
        include_str!("../../../plugins/sdk-js/strategy.js"),
    ),
    (
        "sdk/validation.js",
        include_str!("../../../plugins/sdk-js/validation.js"),
    ),
    (
        "sdk/package.json",
        include_str!("../../../plugins/sdk-js/package.json"),
    ),
];

/// Run `plugin new`: 0 when the project was written, 1 (with the reason on stderr) when the
/// options are invalid or NAME/ exists. Errors: a file cannot be written.
pub fn run(o: &Options) -> anyhow::Result<i32> {
    match write(o) {
        Ok(dir) => {
            let what = match o.policy {
                true => format!("{} admission policy", o.lang),
                false => format!("{} plugin for {}", o.lang, o.group),
            };
            println!(
                "created {} ({what}): cd {} && ./build.sh && wasm-apiserver plugin test {}.wasm fixtures",
                dir.display(),
                dir.display(),
                o.name
            );
            Ok(0)
        }
        Err(NewError::Invalid(m)) => {
            eprintln!("error: {m}");
            Ok(1)
        }
        Err(NewError::Io(e)) => Err(e),
    }
}

enum NewError {
    Invalid(String),
    Io(anyhow::Error),
}

impl From<std::io::Error> for NewError {
    fn from(e: std::io::Error) -> Self {
        NewError::Io(e.into())
    }
}

/// The kind for a project name: `gadgets` → `Gadget`, `tea-pots` → `TeaPot`.
fn kind_for(name: &str) -> String {
    let singular = name.strip_suffix('s').unwrap_or(name);
    singular
        .split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

fn write(o: &Options) -> Result<PathBuf, NewError> {
    use wasm_apiserver_apimachinery::validation::{is_dns1035_label, is_dns1123_subdomain};
    let invalid = |m: String| NewError::Invalid(m);
    if let Some(p) = is_dns1035_label(&o.name).first() {
        return Err(invalid(format!("NAME {:?}: {p}", o.name)));
    }
    if let Some(p) = is_dns1123_subdomain(&o.group).first() {
        return Err(invalid(format!("--group {:?}: {p}", o.group)));
    }
    // The rule the server applies to a plugin's group (`plugin/describe.rs`).
    if !o.group.contains('.') {
        return Err(invalid(format!(
            "--group {:?}: must contain a dot, e.g. example.dev",
            o.group
        )));
    }
    // Cargo refuses a package named after a Rust keyword or a standard crate.
    const RESERVED: [&str; 40] = [
        "as", "async", "await", "break", "const", "continue", "crate", "dyn", "else", "enum",
        "extern", "false", "fn", "for", "if", "impl", "in", "let", "loop", "match", "mod", "move",
        "mut", "pub", "ref", "return", "self", "static", "struct", "super", "trait", "true",
        "type", "unsafe", "use", "where", "while", "std", "core", "test",
    ];
    if o.lang == "rust" && (RESERVED.contains(&o.name.as_str()) || o.name == "alloc") {
        return Err(invalid(format!(
            "NAME {:?}: Cargo does not accept it as a package name",
            o.name
        )));
    }
    let kind = o.kind.clone().unwrap_or_else(|| kind_for(&o.name));
    if !kind.starts_with(|c: char| c.is_ascii_uppercase())
        || !kind.chars().all(|c| c.is_ascii_alphanumeric())
    {
        return Err(invalid(format!(
            "--kind {kind:?}: must be UpperCamelCase ASCII letters and digits"
        )));
    }
    let singular = kind.to_ascii_lowercase();
    let plural = format!("{singular}s");
    let dir = o.dir.join(&o.name);
    if dir.exists() {
        return Err(invalid(format!("{} already exists", dir.display())));
    }
    let sdk_path = match o.lang.as_str() {
        "rust" => {
            let p = o
                .sdk_path
                .clone()
                .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../plugins/sdk"));
            let p = p.canonicalize().map_err(|e| {
                invalid(format!(
                    "the Rust SDK crate is not at {} ({e}): pass --sdk-path <wasm-apiserver>/plugins/sdk",
                    p.display()
                ))
            })?;
            // A TOML basic string.
            p.display()
                .to_string()
                .replace('\\', "\\\\")
                .replace('"', "\\\"")
        }
        _ => String::new(),
    };
    let none: &[(&str, &str)] = &[];
    // The project's own files, the SDK copied into it, the policy variant's own files.
    let (lang, source, toolchain, files, sdk, policy): (&str, &str, &str, &[_], &[_], &[_]) =
        match o.lang.as_str() {
            "rust" => (
                "Rust",
                "src/lib.rs",
                "cargo, wasm32-wasip2",
                &RUST,
                none,
                &POLICY_RUST,
            ),
            "python" => (
                "Python",
                "app.py",
                "componentize-py from PyPI",
                &PYTHON,
                &PYTHON_SDK,
                &POLICY_PYTHON,
            ),
            "js" => (
                "JavaScript",
                "app.js",
                "componentize-js from npm",
                &JS,
                none,
                &POLICY_JS,
            ),
            other => return Err(invalid(format!("--lang {other:?}: rust, python or js"))),
        };
    let fill = |text: &str| {
        text.replace("__NAME__", &o.name)
            .replace("__CRATE__", &o.name.replace('-', "_"))
            .replace("__GROUP__", &o.group)
            .replace("__KIND__", &kind)
            .replace("__SINGULAR__", &singular)
            .replace("__PLURAL__", &plural)
            .replace("__SDK_PATH__", &sdk_path)
            .replace("__PY_VERSION__", COMPONENTIZE_PY_VERSION)
            .replace("__JS_VERSION__", COMPONENTIZE_JS_VERSION)
            .replace("__LANG_FLAG__", &o.lang)
            .replace("__LANG__", lang)
            .replace("__SOURCE__", source)
            .replace("__TOOLCHAIN__", toolchain)
            .replace(
                "__WORLD__",
                match o.policy {
                    true => "admission-plugin",
                    false => "strategy-plugin",
                },
            )
    };
    let readme = [("README.md", README)];
    let all: Vec<&(&str, &str)> = match o.policy {
        true => policy.iter().chain(sdk).chain(&POLICY_COMMON).collect(),
        false => files
            .iter()
            .chain(sdk)
            .chain(&FIXTURES)
            .chain(&readme)
            .collect(),
    };
    for (path, text) in all {
        let target = dir.join(path);
        std::fs::create_dir_all(target.parent().expect("a file in the project"))?;
        // The SDK and the WIT are copied as they are; the project's own files are filled in.
        let vendored = path.starts_with("wit/")
            || path.starts_with("sdk/")
            || path.starts_with("wasm_apiserver/");
        std::fs::write(
            &target,
            if vendored {
                text.to_string()
            } else {
                fill(text)
            },
        )?;
        if path.ends_with(".sh") {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o755))?;
        }
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_come_from_names() {
        assert_eq!(kind_for("gadgets"), "Gadget");
        assert_eq!(kind_for("tea-pots"), "TeaPot");
        assert_eq!(kind_for("moose"), "Moose");
    }

    #[test]
    fn the_toolchain_versions_are_those_the_examples_are_built_with() {
        let script = include_str!("../../../plugins/build-languages.sh");
        assert!(
            script.contains(&format!(
                "COMPONENTIZE_PY_VERSION={COMPONENTIZE_PY_VERSION}\n"
            )),
            "plugins/build-languages.sh pins another componentize-py"
        );
        assert!(
            script.contains(&format!(
                "COMPONENTIZE_JS_VERSION={COMPONENTIZE_JS_VERSION}\n"
            )),
            "plugins/build-languages.sh pins another componentize-js"
        );
    }

    #[test]
    fn bad_names_are_refused_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap();
        for (name, group, kind) in [
            ("Gadgets", "example.dev", None),
            ("gadgets", "Example.dev", None),
            ("gadgets", "example.dev", Some("gadget")),
            ("gadgets", "example", None),
        ] {
            let o = Options {
                name: name.into(),
                lang: "python".into(),
                group: group.into(),
                kind: kind.map(String::from),
                dir: dir.path().into(),
                sdk_path: None,
                policy: false,
            };
            assert!(
                matches!(write(&o), Err(NewError::Invalid(_))),
                "{name} {group}"
            );
        }
        let rust_test = Options {
            name: "test".into(),
            lang: "rust".into(),
            group: "example.dev".into(),
            kind: None,
            dir: dir.path().into(),
            sdk_path: None,
            policy: false,
        };
        assert!(matches!(write(&rust_test), Err(NewError::Invalid(_))));
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}
