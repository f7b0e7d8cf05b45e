//! Property names as CEL identifiers (`k8s.io/apiserver/pkg/cel/escaping.go`): a schema's
//! property name is reachable from an expression only under its escaped form, and kube's
//! escaping is part of what a rule means (`self.metadata__dot__x` addresses `metadata.x`'s
//! sibling `metadata.x`-named property, never a nested one).

/// The words CEL's lexer reserves (cel-spec `langdef.md`, "Syntax"); a property named so is
/// reachable as `__{word}__`.
const RESERVED: [&str; 21] = [
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// `Escape`: the CEL identifier (`[a-zA-Z_][a-zA-Z0-9_]*`) of a property name, or `None` when
/// the name is not of the form `[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*` (kube then leaves the property
/// out of the expression's type). A reserved word becomes `__{word}__`; otherwise, left to
/// right, `__` becomes `__underscores__`, `.` `__dot__`, `-` `__dash__` and `/` `__slash__`.
pub fn escape(name: &str) -> Option<String> {
    if name.is_empty() || name.as_bytes()[0].is_ascii_digit() {
        return None;
    }
    if RESERVED.contains(&name) {
        return Some(format!("__{name}__"));
    }
    let mut out = String::with_capacity(name.len());
    let mut rest = name;
    while let Some(c) = rest.chars().next() {
        if rest.starts_with("__") {
            out.push_str("__underscores__");
            rest = &rest[2..];
            continue;
        }
        match c {
            '.' => out.push_str("__dot__"),
            '-' => out.push_str("__dash__"),
            '/' => out.push_str("__slash__"),
            c if c.is_ascii_alphanumeric() || c == '_' => out.push(c),
            _ => return None,
        }
        rest = &rest[c.len_utf8()..];
    }
    Some(out)
}

/// `Unescape`: the property name of an escaped identifier, or `None` when it holds an escape
/// sequence [`escape`] never writes (`__{word}__` is a reserved word only as the whole
/// identifier). Each `__x__` (x without underscores), left to right, is one sequence.
pub fn unescape(escaped: &str) -> Option<String> {
    let mut out = String::with_capacity(escaped.len());
    let mut rest = escaped;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("__") {
            let word_len = after.find('_').unwrap_or(after.len());
            if word_len > 0 && after[word_len..].starts_with("__") {
                let word = &after[..word_len];
                match word {
                    "underscores" => out.push_str("__"),
                    "dot" => out.push('.'),
                    "dash" => out.push('-'),
                    "slash" => out.push('/'),
                    w if RESERVED.contains(&w) && word_len + 4 == escaped.len() => out.push_str(w),
                    _ => return None,
                }
                rest = &after[word_len + 2..];
                continue;
            }
        }
        let c = rest.chars().next().expect("not empty");
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_cel_identifier(s: &str) -> bool {
        let mut chars = s.chars();
        chars
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
    }

    /// kube's `TestEscaping` cases, rewritten.
    #[test]
    fn names_escape_as_kube_escapes_them_and_back() {
        let cases = [
            ("a.a", "a__dot__a"),
            ("a-a", "a__dash__a"),
            ("a__a", "a__underscores__a"),
            ("a.-/__a", "a__dot____dash____slash____underscores__a"),
            ("a._a", "a__dot___a"),
            ("a__.__a", "a__underscores____dot____underscores__a"),
            ("a___a", "a__underscores___a"),
            ("a____a", "a__underscores____underscores__a"),
            ("a__dot__a", "a__underscores__dot__underscores__a"),
            (
                "a__underscores__a",
                "a__underscores__underscores__underscores__a",
            ),
            ("has", "has"),
            ("exists_one", "exists_one"),
            ("getMilliseconds", "getMilliseconds"),
            ("_if", "_if"),
            ("_anything", "_anything"),
        ];
        let reserved = RESERVED.map(|w| (w, format!("__{w}__")));
        for (name, want) in cases
            .iter()
            .map(|(n, w)| (*n, w.to_string()))
            .chain(reserved.iter().map(|(n, w)| (*n, w.clone())))
        {
            let got = escape(name).unwrap_or_else(|| panic!("{name} escapes"));
            assert_eq!(got, want, "{name}");
            assert!(is_cel_identifier(&got), "{got}");
            assert_eq!(unescape(&got).as_deref(), Some(name), "{got}");
        }
        for name in ["@", "1up", "👑", "/👑", ""] {
            assert_eq!(escape(name), None, "{name}");
        }
    }

    #[test]
    fn malformed_escapes_are_refused() {
        for s in ["__int__extra", "__illegal__", "x__true__"] {
            assert_eq!(unescape(s), None, "{s}");
        }
        assert_eq!(unescape("__true__").as_deref(), Some("true"));
        assert_eq!(unescape("a___b").as_deref(), Some("a___b"));
    }

    /// kube's `TestEscapingFuzz`: every name that escapes comes back.
    #[test]
    fn every_escapable_name_round_trips() {
        let alphabet = ['a', 'Z', '0', '_', '.', '-', '/', '@'];
        let mut names = vec![String::new()];
        for _ in 0..5 {
            names = names
                .iter()
                .flat_map(|n| alphabet.iter().map(move |c| format!("{n}{c}")))
                .collect();
            for n in &names {
                if let Some(e) = escape(n) {
                    assert!(is_cel_identifier(&e), "{n} → {e}");
                    assert_eq!(unescape(&e).as_deref(), Some(n.as_str()), "{n} → {e}");
                }
            }
        }
    }
}
