//! Which type may stand where another is expected, and the type-parameter substitutions that
//! makes so: cel-go `checker/types.go` (`internalIsAssignable`, `isValidTypeSubstitution`,
//! `mostGeneral`, `notReferencedIn`, `substitute`) and `checker/mapping.go`.

use crate::types::Type;
use std::collections::HashMap;
use std::sync::Arc;

/// Type parameters and variables bound so far, by name.
#[derive(Clone, Debug, Default)]
pub(crate) struct Mapping(HashMap<Arc<str>, Type>);

impl Mapping {
    fn find(&self, param: &Type) -> Option<&Type> {
        match param {
            Type::Param(name) => self.0.get(name),
            _ => None,
        }
    }

    fn add(&mut self, param: &Type, t: Type) {
        if let Type::Param(name) = param {
            self.0.insert(name.clone(), t);
        }
    }

    /// Bind the variable `param` to `t` (an overload's type parameter to a fresh variable).
    pub(crate) fn bind(&mut self, param: &str, t: Type) {
        self.0.insert(Arc::from(param), t);
    }

    /// Whether a value of type `t1` may stand where `t2` is expected (or the reverse: the
    /// relation is symmetric but for type parameters); the substitutions that requires are
    /// kept only when it may.
    pub(crate) fn is_assignable(&mut self, t1: &Type, t2: &Type) -> bool {
        let mut trial = self.clone();
        let ok = internal_is_assignable(&mut trial, t1, t2);
        if ok {
            *self = trial;
        }
        ok
    }

    /// [`Mapping::is_assignable`] pairwise over two lists of the same length.
    pub(crate) fn is_assignable_list(&mut self, l1: &[Type], l2: &[Type]) -> bool {
        let mut trial = self.clone();
        let ok = l1.len() == l2.len()
            && l1
                .iter()
                .zip(l2)
                .all(|(a, b)| internal_is_assignable(&mut trial, a, b));
        if ok {
            *self = trial;
        }
        ok
    }

    /// `t` with every bound parameter replaced by its binding; an unbound one is left as it
    /// is, or is `dyn` when `params_to_dyn` (a finished check's types).
    pub(crate) fn substitute(&self, t: &Type, params_to_dyn: bool) -> Type {
        if let Some(sub) = self.find(t) {
            return self.substitute(sub, params_to_dyn);
        }
        match t {
            Type::Param(_) if params_to_dyn => Type::Dyn,
            t => t.map_parameters(|p| self.substitute(p, params_to_dyn)),
        }
    }
}

fn internal_is_assignable(m: &mut Mapping, t1: &Type, t2: &Type) -> bool {
    if matches!(t2, Type::Param(_)) {
        let (valid, t2_has_sub) = is_valid_type_substitution(m, t1, t2);
        if valid {
            return true;
        }
        if t2_has_sub {
            return false;
        }
    }
    if matches!(t1, Type::Param(_)) {
        return is_valid_type_substitution(m, t2, t1).0;
    }
    if t1.is_dyn_or_error() || t2.is_dyn_or_error() {
        return true;
    }
    // The legacy checker's nullness: null stands for a message, a wrapper, an opaque value.
    if *t1 == Type::Null {
        return is_nullable(t2);
    }
    if *t2 == Type::Null {
        return is_nullable(t1);
    }
    if std::mem::discriminant(t1) != std::mem::discriminant(t2) || t1.type_name() != t2.type_name()
    {
        return false;
    }
    match t1 {
        // `type` is assignable from any `type(T)`.
        Type::Type(_) => true,
        _ => t1
            .parameters()
            .into_iter()
            .zip(t2.parameters())
            .all(|(a, b)| internal_is_assignable(m, a, b)),
    }
}

fn is_nullable(t: &Type) -> bool {
    matches!(
        t,
        Type::Null
            | Type::Object(_)
            | Type::Opaque(_)
            | Type::Optional(_)
            | Type::Duration
            | Type::Timestamp
    )
}

/// Whether `t1` may be what the parameter `t2` stands for, binding `t2` if it is unbound;
/// and whether `t2` was already bound.
fn is_valid_type_substitution(m: &mut Mapping, t1: &Type, t2: &Type) -> (bool, bool) {
    if t1 == t2 && t1.type_name() == t2.type_name() {
        return (true, true);
    }
    if let Some(sub) = m.find(t2).cloned() {
        if matches!(t1, Type::Param(a) if matches!(&sub, Type::Param(b) if a == b)) {
            return (true, true);
        }
        if internal_is_assignable(m, t1, &sub) {
            let general = most_general(t1, &sub);
            if not_referenced_in(m, t2, &general) {
                m.add(t2, general);
            }
            return (true, true);
        }
        return (false, true);
    }
    if not_referenced_in(m, t2, t1) {
        m.add(t2, t1.clone());
        return (true, false);
    }
    (false, false)
}

/// The less specific of two types one of which is assignable to the other.
pub(crate) fn most_general(t1: &Type, t2: &Type) -> Type {
    if is_equal_or_less_specific(t1, t2) {
        t1.clone()
    } else {
        t2.clone()
    }
}

fn is_equal_or_less_specific(t1: &Type, t2: &Type) -> bool {
    if matches!(t1, Type::Dyn | Type::Param(_)) {
        return true;
    }
    if matches!(t2, Type::Dyn | Type::Param(_)) {
        return false;
    }
    if std::mem::discriminant(t1) != std::mem::discriminant(t2) || t1.type_name() != t2.type_name()
    {
        return false;
    }
    t1.parameters()
        .into_iter()
        .zip(t2.parameters())
        .all(|(a, b)| is_equal_or_less_specific(a, b))
}

/// The occurs check: binding `param` to `within` must not make a type contain itself.
fn not_referenced_in(m: &Mapping, param: &Type, within: &Type) -> bool {
    if matches!((param, within), (Type::Param(a), Type::Param(b)) if a == b) {
        return false;
    }
    match within {
        Type::Param(_) => match m.find(within) {
            Some(sub) => not_referenced_in(m, param, sub),
            None => true,
        },
        t => t
            .parameters()
            .into_iter()
            .all(|p| not_referenced_in(m, param, p)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_bind_once_and_dyn_matches_anything() {
        let mut m = Mapping::default();
        let a = Type::param("A");
        assert!(m.is_assignable(&Type::Int, &a));
        assert!(!m.is_assignable(&Type::STRING, &a));
        assert_eq!(
            m.substitute(&Type::list(a.clone()), false),
            Type::list(Type::Int)
        );
        assert!(m.is_assignable(&Type::Dyn, &Type::STRING));
        assert!(m.is_assignable(&Type::list(Type::Dyn), &Type::list(Type::Int)));
        assert!(!m.is_assignable(&Type::list(Type::Int), &Type::map(Type::Int, Type::Int)));
        assert!(m.is_assignable(&Type::Null, &Type::Opaque("net.IP")));
        assert!(!m.is_assignable(&Type::Null, &Type::Int));
        assert_eq!(m.substitute(&Type::param("B"), true), Type::Dyn);
    }

    #[test]
    fn a_failed_match_binds_nothing() {
        let mut m = Mapping::default();
        let a = Type::param("A");
        assert!(!m.is_assignable_list(&[Type::Int, Type::STRING], &[a.clone(), a.clone()]));
        assert!(m.is_assignable(&Type::STRING, &a));
    }
}
