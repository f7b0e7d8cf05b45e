//! What kube's `k8s.io/apiserver/pkg/storage/value/metrics.go` (`RecordTransformation`)
//! records of each transformation: its type (`from_storage`, `to_storage`), the prefix of the
//! transformer that ran (`k8s:enc:aesgcm:v1:`, a key's `<name>:`, `identity`, or `unknown`
//! when no prefix matched), how long it took and whether it failed. The storage crate has no
//! metrics registry: the host installs a [`Recorder`] that turns these into
//! `apiserver_storage_transformation_operations_total` and
//! `apiserver_storage_transformation_duration_seconds`.

use std::sync::OnceLock;
use std::time::Duration;

/// `(transformation_type, transformer_prefix, elapsed, ok)` of one transformation.
pub type Recorder = dyn Fn(&'static str, &str, Duration, bool) + Send + Sync;

static RECORDER: OnceLock<Box<Recorder>> = OnceLock::new();

/// Install the process's recorder (the first call wins; later ones are ignored).
pub fn set_recorder(recorder: Box<Recorder>) {
    let _ = RECORDER.set(recorder);
}

thread_local! {
    static PAUSED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Run `f` without recording its transformations (trial decryptions that are not the
/// server's reads, such as a reload's check).
pub fn unrecorded<T>(f: impl FnOnce() -> T) -> T {
    let was = PAUSED.with(|p| p.replace(true));
    let out = f();
    PAUSED.with(|p| p.set(was));
    out
}

/// Whether a recorder is installed (a transformation is not timed otherwise).
pub(crate) fn recording() -> bool {
    RECORDER.get().is_some() && !PAUSED.with(|p| p.get())
}

/// Record one transformation.
/// Record one transformation. kube labels an empty prefix `identity` on reads and leaves it
/// empty on writes (`RecordTransformation` in `value/transformer.go`).
pub(crate) fn record(kind: &'static str, prefix: &[u8], elapsed: Duration, ok: bool) {
    if !recording() {
        return;
    }
    if let Some(r) = RECORDER.get() {
        let prefix = if prefix.is_empty() && kind == "from_storage" {
            "identity".into()
        } else {
            String::from_utf8_lossy(prefix)
        };
        r(kind, &prefix, elapsed, ok);
    }
}
