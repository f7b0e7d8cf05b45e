//! CEL types as the checker sees them (cel-go `common/types/types.go`), with the sizes kube's
//! cost estimate reads from a schema (`k8s.io/apiserver/pkg/cel/types.go`, `DeclType.MaxElements`).

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// The type of an expression or variable.
///
/// `String`, `Bytes`, `List` and `Map` carry a [`Bound`]: how large a value of the type can
/// be, which only the cost estimate reads.
#[derive(Clone, Debug, PartialEq)]
pub enum Type {
    Bool,
    Int,
    Uint,
    Double,
    String(Bound),
    Bytes(Bound),
    /// `null_type`.
    Null,
    /// `google.protobuf.Duration`.
    Duration,
    /// `google.protobuf.Timestamp`.
    Timestamp,
    /// Any type; checked when evaluated.
    Dyn,
    /// The type of an expression that did not check; assignable to anything so that checking
    /// goes on and reports every error once.
    Error,
    /// `list(T)`.
    List(Box<Type>, Bound),
    /// `map(K, V)`.
    Map(Box<Type>, Box<Type>, Bound),
    /// An object with declared fields: a schema's `properties`.
    Object(Arc<ObjectType>),
    /// A library's value type (`kubernetes.Quantity`, `net.IP`, …).
    Opaque(&'static str),
    /// `optional_type(T)`.
    Optional(Box<Type>),
    /// `type(T)`: the value of a type name such as `int`, as `type(x)` returns.
    Type(Box<Type>),
    /// A type parameter of an overload (`A`), or a type variable of the checker (`_var0`).
    Param(Arc<str>),
}

/// An object type: its name (kube's `DeclType.MaybeAssignTypeName`: the root's name, then
/// `.field` per level) and its fields by escaped name ([`crate::escaping::escape`]).
#[derive(Debug, PartialEq)]
pub struct ObjectType {
    pub name: String,
    pub fields: BTreeMap<String, Field>,
}

/// One declared field of an [`ObjectType`].
#[derive(Clone, Debug, PartialEq)]
pub struct Field {
    pub ty: Type,
    /// Listed in the schema's `required`.
    pub required: bool,
}

/// The most elements a value can have — bytes of a string, items of a list, entries of a
/// map — when a schema bounds it (`maxLength` (×4: it counts code points), `maxItems`,
/// `maxProperties`, or kube's estimate from the request size limit). `None`: unknown.
///
/// Two types are the same whatever their bounds: equality is always true here, so `Type`'s
/// derived equality compares types only.
#[derive(Clone, Copy, Debug, Default)]
pub struct Bound(pub Option<u64>);

impl PartialEq for Bound {
    fn eq(&self, _: &Bound) -> bool {
        true
    }
}

impl Type {
    /// `string` with no bound.
    pub const STRING: Type = Type::String(Bound(None));
    /// `bytes` with no bound.
    pub const BYTES: Type = Type::Bytes(Bound(None));

    /// The scalar type a CEL type name denotes: `bool`, `int`, `uint`, `double`, `string`,
    /// `bytes`, `null_type`.
    pub fn scalar_named(name: &str) -> Option<Type> {
        Some(match name {
            "bool" => Type::Bool,
            "int" => Type::Int,
            "uint" => Type::Uint,
            "double" => Type::Double,
            "string" => Type::STRING,
            "bytes" => Type::BYTES,
            "null_type" => Type::Null,
            _ => return None,
        })
    }

    /// `list(elem)` with no bound.
    pub fn list(elem: Type) -> Type {
        Type::List(Box::new(elem), Bound(None))
    }

    /// `map(key, value)` with no bound.
    pub fn map(key: Type, value: Type) -> Type {
        Type::Map(Box::new(key), Box::new(value), Bound(None))
    }

    /// `optional_type(t)`.
    pub fn optional(t: Type) -> Type {
        Type::Optional(Box::new(t))
    }

    /// The type parameter or variable `name`.
    pub fn param(name: &str) -> Type {
        Type::Param(Arc::from(name))
    }

    /// `dyn` or the error type: anything is assignable to either.
    pub fn is_dyn_or_error(&self) -> bool {
        matches!(self, Type::Dyn | Type::Error)
    }

    /// The bound of a string, bytes, list or map type; `None` for the others.
    pub fn bound(&self) -> Option<u64> {
        match self {
            Type::String(b) | Type::Bytes(b) | Type::List(_, b) | Type::Map(_, _, b) => b.0,
            _ => None,
        }
    }

    /// The type parameters of a parameterized type, in order: a list's element, a map's key
    /// and value, an optional's value, a type's type.
    pub(crate) fn parameters(&self) -> Vec<&Type> {
        match self {
            Type::List(e, _) | Type::Optional(e) | Type::Type(e) => vec![e],
            Type::Map(k, v, _) => vec![k, v],
            _ => vec![],
        }
    }

    /// The same type with its parameters replaced by `f` of each.
    pub(crate) fn map_parameters(&self, mut f: impl FnMut(&Type) -> Type) -> Type {
        match self {
            Type::List(e, b) => Type::List(Box::new(f(e)), *b),
            Type::Map(k, v, b) => Type::Map(Box::new(f(k)), Box::new(f(v)), *b),
            Type::Optional(e) => Type::Optional(Box::new(f(e))),
            Type::Type(e) => Type::Type(Box::new(f(e))),
            t => t.clone(),
        }
    }

    /// The name cel-go gives the type's kind, without parameters: `list`, `map`, an object's
    /// or opaque type's name. Types of one name and kind take part in assignability by their
    /// parameters.
    pub(crate) fn type_name(&self) -> &str {
        match self {
            Type::Bool => "bool",
            Type::Int => "int",
            Type::Uint => "uint",
            Type::Double => "double",
            Type::String(_) => "string",
            Type::Bytes(_) => "bytes",
            Type::Null => "null_type",
            Type::Duration => "google.protobuf.Duration",
            Type::Timestamp => "google.protobuf.Timestamp",
            Type::Dyn => "dyn",
            Type::Error => "*error*",
            Type::List(..) => "list",
            Type::Map(..) => "map",
            Type::Object(o) => &o.name,
            Type::Opaque(name) => name,
            Type::Optional(_) => "optional_type",
            Type::Type(_) => "type",
            Type::Param(name) => name,
        }
    }
}

/// cel-go's `Type.String()`: `int`, `list(string)`, `map(string, int)`,
/// `optional_type(int)`, `type(int)`, an object's name.
impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let params = self.parameters();
        f.write_str(self.type_name())?;
        if params.is_empty() {
            return Ok(());
        }
        f.write_str("(")?;
        for (i, p) in params.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{p}")?;
        }
        f.write_str(")")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_print_as_cel_go_prints_them() {
        assert_eq!(
            Type::map(Type::STRING, Type::list(Type::Int)).to_string(),
            "map(string, list(int))"
        );
        assert_eq!(
            Type::optional(Type::Opaque("kubernetes.Quantity")).to_string(),
            "optional_type(kubernetes.Quantity)"
        );
        assert_eq!(
            Type::Type(Box::new(Type::Null)).to_string(),
            "type(null_type)"
        );
        assert_eq!(Type::Timestamp.to_string(), "google.protobuf.Timestamp");
    }

    #[test]
    fn bounds_do_not_make_types_differ() {
        assert_eq!(Type::String(Bound(Some(4))), Type::STRING);
        assert_eq!(Type::String(Bound(Some(4))).bound(), Some(4));
        assert_ne!(Type::STRING, Type::BYTES);
    }
}
