//! A test-only plugin that misbehaves on demand, for the host's fault tests.
//!
//! The annotation `misbehave` on the object picks the fault in every object hook:
//! `trap` (panic), `loop` (never returns), `alloc` (allocates until the memory cap),
//! `badjson` (returns text that is not JSON), `notobject` (returns a JSON array),
//! `rename` (changes `metadata.name`), `rekind` (changes `kind`). Anything else behaves.
//! It serves `v1` (stored) and `v2` (the same object); `misbehave-convert: trap` traps in
//! `convert` only.
//!
//! Built with `--features bad-describe` it describes an invalid resource; with
//! `--features wit-next` it is built against a WIT version this host does not know (`@0.4.0`); with
//! `--features strict` its validation requires the label `tier` (a second version of the same
//! plugin, for hot-reload tests); with `--features trap-describe` its `describe` traps; with
//! `--features other-plural` it serves `misbehavers2` (a resource change under the same name).

#[cfg(all(target_arch = "wasm32", not(feature = "wit-next")))]
mod component {
    use wasm_apiserver_sdk::bindings::exports::wasm_apiserver::strategy::strategy::Guest;
    use wasm_apiserver_sdk::bindings::wasm_apiserver::strategy::types::*;

    struct Misbehaving;

    impl Guest for Misbehaving {
        fn describe() -> ResourceDescription {
            wasm_apiserver_sdk::log::install_panic_hook();
            if cfg!(feature = "trap-describe") {
                panic!("describe traps in this build");
            }
            let d = super::description();
            ResourceDescription {
                group: d.group,
                // v1 stored, v2 served too (the same object under another apiVersion).
                versions: [(d.version.as_str(), true), ("v2", false)]
                    .map(|(name, storage)| ServedVersion {
                        name: name.into(),
                        served: true,
                        storage,
                        deprecated: false,
                        deprecation_warning: None,
                        openapi_schema: d.openapi_schema.to_string(),
                        printer_columns: Vec::new(),
                        selectable_fields: Vec::new(),
                    })
                    .into(),
                kind: d.kind,
                list_kind: d.list_kind,
                plural: d.plural,
                singular: d.singular,
                short_names: d.short_names,
                categories: d.categories,
                namespaced: d.namespaced,
                subresources: d.subresources,
                return_deleted_object: false,
                example: None,
            }
        }
        fn prepare_for_create(obj: String) -> Result<String, HookError> {
            Ok(super::misbehave(obj))
        }
        fn validate(obj: String) -> Vec<FieldError> {
            let strict = super::strict_errors(&obj);
            super::misbehave(obj);
            strict
                .into_iter()
                .map(|field| FieldError {
                    type_: ErrorType::Required,
                    field,
                    bad_value: None,
                    detail: "the strict version requires it".into(),
                })
                .collect()
        }
        fn warnings_on_create(obj: String) -> Vec<String> {
            super::misbehave(obj);
            Vec::new()
        }
        fn canonicalize(obj: String) -> Result<String, HookError> {
            Ok(super::misbehave(obj))
        }
        fn create_sequence(obj: String) -> Result<CreateOutcome, HookError> {
            // The four hooks in turn, each misbehaving as asked.
            let prepared = Self::prepare_for_create(obj)?;
            let errors = Self::validate(prepared.clone());
            if !errors.is_empty() {
                return Ok(CreateOutcome {
                    object: prepared,
                    errors,
                    warnings: Vec::new(),
                });
            }
            let warnings = Self::warnings_on_create(prepared.clone());
            Ok(CreateOutcome {
                object: Self::canonicalize(prepared)?,
                errors,
                warnings,
            })
        }
        fn allow_create_on_update() -> bool {
            false
        }
        fn allow_unconditional_update() -> bool {
            true
        }
        fn prepare_for_update(new: String, _old: String) -> Result<String, HookError> {
            Ok(super::misbehave(new))
        }
        fn validate_update(new: String, _old: String) -> Vec<FieldError> {
            super::misbehave(new);
            Vec::new()
        }
        fn warnings_on_update(new: String, _old: String) -> Vec<String> {
            super::misbehave(new);
            Vec::new()
        }
        fn update_sequence(new: String, old: String) -> Result<UpdateOutcome, HookError> {
            // The hooks in turn, each misbehaving as asked — and without the restore the
            // contract asks for, so the host's fallback to the separate hooks is exercised.
            let prepared = Self::prepare_for_update(new, old.clone())?;
            let errors = Self::validate_update(prepared.clone(), old.clone());
            if !errors.is_empty() {
                return Ok(UpdateOutcome {
                    object: prepared,
                    errors,
                    warnings: Vec::new(),
                });
            }
            let warnings = Self::warnings_on_update(prepared.clone(), old);
            Ok(UpdateOutcome {
                object: Self::canonicalize(prepared)?,
                errors,
                warnings,
            })
        }
        fn prepare_for_status_update(new: String, _old: String) -> Result<String, HookError> {
            Ok(super::misbehave(new))
        }
        fn validate_status_update(new: String, _old: String) -> Vec<FieldError> {
            super::misbehave(new);
            Vec::new()
        }
        fn warnings_on_status_update(new: String, _old: String) -> Vec<String> {
            super::misbehave(new);
            Vec::new()
        }
        fn check_graceful_delete(obj: String, _requested: Option<i64>) -> Option<i64> {
            super::misbehave(obj);
            None
        }
        fn validate_delete(old: String) -> Vec<FieldError> {
            super::misbehave(old);
            Vec::new()
        }
        fn printer_cells(obj: String) -> Vec<String> {
            super::misbehave(obj);
            Vec::new()
        }
        fn get_attrs(obj: String) -> Result<Attributes, HookError> {
            super::misbehave(obj);
            Ok(Attributes {
                labels: Vec::new(),
                fields: Vec::new(),
            })
        }
        fn convert(obj: String, desired_api_version: String) -> Result<String, HookError> {
            let mut v: serde_json::Value =
                serde_json::from_str(&super::misbehave_convert(obj)).unwrap_or_default();
            v["apiVersion"] = desired_api_version.into();
            Ok(v.to_string())
        }
    }

    wasm_apiserver_sdk::bindings::__export_strategy_bindings!(Misbehaving with_types_in wasm_apiserver_sdk::bindings);
}

#[cfg(all(target_arch = "wasm32", feature = "wit-next"))]
mod component {
    wit_bindgen::generate!({
        inline: "
            package wasm-apiserver:strategy@0.4.0;
            interface strategy { describe: func() -> string; }
            world strategy-plugin { export strategy; }
        ",
    });
    struct Next;
    impl exports::wasm_apiserver::strategy::strategy::Guest for Next {
        fn describe() -> String {
            String::new()
        }
    }
    export!(Next);
}

/// The resource this plugin claims to serve.
pub fn description() -> wasm_apiserver_sdk::ResourceDescription {
    let mut d = wasm_apiserver_sdk::ResourceDescription::new(
        "test.wasm-apiserver.dev",
        "v1",
        "Misbehaver",
        "misbehavers",
    );
    if cfg!(feature = "other-plural") {
        d.plural = "misbehavers2".into();
    }
    if cfg!(feature = "bad-describe") {
        d.plural = "Bad_Plural!".into();
        d.kind = "lower kind".into();
        d.group = "not a group".into();
    }
    d
}

/// With the `strict` feature: the field paths this version requires and the object lacks.
pub fn strict_errors(obj: &str) -> Vec<String> {
    if !cfg!(feature = "strict") {
        return Vec::new();
    }
    let v: serde_json::Value = serde_json::from_str(obj).unwrap_or_default();
    if v.pointer("/metadata/labels/tier").is_none() {
        vec!["metadata.labels[tier]".into()]
    } else {
        Vec::new()
    }
}

/// `convert`: the annotation `misbehave-convert` picks a fault of [`misbehave`] in this hook
/// only (so an object can be stored, then fail to convert); otherwise `misbehave`'s.
pub fn misbehave_convert(obj: String) -> String {
    let v: serde_json::Value = serde_json::from_str(&obj).unwrap_or_default();
    match v
        .pointer("/metadata/annotations/misbehave-convert")
        .and_then(|m| m.as_str())
    {
        Some("trap") => {
            wasm_apiserver_sdk::log::install_panic_hook();
            panic!("asked to trap in convert")
        }
        _ => misbehave(obj),
    }
}

/// Do what the object's `misbehave` annotation asks; otherwise return the object unchanged.
pub fn misbehave(obj: String) -> String {
    wasm_apiserver_sdk::log::install_panic_hook();
    let v: serde_json::Value = serde_json::from_str(&obj).unwrap_or_default();
    let mode = v
        .pointer("/metadata/annotations/misbehave")
        .and_then(|m| m.as_str())
        .unwrap_or_default()
        .to_string();
    match mode.as_str() {
        "trap" => panic!("asked to trap"),
        "loop" => loop {
            std::hint::black_box(());
        },
        "alloc" => {
            let mut hoard: Vec<Vec<u8>> = Vec::new();
            loop {
                hoard.push(vec![1u8; 1 << 20]);
                std::hint::black_box(&hoard);
            }
        }
        "badjson" => "{this is not json".into(),
        "notobject" => "[1, 2, 3]".into(),
        "rename" => {
            let mut v = v;
            v["metadata"]["name"] = serde_json::json!("someone-else");
            v.to_string()
        }
        "rekind" => {
            let mut v = v;
            v["kind"] = serde_json::json!("Other");
            v.to_string()
        }
        // What the host's WASI lets a guest see, written into annotations.
        "sandbox" => {
            let mut v = v;
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_secs().to_string())
                .unwrap_or_else(|e| e.to_string());
            let fs = match std::fs::read_dir("/") {
                Ok(_) => "readable".to_string(),
                Err(e) => format!("error: {}", e.kind()),
            };
            let net = match std::net::TcpStream::connect("127.0.0.1:80") {
                Ok(_) => "connected".to_string(),
                Err(e) => format!("error: {}", e.kind()),
            };
            let a = &mut v["metadata"]["annotations"];
            a["env"] = serde_json::json!(std::env::vars().count().to_string());
            a["args"] = serde_json::json!(std::env::args().count().to_string());
            a["now"] = serde_json::json!(now);
            a["fs"] = serde_json::json!(fs);
            a["net"] = serde_json::json!(net);
            eprintln!("written to stderr");
            v.to_string()
        }
        // Sleeping for an hour: the host refuses the timer instead of holding the thread.
        "sleep" => {
            std::thread::sleep(std::time::Duration::from_secs(3600));
            obj
        }
        // A panic after writing to stderr: the 500 quotes what was written.
        "stderr" => {
            eprintln!("Traceback (most recent call last): ValueError: bad widget");
            std::process::abort()
        }
        _ => obj,
    }
}
