//! Field paths and field errors, mirroring `k8s.io/apimachinery/pkg/util/validation/field`
//! (`path.go`, `errors.go`). A plugin's validation returns an [`ErrorList`]; the host turns it
//! into a 422 `Invalid` Status whose `details.causes` carry one entry per error.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// A field path such as `spec.containers[0].image` or `metadata.labels[app]`
/// (`field.Path`). Cheap to clone; build with [`Path::new`], [`Path::child`], [`Path::index`]
/// and [`Path::key`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Path(String);

impl Path {
    /// A root path, e.g. `Path::new("spec")`.
    pub fn new(root: &str) -> Path {
        Path(root.to_string())
    }

    /// `spec` → `spec.containers`.
    pub fn child(&self, name: &str) -> Path {
        if self.0.is_empty() {
            Path(name.to_string())
        } else {
            self.extended(&[".", name])
        }
    }

    /// `spec.containers` → `spec.containers[0]`.
    pub fn index(&self, i: usize) -> Path {
        // Decimal digits of `i`, without the formatting machinery (paths are built per field).
        let mut digits = [0u8; 20];
        let mut n = i;
        let mut start = digits.len();
        loop {
            start -= 1;
            digits[start] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        let digits = std::str::from_utf8(&digits[start..]).expect("ASCII digits");
        self.extended(&["[", digits, "]"])
    }

    /// `metadata.labels` → `metadata.labels[app]` (map keys are printed bare, as Kubernetes does).
    pub fn key(&self, k: &str) -> Path {
        self.extended(&["[", k, "]"])
    }

    /// This path followed by `parts`, in one allocation.
    fn extended(&self, parts: &[&str]) -> Path {
        let len = self.0.len() + parts.iter().map(|p| p.len()).sum::<usize>();
        let mut s = String::with_capacity(len);
        s.push_str(&self.0);
        for p in parts {
            s.push_str(p);
        }
        Path(s)
    }

    /// The path as Kubernetes prints it.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// `field.ErrorType` (`k8s.io/apimachinery/pkg/util/validation/field/errors.go`): what kind of problem a
/// [`FieldError`] reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ErrorType {
    /// `FieldValueRequired`.
    Required,
    /// `FieldValueInvalid`.
    Invalid,
    /// `FieldValueDuplicate`.
    Duplicate,
    /// `FieldValueNotSupported`.
    NotSupported,
    /// `FieldValueForbidden`.
    Forbidden,
    /// `FieldValueTooLong`.
    TooLong,
    /// `FieldValueTooMany`.
    TooMany,
    /// `InternalError`.
    Internal,
    /// `FieldValueTypeInvalid`.
    TypeInvalid,
    /// `FieldValueNotFound`.
    NotFound,
}

impl ErrorType {
    /// The `metav1.CauseType` a Status cause carries as `reason`.
    pub fn cause_type(self) -> &'static str {
        match self {
            ErrorType::Required => "FieldValueRequired",
            ErrorType::Invalid => "FieldValueInvalid",
            ErrorType::Duplicate => "FieldValueDuplicate",
            ErrorType::NotSupported => "FieldValueNotSupported",
            ErrorType::Forbidden => "FieldValueForbidden",
            ErrorType::TooLong => "FieldValueTooLong",
            ErrorType::TooMany => "FieldValueTooMany",
            ErrorType::Internal => "InternalError",
            ErrorType::TypeInvalid => "FieldValueTypeInvalid",
            ErrorType::NotFound => "FieldValueNotFound",
        }
    }

    /// `ErrorType.String()`: `Required value`, `Invalid value`, …
    pub fn description(self) -> &'static str {
        match self {
            ErrorType::Required => "Required value",
            ErrorType::Invalid | ErrorType::TypeInvalid => "Invalid value",
            ErrorType::Duplicate => "Duplicate value",
            ErrorType::NotSupported => "Unsupported value",
            ErrorType::Forbidden => "Forbidden",
            ErrorType::TooLong => "Too long",
            ErrorType::TooMany => "Too many",
            ErrorType::Internal => "Internal error",
            ErrorType::NotFound => "Not found",
        }
    }
}

/// One validation error (`field.Error`): type, path, the offending value (JSON) and a detail.
/// Serialized as a `metav1.StatusCause`-like record (`type`, `field`, `badValue`, `detail`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldError {
    /// What is wrong.
    #[serde(rename = "type")]
    pub error_type: ErrorType,
    /// Where, e.g. `spec.containers[0].image`.
    pub field: String,
    /// The offending value.
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "badValue")]
    pub bad_value: Option<Value>,
    /// Detail.
    #[serde(default)]
    pub detail: String,
}

impl FieldError {
    /// `field.Error.ErrorBody()`: e.g. `Invalid value: "x": must be …`, `Required value`.
    pub fn body(&self) -> String {
        let mut s = match (&self.error_type, &self.bad_value) {
            (
                ErrorType::Required
                | ErrorType::Forbidden
                | ErrorType::TooLong
                | ErrorType::Internal,
                _,
            )
            | (_, None) => self.error_type.description().to_string(),
            (t, Some(v)) => {
                let shown = match v {
                    Value::String(s) => format!("{s:?}"),
                    other => other.to_string(),
                };
                format!("{}: {shown}", t.description())
            }
        };
        if !self.detail.is_empty() {
            s.push_str(": ");
            s.push_str(&self.detail);
        }
        s
    }
}

impl fmt::Display for FieldError {
    /// `field.Error.Error()`: `<field>: <body>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.field.is_empty() {
            f.write_str(&self.body())
        } else {
            write!(f, "{}: {}", self.field, self.body())
        }
    }
}

/// `field.ErrorList`.
pub type ErrorList = Vec<FieldError>;

fn err(
    error_type: ErrorType,
    path: &Path,
    bad_value: Option<serde_json::Value>,
    detail: impl Into<String>,
) -> FieldError {
    FieldError {
        error_type,
        field: path.0.clone(),
        bad_value,
        detail: detail.into(),
    }
}

fn json<T: Serialize>(v: T) -> Option<serde_json::Value> {
    serde_json::to_value(v).ok()
}

/// `field.Required(path, detail)`.
pub fn required(path: &Path, detail: impl Into<String>) -> FieldError {
    err(ErrorType::Required, path, None, detail)
}

/// `field.Invalid(path, value, detail)`.
pub fn invalid<T: Serialize>(path: &Path, value: T, detail: impl Into<String>) -> FieldError {
    err(ErrorType::Invalid, path, json(value), detail)
}

/// `field.Duplicate(path, value)`.
pub fn duplicate<T: Serialize>(path: &Path, value: T) -> FieldError {
    err(ErrorType::Duplicate, path, json(value), "")
}

/// `field.NotSupported(path, value, validValues)`: the detail lists the supported values
/// quoted, as Kubernetes prints them.
pub fn not_supported<T: Serialize>(path: &Path, value: T, valid: &[&str]) -> FieldError {
    let quoted: Vec<String> = valid.iter().map(|v| format!("\"{v}\"")).collect();
    err(
        ErrorType::NotSupported,
        path,
        json(value),
        format!("supported values: {}", quoted.join(", ")),
    )
}

/// `field.Forbidden(path, detail)`.
pub fn forbidden(path: &Path, detail: impl Into<String>) -> FieldError {
    err(ErrorType::Forbidden, path, None, detail)
}

/// `field.TooLong(path, value, maxLength)`.
pub fn too_long<T: Serialize>(path: &Path, value: T, max_length: usize) -> FieldError {
    err(
        ErrorType::TooLong,
        path,
        json(value),
        format!("must have at most {max_length} bytes"),
    )
}

/// `field.TooMany(path, actual, max)`.
pub fn too_many(path: &Path, actual: usize, max: usize) -> FieldError {
    err(
        ErrorType::TooMany,
        path,
        json(actual),
        format!("must have at most {max} items"),
    )
}

/// `field.InternalError(path, err)`.
pub fn internal(path: &Path, detail: impl Into<String>) -> FieldError {
    err(ErrorType::Internal, path, None, detail)
}

/// `field.TypeInvalid(path, value, detail)`.
pub fn type_invalid<T: Serialize>(path: &Path, value: T, detail: impl Into<String>) -> FieldError {
    err(ErrorType::TypeInvalid, path, json(value), detail)
}

/// `field.NotFound(path, value)`.
pub fn not_found<T: Serialize>(path: &Path, value: T) -> FieldError {
    err(ErrorType::NotFound, path, json(value), "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_print_like_kubernetes() {
        let p = Path::new("spec")
            .child("containers")
            .index(2)
            .child("image");
        assert_eq!(p.as_str(), "spec.containers[2].image");
        assert_eq!(
            Path::new("metadata").child("labels").key("app").as_str(),
            "metadata.labels[app]"
        );
        assert_eq!(Path::default().child("spec").as_str(), "spec");
    }

    #[test]
    fn not_supported_lists_quoted_values() {
        let e = not_supported(&Path::new("spec.x"), "B", &["A", "C"]);
        assert_eq!(e.detail, "supported values: \"A\", \"C\"");
        assert_eq!(e.bad_value, Some(serde_json::json!("B")));
    }
}
