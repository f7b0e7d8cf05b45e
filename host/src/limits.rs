//! Bounds on the documents a client makes the server build, so that no request within them can
//! exhaust the server's memory or a worker's stack:
//!
//! - [`MAX_BODY_BYTES`]: a request body (kube-apiserver's `--max-request-bytes`,
//!   `MaxRequestBodyBytes` in `k8s.io/apiserver/pkg/server/config.go`, 3 MiB);
//! - [`MAX_OBJECT_BYTES`]: the JSON of an object a patch produces — no patch may build an
//!   object larger than a body the server would accept for a PUT;
//! - [`MAX_DEPTH`]: how deeply arrays and objects nest in any JSON document the server decodes
//!   or a patch produces. kube-apiserver decodes with Go's `encoding/json` limit of 10,000; here
//!   every strategy plugin re-parses objects with `serde_json`, whose recursion limit is 128,
//!   so the host refuses deeper documents up front, with room to spare;
//! - [`MAX_JSON_PATCH_OPERATIONS`] and [`JSON_PATCH_MAX_COPY_BYTES`]: a JSON patch's operations
//!   and the bytes its `copy` operations may add (`maxJSONPatchOperations` in
//!   `k8s.io/apiserver/pkg/endpoints/handlers/patch.go`, `JSONPatchMaxCopyBytes` in
//!   `server/config.go`; the fix of CVE-2019-1002100).
//!
//! The measuring functions here walk a document with an explicit stack, so a document of any
//! depth is measured without recursion. [`apply_json_patch`] applies an RFC 6902 patch within
//! these bounds, for PATCH requests and for MutatingAdmissionPolicies alike.

use serde_json::Value;

/// The largest request body accepted, bytes (3 MiB, kube-apiserver's default).
pub const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;

/// The largest object JSON a patch may produce, bytes (the body limit).
pub const MAX_OBJECT_BYTES: usize = MAX_BODY_BYTES;

/// The deepest nesting of arrays and objects accepted in a JSON document (the top-level
/// object counts 1).
pub const MAX_DEPTH: usize = 100;

/// The most operations one JSON patch may hold (`maxJSONPatchOperations`).
pub const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

/// The most bytes the `copy` operations of one JSON patch may add, summed over the patch
/// (`JSONPatchMaxCopyBytes`: the body limit).
pub const JSON_PATCH_MAX_COPY_BYTES: usize = MAX_BODY_BYTES;

/// How deeply arrays and objects nest in `v`: 0 for a scalar, 1 for `{}` or `[1]`, 2 for
/// `{"a":{}}`. Iterative; stops counting once `stop_above` is exceeded (returns a value
/// greater than it), so measuring a hostile document costs at most its size.
pub fn depth(v: &Value, stop_above: usize) -> usize {
    let mut deepest = 0;
    let mut stack: Vec<(&Value, usize)> = vec![(v, 0)];
    while let Some((v, d)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match v {
            Value::Array(a) => Box::new(a.iter()),
            Value::Object(o) => Box::new(o.values()),
            _ => continue,
        };
        let d = d + 1;
        deepest = deepest.max(d);
        if deepest > stop_above {
            return deepest;
        }
        stack.extend(children.map(|c| (c, d)));
    }
    deepest
}

/// The length of `v`'s compact JSON if it is at most `limit` bytes; `None` when it is longer.
/// Stops writing at the limit, so measuring a huge document costs at most `limit` bytes of
/// work. `v` must be within [`MAX_DEPTH`] (serialization recurses).
pub fn json_len_within(v: &Value, limit: usize) -> Option<usize> {
    struct Counter {
        n: usize,
        limit: usize,
    }
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.n += buf.len();
            if self.n > self.limit {
                return Err(std::io::Error::other("over the limit"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut c = Counter { n: 0, limit };
    serde_json::to_writer(&mut c, v).ok().map(|_| c.n)
}

/// Why a document is outside the bounds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Exceeded {
    /// Nested deeper than [`MAX_DEPTH`].
    Depth,
    /// Its JSON is longer than the given limit, bytes.
    Size(usize),
}

/// Check a produced object against [`MAX_DEPTH`] and [`MAX_OBJECT_BYTES`].
pub fn check_object(v: &Value) -> Result<(), Exceeded> {
    if depth(v, MAX_DEPTH) > MAX_DEPTH {
        return Err(Exceeded::Depth);
    }
    if json_len_within(v, MAX_OBJECT_BYTES).is_none() {
        return Err(Exceeded::Size(MAX_OBJECT_BYTES));
    }
    Ok(())
}

/// A plugin call whose input JSON is at least this long and that runs out of memory is a
/// request too large for the plugin (413), not a plugin fault (500).
pub const LARGE_INPUT_BYTES: usize = 1 << 20;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// `[[[…]]]` nested `n` deep, built and dropped without recursion.
    fn nested(n: usize) -> Value {
        let mut v = json!(1);
        for _ in 0..n {
            v = Value::Array(vec![v]);
        }
        v
    }

    fn drop_iteratively(mut v: Value) {
        while let Value::Array(mut a) = v {
            v = a.pop().unwrap_or(Value::Null);
        }
    }

    #[test]
    fn depth_counts_containers() {
        assert_eq!(depth(&json!(1), 10), 0);
        assert_eq!(depth(&json!({}), 10), 1);
        assert_eq!(depth(&json!({"a": [1, {"b": {}}]}), 10), 4);
        assert_eq!(depth(&nested(100), 1000), 100);
    }

    #[test]
    fn depth_of_a_hostile_document_stops_early_without_recursion() {
        let v = nested(1_000_000);
        assert_eq!(depth(&v, MAX_DEPTH), MAX_DEPTH + 1);
        drop_iteratively(v);
    }

    #[test]
    fn json_len_is_exact_or_none() {
        let v = json!({"a": "x\"y", "b": [1, 2]});
        let n = serde_json::to_vec(&v).unwrap().len();
        assert_eq!(json_len_within(&v, n), Some(n));
        assert_eq!(json_len_within(&v, n - 1), None);
    }

    #[test]
    fn objects_over_the_bounds() {
        assert_eq!(check_object(&nested(MAX_DEPTH)), Ok(()));
        assert_eq!(check_object(&nested(MAX_DEPTH + 1)), Err(Exceeded::Depth));
        let big = json!({"data": "x".repeat(MAX_OBJECT_BYTES)});
        assert_eq!(check_object(&big), Err(Exceeded::Size(MAX_OBJECT_BYTES)));
    }
}

/// RFC 6902 JSON patch, one operation at a time, with kube-apiserver's guards
/// (`handlers/patch.go` `applyJSPatch` over `evanphx/json-patch` v4):
/// - a value an `add`, `replace`, `move` or `copy` would place is measured first: one that
///   would nest the document deeper than [`MAX_DEPTH`] is refused before it is built
///   (so no operation can build a document too deep to drop or serialize);
/// - the bytes `copy` operations add are summed and capped at
///   [`JSON_PATCH_MAX_COPY_BYTES`] (json-patch's `AccumulatedCopySizeLimit`, with its
///   message), so a small patch cannot double a value into gigabytes;
/// - `test` of a path that does not exist compares against `null`, as json-patch v4 does.
///
/// Errors: why, naming the operation (`operation '/<i>' failed at path …`), or the limit.
pub fn apply_json_patch(
    cur: &Value,
    ops: &[json_patch::PatchOperation],
) -> Result<Value, PatchFailure> {
    use json_patch::PatchOperation;
    let failed = |message: String| PatchFailure {
        message,
        test_failed: false,
    };
    let mut doc = cur.clone();
    let mut copied = 0usize;
    let placed_too_deep = |path: &json_patch::jsonptr::Pointer, v: &Value| {
        path.count() + depth(v, MAX_DEPTH) > MAX_DEPTH
    };
    for (i, op) in ops.iter().enumerate() {
        match op {
            PatchOperation::Add(o) if placed_too_deep(&o.path, &o.value) => {
                return Err(failed(too_deep_message()))
            }
            PatchOperation::Replace(o) if placed_too_deep(&o.path, &o.value) => {
                return Err(failed(too_deep_message()))
            }
            PatchOperation::Move(o) => {
                if let Ok(v) = doc.pointer(o.from.as_str()).ok_or(()) {
                    if placed_too_deep(&o.path, v) {
                        return Err(failed(too_deep_message()));
                    }
                }
            }
            PatchOperation::Copy(o) => {
                if let Ok(v) = doc.pointer(o.from.as_str()).ok_or(()) {
                    if placed_too_deep(&o.path, v) {
                        return Err(failed(too_deep_message()));
                    }
                    // The document is bounded (stored object + body + earlier copies), so
                    // measuring the value in full is bounded too.
                    let size = json_len_within(v, usize::MAX).unwrap_or(usize::MAX);
                    copied = copied.saturating_add(size);
                    if copied > JSON_PATCH_MAX_COPY_BYTES {
                        return Err(failed(format!(
                            "Unable to complete the copy, the accumulated size increase of copy is {copied}, exceeding the limit {}",
                            JSON_PATCH_MAX_COPY_BYTES
                        )));
                    }
                }
            }
            PatchOperation::Test(o)
                if o.value.is_null() && doc.pointer(o.path.as_str()).is_none() =>
            {
                continue;
            }
            _ => {}
        }
        json_patch::patch_unsafe(&mut doc, std::slice::from_ref(op)).map_err(|e| PatchFailure {
            message: format!("operation '/{i}' failed at path '{}': {}", e.path, e.kind),
            test_failed: matches!(e.kind, json_patch::PatchErrorKind::TestFailed),
        })?;
    }
    Ok(doc)
}

/// Why [`apply_json_patch`] failed.
#[derive(Debug)]
pub struct PatchFailure {
    pub message: String,
    /// A `test` operation did not hold (a MutatingAdmissionPolicy's patch then changes
    /// nothing, as kube's `ErrTestFailed` case).
    pub test_failed: bool,
}

/// The message of a patch that would nest the document too deep.
pub fn too_deep_message() -> String {
    format!("the patched object nests deeper than the limit of {MAX_DEPTH} levels")
}
