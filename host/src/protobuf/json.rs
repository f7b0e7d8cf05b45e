//! How a decoded protobuf field prints as JSON, one function per Go field rule (see the module
//! docs of [`super`]): `omitempty_*` for value fields tagged `omitempty`, `*_value` for value
//! fields without it, `ptr_*` for pointer fields, plus lists, maps, quantities, times and the
//! [`object!`] macro that converts a struct field by field.

use crate::status::ApiError;
use base64::Engine;
use k8s_pb::apimachinery::pkg::api::resource::Quantity;
use k8s_pb::apimachinery::pkg::apis::meta::v1 as meta;
use k8s_pb::apimachinery::pkg::util::intstr::IntOrString;
use prost::Message;
use serde_json::{Map, Value};
use std::collections::BTreeMap;

pub(super) type R<T> = Result<T, ApiError>;
/// A field's JSON value, or `None` when Go would omit it.
pub(super) type Out = R<Option<Value>>;

pub(super) fn message<M: Message + Default>(raw: &[u8]) -> R<M> {
    M::decode(raw).map_err(|e| {
        ApiError::bad_request(format!("error decoding the request body as protobuf: {e}"))
    })
}

/// 415 naming what cannot be converted.
pub(super) fn unsupported(what: String) -> ApiError {
    ApiError::unsupported_media_type(&[])
        .with_message(format!("{what}; send the object as application/json"))
}

/// Build a JSON object from a k8s-pb struct, destructured exhaustively:
/// `field: "jsonName" => conversion`. The JSON name `""` inlines an embedded struct.
macro_rules! object {
    ($v:expr, $($ty:ident)::+ { $($field:ident : $json:literal => $conv:expr),* $(,)? }) => {{
        // Compile-time check that every field of the struct is listed.
        let _exhaustive = |x: &$($ty)::+| {
            let $($ty)::+ { $($field: _),* } = x;
        };
        let obj: $($ty)::+ = $v;
        let mut o = Map::new();
        $( put(&mut o, $json, ($conv)(obj.$field)?); )*
        Ok(Value::Object(o))
    }};
}

pub(super) fn put(o: &mut Map<String, Value>, key: &str, v: Option<Value>) {
    match (key, v) {
        (_, None) => {}
        ("", Some(Value::Object(inline))) => o.extend(inline),
        (_, Some(v)) => {
            o.insert(key.to_string(), v);
        }
    }
}

// ---- scalar conversions ----

/// `string` with `omitempty`.
pub(super) fn omitempty_str(v: Option<String>) -> Out {
    Ok(v.filter(|s| !s.is_empty()).map(Value::from))
}

/// `string` without `omitempty`.
pub(super) fn str_value(v: Option<String>) -> Out {
    Ok(Some(Value::from(v.unwrap_or_default())))
}

/// `*string` with `omitempty`.
pub(super) fn ptr_str(v: Option<String>) -> Out {
    Ok(v.map(Value::from))
}

/// `*string` without `omitempty` (`null` when nil).
pub(super) fn ptr_str_or_null(v: Option<String>) -> Out {
    Ok(Some(v.map_or(Value::Null, Value::from)))
}

/// `bool` with `omitempty`.
pub(super) fn omitempty_bool(v: Option<bool>) -> Out {
    Ok(v.filter(|b| *b).map(Value::from))
}

/// `bool` without `omitempty`.
pub(super) fn bool_value(v: Option<bool>) -> Out {
    Ok(Some(Value::from(v.unwrap_or(false))))
}

/// `*bool`.
pub(super) fn ptr_bool(v: Option<bool>) -> Out {
    Ok(v.map(Value::from))
}

/// `int32`/`int64` with `omitempty`.
pub(super) fn omitempty_int<N: Into<i64>>(v: Option<N>) -> Out {
    Ok(v.map(Into::into).filter(|n| *n != 0).map(Value::from))
}

/// `int32`/`int64` without `omitempty`.
pub(super) fn int_value<N: Into<i64>>(v: Option<N>) -> Out {
    Ok(Some(Value::from(v.map_or(0, Into::into))))
}

/// `*int32`/`*int64`.
pub(super) fn ptr_int<N: Into<i64>>(v: Option<N>) -> Out {
    Ok(v.map(|n| Value::from(n.into())))
}

/// `[]string` with `omitempty`.
pub(super) fn omitempty_strings(v: Vec<String>) -> Out {
    Ok((!v.is_empty()).then(|| Value::from(v)))
}

/// `[]int32`/`[]int64` with `omitempty`.
pub(super) fn omitempty_ints<N: Into<i64>>(v: Vec<N>) -> Out {
    Ok((!v.is_empty()).then(|| v.into_iter().map(|n| Value::from(n.into())).collect()))
}

/// `map[string]string` with `omitempty`.
pub(super) fn omitempty_string_map(v: BTreeMap<String, String>) -> Out {
    Ok((!v.is_empty()).then(|| v.into_iter().map(|(k, v)| (k, Value::from(v))).collect()))
}

/// `map[string][]byte` with `omitempty`: values in base64, as `encoding/json` prints `[]byte`.
pub(super) fn omitempty_bytes_map(v: BTreeMap<String, Vec<u8>>) -> Out {
    Ok((!v.is_empty()).then(|| {
        v.into_iter()
            .map(|(k, v)| {
                (
                    k,
                    Value::from(base64::engine::general_purpose::STANDARD.encode(&v)),
                )
            })
            .collect()
    }))
}

/// `ResourceList` (`map[ResourceName]resource.Quantity`) with `omitempty`.
pub(super) fn omitempty_resource_list(v: BTreeMap<String, Quantity>) -> Out {
    Ok((!v.is_empty()).then(|| v.into_iter().map(|(k, q)| (k, quantity_value(q))).collect()))
}

/// `resource.Quantity` (a struct: always printed; the zero Quantity prints `"0"`).
pub(super) fn quantity(v: Option<Quantity>) -> Out {
    Ok(Some(quantity_value(v.unwrap_or_default())))
}

/// `*resource.Quantity`.
pub(super) fn ptr_quantity(v: Option<Quantity>) -> Out {
    Ok(v.map(quantity_value))
}

pub(super) fn quantity_value(q: Quantity) -> Value {
    Value::from(
        q.string
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "0".into()),
    )
}

/// `intstr.IntOrString` (a struct: always printed), per `IntOrString.MarshalJSON`.
pub(super) fn int_or_string(v: Option<IntOrString>) -> Out {
    let v = v.unwrap_or_default();
    Ok(Some(match v.r#type.unwrap_or(0) {
        0 => Value::from(v.int_val.unwrap_or(0)),
        1 => Value::from(v.str_val.unwrap_or_default()),
        t => {
            return Err(ApiError::bad_request(format!(
                "impossible IntOrString.Type {t}"
            )))
        }
    }))
}

/// `metav1.Time` (a struct: always printed, `null` when zero).
pub(super) fn time(v: Option<meta::Time>) -> Out {
    Ok(Some(match v {
        None => Value::Null,
        Some(t) => time_value(t)?,
    }))
}

/// `*metav1.Time`.
pub(super) fn ptr_time(v: Option<meta::Time>) -> Out {
    v.map(time_value).transpose()
}

/// `metav1.Time.Unmarshal` (an empty message is the zero time; nanoseconds are dropped) then
/// `MarshalJSON` (`null` for the zero time, else RFC 3339 in UTC).
pub(super) fn time_value(t: meta::Time) -> R<Value> {
    /// `time.Time{}` (January 1, year 1, UTC) in Unix seconds.
    const GO_ZERO_TIME: i64 = -62_135_596_800;
    if t.seconds.is_none() && t.nanos.is_none() {
        return Ok(Value::Null);
    }
    let secs = t.seconds.unwrap_or(0);
    if secs == GO_ZERO_TIME {
        return Ok(Value::Null);
    }
    chrono::DateTime::from_timestamp(secs, 0)
        .map(|d| Value::from(d.format("%Y-%m-%dT%H:%M:%SZ").to_string()))
        .ok_or_else(|| ApiError::bad_request(format!("time out of range: {secs} seconds")))
}

// ---- structural conversions ----

/// `[]T` with `omitempty`.
pub(super) fn omitempty_list<T>(f: fn(T) -> R<Value>) -> impl FnOnce(Vec<T>) -> Out {
    move |v| {
        if v.is_empty() {
            return Ok(None);
        }
        v.into_iter()
            .map(f)
            .collect::<R<Vec<Value>>>()
            .map(|a| Some(Value::Array(a)))
    }
}

/// `[]T` without `omitempty` (`null` when nil).
pub(super) fn list_or_null<T>(f: fn(T) -> R<Value>) -> impl FnOnce(Vec<T>) -> Out {
    move |v| Ok(Some(omitempty_list(f)(v)?.unwrap_or(Value::Null)))
}

/// `*T`.
pub(super) fn ptr_struct<T>(f: fn(T) -> R<Value>) -> impl FnOnce(Option<T>) -> Out {
    move |v| v.map(f).transpose()
}

/// A non-pointer struct `T` (always printed; with the JSON name `""`, inlined).
pub(super) fn struct_value<T: Default>(f: fn(T) -> R<Value>) -> impl FnOnce(Option<T>) -> Out {
    move |v| f(v.unwrap_or_default()).map(Some)
}

/// A field this decoder does not convert: refused (415) when set.
pub(super) fn refused<T>(name: &'static str) -> impl FnOnce(Option<T>) -> Out {
    move |v| match v {
        None => Ok(None),
        Some(_) => Err(unsupported(format!(
            "the {name} volume source is not supported in protobuf request bodies"
        ))),
    }
}

/// A field this decoder does not convert, by its path: refused (415) when set.
pub(super) fn refused_field<T>(path: &'static str) -> impl FnOnce(Option<T>) -> Out {
    move |v| match v {
        None => Ok(None),
        Some(_) => Err(unsupported(format!(
            "{path} is not supported in protobuf request bodies"
        ))),
    }
}

pub(super) use object;
