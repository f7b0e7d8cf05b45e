//! Field selectors (`k8s.io/apimachinery/pkg/fields/selector.go`): the parsed form,
//! matching, the parser behind `fields.ParseSelector`, and the attributes an object is matched
//! against.

use crate::labels::SelectorError;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt;

/// One field requirement: `field=value`, `field==value` or `field!=value`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldRequirement {
    /// Field path, e.g. `metadata.name`.
    pub field: String,
    /// `true` for `=`/`==`, `false` for `!=`.
    pub equals: bool,
    /// The value.
    pub value: String,
}

/// A parsed field selector: the AND of its requirements; empty selects everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSelector {
    /// Requirements, in the order given.
    pub requirements: Vec<FieldRequirement>,
}

impl FieldSelector {
    /// Parse the `fieldSelector` syntax (`fields.ParseSelector`): comma-separated
    /// `field=value`, `field==value`, `field!=value`, with `\` escaping `,`, `=` and `!`.
    pub fn parse(s: &str) -> Result<FieldSelector, SelectorError> {
        parse_field_selector(s)
    }

    /// Whether the selector selects everything.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// `Selector.Matches(fields)`: an absent field reads as `""`.
    pub fn matches(&self, fields: &BTreeMap<String, String>) -> bool {
        self.requirements.iter().all(|r| {
            let v = fields.get(&r.field).map(String::as_str).unwrap_or("");
            (v == r.value) == r.equals
        })
    }

    /// The value required for `field` by an `=` requirement (`RequiresExactMatch`), used to
    /// narrow `metadata.name` / `metadata.namespace` lookups and cache indexes.
    pub fn requires_exact_match(&self, field: &str) -> Option<&str> {
        self.requirements
            .iter()
            .find(|r| r.equals && r.field == field)
            .map(|r| r.value.as_str())
    }
}

impl fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .requirements
            .iter()
            .map(|r| {
                format!(
                    "{}{}{}",
                    r.field,
                    if r.equals { "=" } else { "!=" },
                    r.value
                )
            })
            .collect();
        f.write_str(&parts.join(","))
    }
}

/// The labels and field values a selector is matched against (`GetAttrs`): `metadata.labels`,
/// and `metadata.name`, `metadata.namespace` and each of `selectable_fields` read from the
/// object by path (`DefaultClusterScopedAttr` / `DefaultNamespaceScopedAttr` plus a CRD's
/// selectable fields). A missing or `null` field reads as `""`; a non-string field as its JSON.
pub fn object_attrs(
    obj: &Value,
    selectable_fields: &[String],
) -> (BTreeMap<String, String>, BTreeMap<String, String>) {
    let labels = obj
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default();
    let mut fields = BTreeMap::new();
    for path in ["metadata.name", "metadata.namespace"]
        .into_iter()
        .chain(selectable_fields.iter().map(String::as_str))
    {
        let ptr = format!("/{}", path.replace('.', "/"));
        let v = match obj.pointer(&ptr) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Null) | None => String::new(),
            Some(other) => other.to_string(),
        };
        fields.insert(path.to_string(), v);
    }
    (labels, fields)
}

// ---------------------------------------------------------------------------------------
// Field selectors (`fields.ParseSelector`).
// ---------------------------------------------------------------------------------------

/// Parse a field selector (`fields.ParseSelector`): comma-separated `field=value`,
/// `field==value` or `field!=value` terms (a `\`-escaped comma does not split), sorted as
/// strings like apimachinery sorts them; the value is unescaped (`fields.UnescapeValue`).
/// Empty terms are skipped; a term with both an empty field and an empty value (`=`)
/// selects everything and is dropped, as the identity `Transform` drops it.
pub(crate) fn parse_field_selector(s: &str) -> Result<FieldSelector, SelectorError> {
    let mut parts = split_terms(s);
    parts.sort();
    let mut requirements = Vec::new();
    for part in parts {
        if part.is_empty() {
            continue;
        }
        let Some((lhs, op, rhs)) = split_term(part) else {
            return Err(SelectorError(format!(
                "invalid selector: '{s}'; can't understand '{part}'"
            )));
        };
        let value = unescape_value(rhs).map_err(SelectorError)?;
        if lhs.is_empty() && value.is_empty() {
            continue;
        }
        requirements.push(FieldRequirement {
            field: lhs.to_string(),
            equals: op != NOT_EQUAL_OPERATOR,
            value,
        });
    }
    Ok(FieldSelector { requirements })
}

const NOT_EQUAL_OPERATOR: &str = "!=";
const DOUBLE_EQUAL_OPERATOR: &str = "==";
const EQUAL_OPERATOR: &str = "=";
/// `termOperators`: `==` before `=` so that no `=` is left on the value.
const TERM_OPERATORS: [&str; 3] = [NOT_EQUAL_OPERATOR, DOUBLE_EQUAL_OPERATOR, EQUAL_OPERATOR];

/// `splitTerms`: split on commas not preceded by an unescaped backslash; the escapes are
/// kept in the terms.
fn split_terms(selector: &str) -> Vec<&str> {
    if selector.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let mut start = 0;
    let mut in_slash = false;
    for (i, c) in selector.char_indices() {
        if in_slash {
            in_slash = false;
        } else if c == '\\' {
            in_slash = true;
        } else if c == ',' {
            terms.push(&selector[start..i]);
            start = i + 1;
        }
    }
    terms.push(&selector[start..]);
    terms
}

/// `splitTerm`: the first occurrence of an operator splits the term (no escaping in the
/// field name).
fn split_term(term: &str) -> Option<(&str, &'static str, &str)> {
    for (i, _) in term.char_indices() {
        let remaining = &term[i..];
        for op in TERM_OPERATORS {
            if remaining.starts_with(op) {
                return Some((&term[..i], op, &term[i + op.len()..]));
            }
        }
    }
    None
}

/// `fields.UnescapeValue`: `\\`, `\,` and `\=` are the only escapes; an unescaped `,` or
/// `=` is an error.
fn unescape_value(s: &str) -> Result<String, String> {
    let mut v = String::with_capacity(s.len());
    let mut in_slash = false;
    for c in s.chars() {
        if in_slash {
            match c {
                '\\' | ',' | '=' => v.push(c),
                _ => {
                    return Err(format!(
                        "invalid field selector: invalid escape sequence: \\{c}"
                    ))
                }
            }
            in_slash = false;
            continue;
        }
        match c {
            '\\' => in_slash = true,
            // `UnescapedRune.Error` prints the rune with `%v`, i.e. as a number.
            ',' | '=' => {
                return Err(format!(
                    "invalid field selector: unescaped character in value: {}",
                    c as u32
                ))
            }
            _ => v.push(c),
        }
    }
    if in_slash {
        return Err("invalid field selector: invalid escape sequence: \\".to_string());
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn fparse(s: &str) -> Vec<FieldRequirement> {
        match parse_field_selector(s) {
            Ok(sel) => sel.requirements,
            Err(e) => panic!("parse_field({s:?}) failed: {e}"),
        }
    }

    fn fparse_err(s: &str) -> String {
        match parse_field_selector(s) {
            Ok(sel) => panic!("parse_field({s:?}) succeeded: {sel:?}"),
            Err(e) => e.0,
        }
    }

    fn freq(field: &str, equals: bool, value: &str) -> FieldRequirement {
        FieldRequirement {
            field: field.to_string(),
            equals,
            value: value.to_string(),
        }
    }

    #[test]
    fn field_empty_selects_everything() {
        for s in ["", ",", ",,", "="] {
            let sel = parse_field_selector(s).unwrap();
            assert!(sel.is_empty(), "{s:?}");
            assert!(sel.matches(&labels(&[("metadata.name", "x")])));
        }
    }

    #[test]
    fn field_operators() {
        assert_eq!(fparse("a=b"), vec![freq("a", true, "b")]);
        assert_eq!(fparse("a==b"), vec![freq("a", true, "b")]);
        assert_eq!(fparse("a!=b"), vec![freq("a", false, "b")]);
        assert_eq!(fparse("a="), vec![freq("a", true, "")]);
        assert_eq!(fparse("a!="), vec![freq("a", false, "")]);
        // An empty field name is accepted (as in Go).
        assert_eq!(fparse("=b"), vec![freq("", true, "b")]);
        // No trimming: spaces are part of the field and value.
        assert_eq!(fparse("a = b"), vec![freq("a ", true, " b")]);
        // The first operator splits: "a!b=c" splits at "=".
        assert_eq!(fparse("a!b=c"), vec![freq("a!b", true, "c")]);
        assert_eq!(
            fparse_err("a!==b"),
            "invalid field selector: unescaped character in value: 61"
        );
        assert_eq!(fparse(r"a!=\=b"), vec![freq("a", false, "=b")]);
    }

    #[test]
    fn field_multiple_sorted() {
        assert_eq!(
            fparse("spec.nodeName=n1,metadata.name!=x"),
            vec![
                freq("metadata.name", false, "x"),
                freq("spec.nodeName", true, "n1")
            ]
        );
        assert_eq!(
            fparse("b=1,,a=2,"),
            vec![freq("a", true, "2"), freq("b", true, "1")]
        );
    }

    #[test]
    fn field_escapes() {
        assert_eq!(fparse(r"a=x\,y"), vec![freq("a", true, "x,y")]);
        assert_eq!(
            fparse(r"a=x\,y,b=z"),
            vec![freq("a", true, "x,y"), freq("b", true, "z")]
        );
        assert_eq!(fparse(r"a=x\=y"), vec![freq("a", true, "x=y")]);
        assert_eq!(fparse(r"a=x\\y"), vec![freq("a", true, r"x\y")]);
        assert_eq!(
            fparse(r"a=x\\,b=y"),
            vec![freq("a", true, r"x\"), freq("b", true, "y")]
        );
        assert_eq!(fparse(r"a!=\,"), vec![freq("a", false, ",")]);
        assert_eq!(
            fparse("a=é,b=日本"),
            vec![freq("a", true, "é"), freq("b", true, "日本")]
        );
    }

    #[test]
    fn field_errors() {
        assert_eq!(
            fparse_err("a"),
            "invalid selector: 'a'; can't understand 'a'"
        );
        assert_eq!(
            fparse_err("x=y,abc"),
            "invalid selector: 'x=y,abc'; can't understand 'abc'"
        );
        assert_eq!(
            fparse_err("a<b"),
            "invalid selector: 'a<b'; can't understand 'a<b'"
        );
        assert_eq!(
            fparse_err("a==b==c"),
            "invalid field selector: unescaped character in value: 61"
        );
        assert_eq!(
            fparse_err("a=b=c"),
            "invalid field selector: unescaped character in value: 61"
        );
        assert_eq!(
            fparse_err(r"a=b\"),
            "invalid field selector: invalid escape sequence: \\"
        );
        assert_eq!(
            fparse_err(r"a=b\n"),
            "invalid field selector: invalid escape sequence: \\n"
        );
        assert_eq!(
            fparse_err(r"a=b\!"),
            "invalid field selector: invalid escape sequence: \\!"
        );
    }

    #[test]
    fn field_matching() {
        let fields = labels(&[("metadata.name", "foo"), ("spec.nodeName", "")]);
        let m = |s: &str| parse_field_selector(s).unwrap().matches(&fields);
        assert!(m(""));
        assert!(m("metadata.name=foo"));
        assert!(m("metadata.name==foo"));
        assert!(!m("metadata.name=bar"));
        assert!(m("metadata.name!=bar"));
        assert!(!m("metadata.name!=foo"));
        assert!(m("spec.nodeName="));
        assert!(m("spec.nodeName=,metadata.name=foo"));
        assert!(!m("spec.nodeName!="));
        // Absent fields read as "".
        assert!(m("status.phase="));
        assert!(m("status.phase!=Running"));
        assert!(!m("status.phase=Running"));

        let escaped = labels(&[("metadata.name", "a,b=c")]);
        assert!(parse_field_selector(r"metadata.name=a\,b\=c")
            .unwrap()
            .matches(&escaped));

        let sel = parse_field_selector("metadata.namespace=ns,metadata.name!=x").unwrap();
        assert_eq!(sel.requires_exact_match("metadata.namespace"), Some("ns"));
        assert_eq!(sel.requires_exact_match("metadata.name"), None);
    }
}
