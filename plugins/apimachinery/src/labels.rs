//! Label selectors (`k8s.io/apimachinery/pkg/labels/selector.go`): the parsed form, matching,
//! and the parser behind `labels.Parse` (the lexer, `Parser` and `NewRequirement`
//! validation), with apimachinery's error wording (`validation.IsQualifiedName` /
//! `IsValidLabelValue` messages, `field.Error` rendering).

use crate::validation::{is_qualified_name, is_valid_label_value};
use std::collections::BTreeMap;
use std::fmt;

/// One requirement's operator (`selection.Operator`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operator {
    /// `key=value` / `key==value` / `key in (…)`.
    In,
    /// `key!=value` / `key notin (…)` (also true when the key is absent).
    NotIn,
    /// `key`.
    Exists,
    /// `!key`.
    DoesNotExist,
    /// `key>N` (integer comparison).
    GreaterThan,
    /// `key<N`.
    LessThan,
}

/// One label requirement (`labels.Requirement`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Requirement {
    /// Label key.
    pub key: String,
    /// Operator.
    pub operator: Operator,
    /// Values (sorted, deduplicated); one for `>`/`<`, none for exists.
    pub values: Vec<String>,
}

/// A parsed label selector: the AND of its requirements; empty selects everything.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LabelSelector {
    /// Requirements, sorted by key as apimachinery sorts them.
    pub requirements: Vec<Requirement>,
}

/// A parse error of a selector, worded as apimachinery words it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SelectorError(pub String);

impl fmt::Display for SelectorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SelectorError {}

impl LabelSelector {
    /// Parse the `labelSelector` syntax: `a=b,c!=d,e in (f,g),h notin (i),j,!k,l>3`.
    /// Errors: a syntax error, or an invalid label key or value.
    pub fn parse(s: &str) -> Result<LabelSelector, SelectorError> {
        parse_label_selector(s)
    }

    /// A `metav1.LabelSelector` object (`matchLabels`, `matchExpressions`) as a selector,
    /// `metav1.LabelSelectorAsSelector` (apimachinery/pkg/apis/meta/v1/helpers.go); `None`
    /// when it cannot be one (an unknown operator, a value that is not a string, an invalid
    /// key or value).
    pub fn from_metav1(s: &serde_json::Value) -> Option<LabelSelector> {
        use serde_json::Value;
        // Keys and values are joined into selector text below: only the characters a label
        // key or value may hold, so none reads as selector syntax.
        let plain = |t: &str| {
            t.chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_./".contains(c))
        };
        let mut terms = Vec::new();
        if let Some(m) = s.get("matchLabels").and_then(Value::as_object) {
            for (k, v) in m {
                let v = v.as_str()?;
                if !plain(k) || !plain(v) {
                    return None;
                }
                terms.push(format!("{k}={v}"));
            }
        }
        let expressions = s.get("matchExpressions").and_then(Value::as_array);
        for e in expressions.into_iter().flatten() {
            let key = e.get("key")?.as_str()?;
            let values: Vec<&str> = e
                .get("values")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            if !plain(key) || !values.iter().all(|v| plain(v)) {
                return None;
            }
            terms.push(match e.get("operator")?.as_str()? {
                "In" => format!("{key} in ({})", values.join(",")),
                "NotIn" => format!("{key} notin ({})", values.join(",")),
                "Exists" => key.to_string(),
                "DoesNotExist" => format!("!{key}"),
                _ => return None,
            });
        }
        LabelSelector::parse(&terms.join(",")).ok()
    }

    /// Whether the selector selects everything.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// `Selector.Matches(labels)`.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.requirements.iter().all(|r| {
            let v = labels.get(&r.key);
            match r.operator {
                Operator::In => v.is_some_and(|v| r.values.contains(v)),
                Operator::NotIn => v.is_none_or(|v| !r.values.contains(v)),
                Operator::Exists => v.is_some(),
                Operator::DoesNotExist => v.is_none(),
                Operator::GreaterThan | Operator::LessThan => {
                    let (Some(v), Some(bound)) = (v, r.values.first()) else {
                        return false;
                    };
                    match (v.parse::<i64>(), bound.parse::<i64>()) {
                        (Ok(v), Ok(b)) if r.operator == Operator::GreaterThan => v > b,
                        (Ok(v), Ok(b)) => v < b,
                        _ => false,
                    }
                }
            }
        })
    }
}

impl fmt::Display for LabelSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts: Vec<String> = self
            .requirements
            .iter()
            .map(|r| match r.operator {
                Operator::In if r.values.len() == 1 => format!("{}={}", r.key, r.values[0]),
                Operator::NotIn if r.values.len() == 1 => format!("{}!={}", r.key, r.values[0]),
                Operator::In => format!("{} in ({})", r.key, r.values.join(",")),
                Operator::NotIn => format!("{} notin ({})", r.key, r.values.join(",")),
                Operator::Exists => r.key.clone(),
                Operator::DoesNotExist => format!("!{}", r.key),
                Operator::GreaterThan => format!("{}>{}", r.key, r.values[0]),
                Operator::LessThan => format!("{}<{}", r.key, r.values[0]),
            })
            .collect();
        f.write_str(&parts.join(","))
    }
}

// ---------------------------------------------------------------------------------------
// Label selectors (`labels.Parse`).
// ---------------------------------------------------------------------------------------

/// Parse a label selector (`labels.Parse`).
///
/// Grammar (from apimachinery):
///
/// ```text
/// <selector-syntax>         ::= <requirement> | <requirement> "," <selector-syntax>
/// <requirement>             ::= [!] KEY [ <set-based-restriction> | <exact-match-restriction> ]
/// <set-based-restriction>   ::= "" | <inclusion-exclusion> <value-set>
/// <inclusion-exclusion>     ::= "in" | "notin"
/// <value-set>               ::= "(" <values> ")"
/// <values>                  ::= VALUE | VALUE "," <values>
/// <exact-match-restriction> ::= ["=" | "==" | "!=" | ">" | "<"] VALUE
/// ```
///
/// Requirements are sorted by key (stable); values are sorted and deduplicated. The empty
/// string is a valid value (`x=`, `x in ()`, `x in (a,)`).
pub(crate) fn parse_label_selector(s: &str) -> Result<LabelSelector, SelectorError> {
    let mut parser = Parser {
        items: scan(s.as_bytes()),
        position: 0,
    };
    let mut requirements = parser.parse().map_err(SelectorError)?;
    // `sort.Sort(ByKey(items))`: Go's sort is not stable in general, but insertion-sorts
    // short inputs; a stable sort gives the same result for equal keys there.
    requirements.sort_by(|a, b| a.key.cmp(&b.key));
    Ok(LabelSelector { requirements })
}

/// Lexer tokens (`labels.Token`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token {
    Error,
    EndOfString,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

/// `string2token`: literal tokens (everything but identifiers, end of string and errors).
fn string_to_token(s: &[u8]) -> Option<Token> {
    Some(match s {
        b")" => Token::ClosedPar,
        b"," => Token::Comma,
        b"!" => Token::DoesNotExist,
        b"==" => Token::DoubleEquals,
        b"=" => Token::Equals,
        b">" => Token::GreaterThan,
        b"in" => Token::In,
        b"<" => Token::LessThan,
        b"!=" => Token::NotEquals,
        b"notin" => Token::NotIn,
        b"(" => Token::OpenPar,
        _ => return None,
    })
}

/// `isWhitespace`.
fn is_whitespace(ch: u8) -> bool {
    matches!(ch, b' ' | b'\t' | b'\r' | b'\n')
}

/// `isSpecialSymbol`: characters that can start an operator.
fn is_special_symbol(ch: u8) -> bool {
    matches!(ch, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

fn lossy(b: &[u8]) -> String {
    // Identifiers are split at ASCII bytes only, so the slices are valid UTF-8.
    String::from_utf8_lossy(b).into_owned()
}

/// `labels.Lexer`: works on bytes like the Go lexer (a NUL byte reads as end of input,
/// as `read` returns 0 there).
struct Lexer<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Lexer<'_> {
    fn read(&mut self) -> u8 {
        if self.pos < self.s.len() {
            let b = self.s[self.pos];
            self.pos += 1;
            b
        } else {
            0
        }
    }

    fn unread(&mut self) {
        self.pos -= 1;
    }

    /// `scanIDOrKeyword`.
    fn scan_id_or_keyword(&mut self) -> (Token, String) {
        let mut buffer = Vec::new();
        loop {
            let ch = self.read();
            if ch == 0 {
                break;
            }
            if is_special_symbol(ch) || is_whitespace(ch) {
                self.unread();
                break;
            }
            buffer.push(ch);
        }
        match string_to_token(&buffer) {
            Some(tok) => (tok, lossy(&buffer)),
            None => (Token::Identifier, lossy(&buffer)),
        }
    }

    /// `scanSpecialSymbol`: the longest operator made of special symbols.
    fn scan_special_symbol(&mut self) -> (Token, String) {
        let mut last: Option<(Token, String)> = None;
        let mut buffer = Vec::new();
        loop {
            let ch = self.read();
            if ch == 0 {
                break;
            }
            if is_special_symbol(ch) {
                buffer.push(ch);
                if let Some(tok) = string_to_token(&buffer) {
                    last = Some((tok, lossy(&buffer)));
                } else if last.is_some() {
                    self.unread();
                    break;
                }
            } else {
                self.unread();
                break;
            }
        }
        match last {
            Some(item) => item,
            None => (
                Token::Error,
                format!("error expected: keyword found '{}'", lossy(&buffer)),
            ),
        }
    }

    /// `skipWhiteSpaces`.
    fn skip_white_spaces(&mut self, mut ch: u8) -> u8 {
        while is_whitespace(ch) {
            ch = self.read();
        }
        ch
    }

    /// `Lex`.
    fn lex(&mut self) -> (Token, String) {
        let first = self.read();
        let ch = self.skip_white_spaces(first);
        if ch == 0 {
            (Token::EndOfString, String::new())
        } else if is_special_symbol(ch) {
            self.unread();
            self.scan_special_symbol()
        } else {
            self.unread();
            self.scan_id_or_keyword()
        }
    }
}

/// `Parser.scan`: all tokens up to and including the end of string.
fn scan(s: &[u8]) -> Vec<(Token, String)> {
    let mut lexer = Lexer { s, pos: 0 };
    let mut items = Vec::new();
    loop {
        let (tok, lit) = lexer.lex();
        items.push((tok, lit));
        if tok == Token::EndOfString {
            return items;
        }
    }
}

/// `ParserContext`: in `Values`, `in` and `notin` are identifiers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Context {
    KeyAndOperator,
    Values,
}

/// `selection.Operator` as the parser sees it (before mapping to [`Operator`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    DoesNotExist,
    Equals,
    DoubleEquals,
    In,
    NotEquals,
    NotIn,
    Exists,
    GreaterThan,
    LessThan,
}

impl Op {
    fn to_operator(self) -> Operator {
        match self {
            Op::Equals | Op::DoubleEquals | Op::In => Operator::In,
            Op::NotEquals | Op::NotIn => Operator::NotIn,
            Op::Exists => Operator::Exists,
            Op::DoesNotExist => Operator::DoesNotExist,
            Op::GreaterThan => Operator::GreaterThan,
            Op::LessThan => Operator::LessThan,
        }
    }
}

/// `binaryOperators` joined as in `parseOperator`'s error (`selection.GreaterThan` is
/// `gt`, `selection.LessThan` is `lt`).
const BINARY_OPERATORS: &str = "in, notin, =, ==, !=, gt, lt";

/// `labels.Parser`.
struct Parser {
    items: Vec<(Token, String)>,
    position: usize,
}

impl Parser {
    fn item(&self, i: usize) -> (Token, String) {
        // The scanned items always end with EndOfString; never read past it.
        let i = i.min(self.items.len() - 1);
        self.items[i].clone()
    }

    fn lookahead(&self, context: Context) -> (Token, String) {
        let (tok, lit) = self.item(self.position);
        (adjust(tok, context), lit)
    }

    fn consume(&mut self, context: Context) -> (Token, String) {
        self.position += 1;
        let (tok, lit) = self.item(self.position - 1);
        (adjust(tok, context), lit)
    }

    /// `parse`.
    fn parse(&mut self) -> Result<Vec<Requirement>, String> {
        let mut requirements = Vec::new();
        loop {
            let (tok, lit) = self.lookahead(Context::Values);
            match tok {
                Token::Identifier | Token::DoesNotExist => {
                    let r = self
                        .parse_requirement()
                        .map_err(|e| format!("unable to parse requirement: {e}"))?;
                    requirements.push(r);
                    let (t, l) = self.consume(Context::Values);
                    match t {
                        Token::EndOfString => return Ok(requirements),
                        Token::Comma => {
                            let (t2, l2) = self.lookahead(Context::Values);
                            if t2 != Token::Identifier && t2 != Token::DoesNotExist {
                                return Err(format!(
                                    "found '{l2}', expected: identifier after ','"
                                ));
                            }
                        }
                        _ => return Err(format!("found '{l}', expected: ',' or 'end of string'")),
                    }
                }
                Token::EndOfString => return Ok(requirements),
                _ => {
                    return Err(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    ))
                }
            }
        }
    }

    /// `parseRequirement`.
    fn parse_requirement(&mut self) -> Result<Requirement, String> {
        let (key, operator) = self.parse_key_and_infer_operator()?;
        if let Some(op @ (Op::Exists | Op::DoesNotExist)) = operator {
            return new_requirement(key, op, Vec::new());
        }
        let op = self.parse_operator()?;
        let values = match op {
            Op::In | Op::NotIn => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        new_requirement(key, op, values)
    }

    /// `parseKeyAndInferOperator`: `None` when a binary operator must follow.
    fn parse_key_and_infer_operator(&mut self) -> Result<(String, Option<Op>), String> {
        let mut operator = None;
        let (mut tok, mut literal) = self.consume(Context::Values);
        if tok == Token::DoesNotExist {
            operator = Some(Op::DoesNotExist);
            (tok, literal) = self.consume(Context::Values);
        }
        if tok != Token::Identifier {
            return Err(format!("found '{literal}', expected: identifier"));
        }
        if let Some(e) = validate_label_key(&literal, "<nil>") {
            return Err(e);
        }
        let (t, _) = self.lookahead(Context::Values);
        if (t == Token::EndOfString || t == Token::Comma) && operator != Some(Op::DoesNotExist) {
            operator = Some(Op::Exists);
        }
        Ok((literal, operator))
    }

    /// `parseOperator`.
    fn parse_operator(&mut self) -> Result<Op, String> {
        let (tok, lit) = self.consume(Context::KeyAndOperator);
        Ok(match tok {
            Token::In => Op::In,
            Token::Equals => Op::Equals,
            Token::DoubleEquals => Op::DoubleEquals,
            Token::GreaterThan => Op::GreaterThan,
            Token::LessThan => Op::LessThan,
            Token::NotIn => Op::NotIn,
            Token::NotEquals => Op::NotEquals,
            _ => return Err(format!("found '{lit}', expected: {BINARY_OPERATORS}")),
        })
    }

    /// `parseValues`: `( values )` for `in` / `notin`.
    fn parse_values(&mut self) -> Result<Vec<String>, String> {
        let (tok, lit) = self.consume(Context::Values);
        if tok != Token::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (tok, lit) = self.lookahead(Context::Values);
        match tok {
            Token::Identifier | Token::Comma => {
                let s = self.parse_identifiers_list()?;
                let (tok, _) = self.consume(Context::Values);
                if tok != Token::ClosedPar {
                    return Err(format!("found '{lit}', expected: ')'"));
                }
                Ok(s)
            }
            Token::ClosedPar => {
                // "()"
                self.consume(Context::Values);
                Ok(vec![String::new()])
            }
            _ => Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
    }

    /// `parseIdentifiersList`: a possibly empty list of possibly empty identifiers.
    fn parse_identifiers_list(&mut self) -> Result<Vec<String>, String> {
        let mut s: Vec<String> = Vec::new();
        loop {
            let (tok, lit) = self.consume(Context::Values);
            match tok {
                Token::Identifier => {
                    s.push(lit);
                    let (tok2, lit2) = self.lookahead(Context::Values);
                    match tok2 {
                        Token::Comma => continue,
                        Token::ClosedPar => return Ok(s),
                        _ => return Err(format!("found '{lit2}', expected: ',' or ')'")),
                    }
                }
                Token::Comma => {
                    if s.is_empty() {
                        s.push(String::new()); // "(,"
                    }
                    let (tok2, _) = self.lookahead(Context::Values);
                    if tok2 == Token::ClosedPar {
                        s.push(String::new()); // ",)"
                        return Ok(s);
                    }
                    if tok2 == Token::Comma {
                        self.consume(Context::Values);
                        s.push(String::new()); // ",,"
                    }
                }
                _ => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
    }

    /// `parseExactValue`: the single value of `=`, `==`, `!=`, `>`, `<` (may be empty).
    fn parse_exact_value(&mut self) -> Result<Vec<String>, String> {
        let (tok, _) = self.lookahead(Context::Values);
        if tok == Token::EndOfString || tok == Token::Comma {
            return Ok(vec![String::new()]);
        }
        let (tok, lit) = self.consume(Context::Values);
        if tok == Token::Identifier {
            return Ok(vec![lit]);
        }
        Err(format!("found '{lit}', expected: identifier"))
    }
}

fn adjust(tok: Token, context: Context) -> Token {
    if context == Context::Values && matches!(tok, Token::In | Token::NotIn) {
        Token::Identifier
    } else {
        tok
    }
}

/// `NewRequirement` (with the parser's nil path): validates the key, the value count for
/// the operator, integer values for `>`/`<`, and each value as a label value. Values are
/// sorted and deduplicated (the parser passes `sets.String.List()`).
fn new_requirement(key: String, op: Op, mut vals: Vec<String>) -> Result<Requirement, String> {
    vals.sort();
    vals.dedup();
    let mut errs: Vec<String> = Vec::new();
    if let Some(e) = validate_label_key(&key, "key") {
        errs.push(e);
    }
    match op {
        Op::In | Op::NotIn => {
            if vals.is_empty() {
                errs.push(field_invalid(
                    "values",
                    &go_json_strings(&vals),
                    "for 'in', 'notin' operators, values set can't be empty",
                ));
            }
        }
        Op::Equals | Op::DoubleEquals | Op::NotEquals => {
            if vals.len() != 1 {
                errs.push(field_invalid(
                    "values",
                    &go_json_strings(&vals),
                    "exact-match compatibility requires one single value",
                ));
            }
        }
        Op::Exists | Op::DoesNotExist => {
            if !vals.is_empty() {
                errs.push(field_invalid(
                    "values",
                    &go_json_strings(&vals),
                    "values set must be empty for exists and does not exist",
                ));
            }
        }
        Op::GreaterThan | Op::LessThan => {
            if vals.len() != 1 {
                errs.push(field_invalid(
                    "values",
                    &go_json_strings(&vals),
                    "for 'Gt', 'Lt' operators, exactly one value is required",
                ));
            }
            for (i, v) in vals.iter().enumerate() {
                if !is_go_parse_int(v) {
                    errs.push(field_invalid(
                        &format!("values[{i}]"),
                        &go_quote(v),
                        "for 'Gt', 'Lt' operators, the value must be an integer",
                    ));
                }
            }
        }
    }
    for (i, v) in vals.iter().enumerate() {
        let msgs = is_valid_label_value(v);
        if !msgs.is_empty() {
            errs.push(field_invalid(
                &format!("values[{i}][{key}]"),
                &go_quote(v),
                &msgs.join("; "),
            ));
        }
    }
    if !errs.is_empty() {
        return Err(aggregate(errs));
    }
    Ok(Requirement {
        key,
        operator: op.to_operator(),
        values: vals,
    })
}

/// `strconv.ParseInt(s, 10, 64)` succeeds: optional sign, ASCII digits, fits in `i64`.
fn is_go_parse_int(s: &str) -> bool {
    // Rust's `i64::from_str` accepts exactly Go's base-10 syntax (optional `+`/`-`, then
    // one or more ASCII digits, no underscores).
    s.parse::<i64>().is_ok()
}

/// `field.ErrorList.ToAggregate().Error()`: one message as is, several (deduplicated) as
/// `[a, b]`.
fn aggregate(errs: Vec<String>) -> String {
    let mut unique: Vec<String> = Vec::new();
    for e in errs {
        if !unique.contains(&e) {
            unique.push(e);
        }
    }
    if unique.len() == 1 {
        unique.pop().unwrap_or_default()
    } else {
        format!("[{}]", unique.join(", "))
    }
}

/// `field.Invalid(path, value, detail).Error()`; `value` is already rendered.
fn field_invalid(path: &str, value: &str, detail: &str) -> String {
    if detail.is_empty() {
        format!("{path}: Invalid value: {value}")
    } else {
        format!("{path}: Invalid value: {value}: {detail}")
    }
}

/// `validateLabelKey`.
fn validate_label_key(k: &str, path: &str) -> Option<String> {
    let errs = is_qualified_name(k);
    if errs.is_empty() {
        None
    } else {
        Some(field_invalid(path, &go_quote(k), &errs.join("; ")))
    }
}

// --- Go formatting helpers ----------------------------------------------------------------

/// Go's `%q` (`strconv.Quote`) of a string. Printability of non-ASCII characters is
/// approximated: control and white-space characters are escaped, others kept.
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0b' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\x7f' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_ascii() => out.push(c),
            c if c.is_control() || c.is_whitespace() || c == '\u{feff}' => {
                if (c as u32) < 0x10000 {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                } else {
                    out.push_str(&format!("\\U{:08x}", c as u32));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `json.Marshal` of a `[]string` (how `field.Error` renders a slice value).
fn go_json_strings(vals: &[String]) -> String {
    serde_json::to_string(vals).unwrap_or_else(|_| "null".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn a_metav1_label_selector_becomes_a_selector() {
        let s = LabelSelector::from_metav1(&serde_json::json!({
            "matchLabels": {"team": "a"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["web", "db"]},
                {"key": "legacy", "operator": "DoesNotExist"},
            ]
        }))
        .unwrap();
        let labels = |pairs: &[(&str, &str)]| -> BTreeMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert!(s.matches(&labels(&[("team", "a"), ("tier", "db")])));
        assert!(!s.matches(&labels(&[("team", "a"), ("tier", "db"), ("legacy", "1")])));
        assert!(!s.matches(&labels(&[("team", "b"), ("tier", "db")])));
        assert!(LabelSelector::from_metav1(&serde_json::json!({}))
            .unwrap()
            .is_empty());
        let bad = serde_json::json!({"matchExpressions": [{"key": "a", "operator": "Near"}]});
        assert_eq!(LabelSelector::from_metav1(&bad), None);
        // Selector syntax inside a value is an invalid value, not more requirements.
        let smuggled = serde_json::json!({"matchLabels": {"a": "b,c=d"}});
        assert_eq!(LabelSelector::from_metav1(&smuggled), None);
        let listed = serde_json::json!({"matchExpressions": [{"key": "a", "operator": "In", "values": ["x,y"]}]});
        assert_eq!(LabelSelector::from_metav1(&listed), None);
    }

    fn req(key: &str, operator: Operator, values: &[&str]) -> Requirement {
        Requirement {
            key: key.to_string(),
            operator,
            values: values.iter().map(|v| v.to_string()).collect(),
        }
    }

    fn parse(s: &str) -> Vec<Requirement> {
        match parse_label_selector(s) {
            Ok(sel) => sel.requirements,
            Err(e) => panic!("parse({s:?}) failed: {e}"),
        }
    }

    fn parse_err(s: &str) -> String {
        match parse_label_selector(s) {
            Ok(sel) => panic!("parse({s:?}) succeeded: {sel:?}"),
            Err(e) => e.0,
        }
    }

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn label_matches(sel: &str, pairs: &[(&str, &str)]) -> bool {
        parse_label_selector(sel).unwrap().matches(&labels(pairs))
    }

    const NAME_PART_REGEX: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
    const LABEL_VALUE_REGEX: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

    // --- lexer ---

    fn tokens(s: &str) -> Vec<(Token, String)> {
        let mut items = scan(s.as_bytes());
        assert_eq!(items.pop().map(|t| t.0), Some(Token::EndOfString));
        items
    }

    #[test]
    fn lexer_single_tokens() {
        let cases = [
            ("", Token::EndOfString),
            (",", Token::Comma),
            ("notin", Token::NotIn),
            ("in", Token::In),
            ("=", Token::Equals),
            ("==", Token::DoubleEquals),
            (">", Token::GreaterThan),
            ("<", Token::LessThan),
            ("!", Token::DoesNotExist),
            ("!=", Token::NotEquals),
            ("(", Token::OpenPar),
            (")", Token::ClosedPar),
            ("~", Token::Identifier),
            ("||", Token::Identifier),
        ];
        for (s, t) in cases {
            let mut l = Lexer {
                s: s.as_bytes(),
                pos: 0,
            };
            let (tok, lit) = l.lex();
            assert_eq!(tok, t, "{s:?}");
            assert_eq!(lit, s, "{s:?}");
        }
    }

    #[test]
    fn lexer_sequences() {
        use Token::*;
        let cases: Vec<(&str, Vec<Token>)> = vec![
            (
                "key in ( value )",
                vec![Identifier, In, OpenPar, Identifier, ClosedPar],
            ),
            (
                "key notin ( value )",
                vec![Identifier, NotIn, OpenPar, Identifier, ClosedPar],
            ),
            (
                "key in ( value1, value2 )",
                vec![
                    Identifier, In, OpenPar, Identifier, Comma, Identifier, ClosedPar,
                ],
            ),
            ("key", vec![Identifier]),
            ("!key", vec![DoesNotExist, Identifier]),
            ("()", vec![OpenPar, ClosedPar]),
            (
                "x in (),y",
                vec![Identifier, In, OpenPar, ClosedPar, Comma, Identifier],
            ),
            (
                "== != (), = notin",
                vec![
                    DoubleEquals,
                    NotEquals,
                    OpenPar,
                    ClosedPar,
                    Comma,
                    Equals,
                    NotIn,
                ],
            ),
            ("key>2", vec![Identifier, GreaterThan, Identifier]),
            ("key<1", vec![Identifier, LessThan, Identifier]),
            // Longest operator, then the rest: "!==" is "!=" then "=".
            ("a!==b", vec![Identifier, NotEquals, Equals, Identifier]),
            ("a=!b", vec![Identifier, Equals, DoesNotExist, Identifier]),
        ];
        for (s, want) in cases {
            let got: Vec<Token> = tokens(s).into_iter().map(|t| t.0).collect();
            assert_eq!(got, want, "{s:?}");
        }
        assert_eq!(
            tokens(" a\t==\r\nb "),
            vec![
                (Identifier, "a".to_string()),
                (DoubleEquals, "==".to_string()),
                (Identifier, "b".to_string()),
            ]
        );
    }

    // --- label selectors: successes ---

    #[test]
    fn empty_selector_selects_everything() {
        for s in ["", " ", "\t\r\n"] {
            let sel = parse_label_selector(s).unwrap();
            assert!(sel.is_empty(), "{s:?}");
            assert!(sel.matches(&labels(&[("x", "y")])));
            assert!(sel.matches(&labels(&[])));
        }
    }

    #[test]
    fn every_operator() {
        assert_eq!(parse("a=b"), vec![req("a", Operator::In, &["b"])]);
        assert_eq!(parse("a==b"), vec![req("a", Operator::In, &["b"])]);
        assert_eq!(parse("a!=b"), vec![req("a", Operator::NotIn, &["b"])]);
        assert_eq!(
            parse("a in (c,b)"),
            vec![req("a", Operator::In, &["b", "c"])]
        );
        assert_eq!(
            parse("a notin (c,b)"),
            vec![req("a", Operator::NotIn, &["b", "c"])]
        );
        assert_eq!(parse("a"), vec![req("a", Operator::Exists, &[])]);
        assert_eq!(parse("!a"), vec![req("a", Operator::DoesNotExist, &[])]);
        assert_eq!(parse("a>3"), vec![req("a", Operator::GreaterThan, &["3"])]);
        assert_eq!(parse("a<3"), vec![req("a", Operator::LessThan, &["3"])]);
    }

    #[test]
    fn whitespace_handling() {
        assert_eq!(parse("a = b"), vec![req("a", Operator::In, &["b"])]);
        assert_eq!(parse(" a == b "), vec![req("a", Operator::In, &["b"])]);
        assert_eq!(parse("a != b"), vec![req("a", Operator::NotIn, &["b"])]);
        assert_eq!(
            parse("a in ( b , c )"),
            vec![req("a", Operator::In, &["b", "c"])]
        );
        assert_eq!(
            parse("foo  in\t (abc)"),
            vec![req("foo", Operator::In, &["abc"])]
        );
        assert_eq!(
            parse("x notin\n (abc)"),
            vec![req("x", Operator::NotIn, &["abc"])]
        );
        assert_eq!(
            parse("x  notin\t\t\t(abc,def)"),
            vec![req("x", Operator::NotIn, &["abc", "def"])]
        );
        assert_eq!(parse("\rx"), vec![req("x", Operator::Exists, &[])]);
        assert_eq!(parse("a "), vec![req("a", Operator::Exists, &[])]);
        assert_eq!(parse(" ! a "), vec![req("a", Operator::DoesNotExist, &[])]);
        assert_eq!(
            parse("a > 10 , b < 2"),
            vec![
                req("a", Operator::GreaterThan, &["10"]),
                req("b", Operator::LessThan, &["2"])
            ]
        );
    }

    #[test]
    fn multiple_requirements_sorted_by_key() {
        assert_eq!(
            parse("a,b"),
            vec![
                req("a", Operator::Exists, &[]),
                req("b", Operator::Exists, &[])
            ]
        );
        assert_eq!(
            parse("x=a,a=x"),
            vec![
                req("a", Operator::In, &["x"]),
                req("x", Operator::In, &["a"])
            ]
        );
        assert_eq!(parse("x=a,a=x"), parse("a=x,x=a"));
        assert_eq!(
            parse("x notin (abc,def),bar,z in (),w"),
            vec![
                req("bar", Operator::Exists, &[]),
                req("w", Operator::Exists, &[]),
                req("x", Operator::NotIn, &["abc", "def"]),
                req("z", Operator::In, &[""]),
            ]
        );
        assert_eq!(
            parse("x,y in (a)"),
            vec![
                req("x", Operator::Exists, &[]),
                req("y", Operator::In, &["a"])
            ]
        );
        assert_eq!(
            parse("x=a,y!=b,z in (h,i,j)"),
            vec![
                req("x", Operator::In, &["a"]),
                req("y", Operator::NotIn, &["b"]),
                req("z", Operator::In, &["h", "i", "j"]),
            ]
        );
        // Same key twice: both kept, in the order given (stable sort).
        assert_eq!(
            parse("z!=a,z,a"),
            vec![
                req("a", Operator::Exists, &[]),
                req("z", Operator::NotIn, &["a"]),
                req("z", Operator::Exists, &[]),
            ]
        );
        assert_eq!(
            parse("!a,b"),
            vec![
                req("a", Operator::DoesNotExist, &[]),
                req("b", Operator::Exists, &[])
            ]
        );
    }

    #[test]
    fn values_sorted_and_deduplicated() {
        assert_eq!(
            parse("a in (z,y,z,x,y)"),
            vec![req("a", Operator::In, &["x", "y", "z"])]
        );
        assert_eq!(
            parse("a in (x,y,notin, z,in)"),
            vec![req("a", Operator::In, &["in", "notin", "x", "y", "z"])]
        );
    }

    #[test]
    fn empty_values_are_valid() {
        // As in apimachinery: the empty string is a valid label value.
        assert_eq!(parse("x="), vec![req("x", Operator::In, &[""])]);
        assert_eq!(parse("x= "), vec![req("x", Operator::In, &[""])]);
        assert_eq!(parse("x!="), vec![req("x", Operator::NotIn, &[""])]);
        assert_eq!(
            parse("x=,z= "),
            vec![req("x", Operator::In, &[""]), req("z", Operator::In, &[""])]
        );
        assert_eq!(parse("x in ()"), vec![req("x", Operator::In, &[""])]);
        assert_eq!(parse("x notin ( )"), vec![req("x", Operator::NotIn, &[""])]);
        assert_eq!(
            parse("x in (abc,)"),
            vec![req("x", Operator::In, &["", "abc"])]
        );
        assert_eq!(
            parse("x notin (, a)"),
            vec![req("x", Operator::NotIn, &["", "a"])]
        );
        assert_eq!(
            parse("x in (a,,b)"),
            vec![req("x", Operator::In, &["", "a", "b"])]
        );
        assert_eq!(parse("x in (,)"), vec![req("x", Operator::In, &[""])]);
    }

    #[test]
    fn keywords_as_keys_and_values() {
        assert_eq!(parse("notin=in"), vec![req("notin", Operator::In, &["in"])]);
        assert_eq!(parse("in in (in)"), vec![req("in", Operator::In, &["in"])]);
        assert_eq!(parse("in"), vec![req("in", Operator::Exists, &[])]);
    }

    #[test]
    fn qualified_keys_and_values() {
        assert_eq!(
            parse("this-is-a-dns.domain.com/key-with-dash"),
            vec![req(
                "this-is-a-dns.domain.com/key-with-dash",
                Operator::Exists,
                &[]
            )]
        );
        assert_eq!(
            parse("0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)"),
            vec![req(
                "0.1.2.domain/99",
                Operator::NotIn,
                &["10.10.100.1", "tick.tack.clock"]
            )]
        );
        assert_eq!(
            parse("app.kubernetes.io/name=My_App-1.0"),
            vec![req("app.kubernetes.io/name", Operator::In, &["My_App-1.0"])]
        );
        let key63 = "a".repeat(63);
        assert_eq!(parse(&key63), vec![req(&key63, Operator::Exists, &[])]);
        let val63 = "b".repeat(63);
        assert_eq!(
            parse(&format!("a={val63}")),
            vec![req("a", Operator::In, &[val63.as_str()])]
        );
    }

    #[test]
    fn gt_lt_integers() {
        assert_eq!(parse("x>1,z<5").len(), 2);
        assert_eq!(
            parse("x>9223372036854775807"),
            vec![req("x", Operator::GreaterThan, &["9223372036854775807"])]
        );
        assert_eq!(parse("x>0"), vec![req("x", Operator::GreaterThan, &["0"])]);
    }

    // --- label selectors: errors ---

    #[test]
    fn syntax_errors() {
        assert_eq!(
            parse_err("=b"),
            "found '=', expected: !, identifier, or 'end of string'"
        );
        assert_eq!(
            parse_err("a==b==c"),
            "found '==', expected: ',' or 'end of string'"
        );
        // "a||y" lexes as one identifier, an invalid label value.
        assert_eq!(
            parse_err("x=a||y=b"),
            format!(
                "unable to parse requirement: values[0][x]: Invalid value: \"a||y\": {LABEL_VALUE_REGEX}"
            )
        );
        assert_eq!(
            parse_err("!x=a"),
            "found '=', expected: ',' or 'end of string'"
        );
        assert_eq!(
            parse_err("a,,b"),
            "found ',', expected: identifier after ','"
        );
        assert_eq!(
            parse_err(",x,y"),
            "found ',', expected: !, identifier, or 'end of string'"
        );
        assert_eq!(
            parse_err("a in (xyz),"),
            "found '', expected: identifier after ','"
        );
        assert_eq!(
            parse_err("a in (xyz)b notin ()"),
            "found 'b', expected: ',' or 'end of string'"
        );
        assert_eq!(
            parse_err("a b"),
            "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"
        );
        assert_eq!(
            parse_err("("),
            "found '(', expected: !, identifier, or 'end of string'"
        );
        assert_eq!(
            parse_err(")"),
            "found ')', expected: !, identifier, or 'end of string'"
        );
        assert_eq!(
            parse_err("a ("),
            "unable to parse requirement: found '(', expected: in, notin, =, ==, !=, gt, lt"
        );
        assert_eq!(
            parse_err("x nott in (y)"),
            "unable to parse requirement: found 'nott', expected: in, notin, =, ==, !=, gt, lt"
        );
        assert_eq!(
            parse_err("a notin("),
            "unable to parse requirement: found '', expected: ',', ')' or identifier"
        );
        assert_eq!(
            parse_err("a in b"),
            "unable to parse requirement: found 'b' expected: '('"
        );
        assert_eq!(
            parse_err("a in (xyz abc)"),
            "unable to parse requirement: found 'abc', expected: ',' or ')'"
        );
        assert_eq!(
            parse_err("a in (b"),
            "unable to parse requirement: found '', expected: ',' or ')'"
        );
        assert_eq!(
            parse_err("a in (b,="),
            "unable to parse requirement: found '=', expected: ',', or identifier"
        );
        assert_eq!(
            parse_err("a in (=)"),
            "unable to parse requirement: found '=', expected: ',', ')' or identifier"
        );
        assert_eq!(
            parse_err("a=("),
            "unable to parse requirement: found '(', expected: identifier"
        );
        assert_eq!(
            parse_err("!"),
            "unable to parse requirement: found '', expected: identifier"
        );
        assert_eq!(
            parse_err("!!a"),
            "unable to parse requirement: found '!', expected: identifier"
        );
        assert_eq!(
            parse_err("a in"),
            "unable to parse requirement: found '' expected: '('"
        );
    }

    #[test]
    fn invalid_keys() {
        assert_eq!(
            parse_err("-bad"),
            format!(
                "unable to parse requirement: <nil>: Invalid value: \"-bad\": {NAME_PART_REGEX}"
            )
        );
        assert_eq!(
            parse_err("a=b,bad_=c"),
            format!(
                "unable to parse requirement: <nil>: Invalid value: \"bad_\": {NAME_PART_REGEX}"
            )
        );
        assert_eq!(
            parse_err("!-bad"),
            format!(
                "unable to parse requirement: <nil>: Invalid value: \"-bad\": {NAME_PART_REGEX}"
            )
        );
        let long = "a".repeat(64);
        assert_eq!(
            parse_err(&long),
            format!(
                "unable to parse requirement: <nil>: Invalid value: \"{long}\": name part must be no more than 63 characters"
            )
        );
        assert_eq!(
            parse_err("/a"),
            "unable to parse requirement: <nil>: Invalid value: \"/a\": prefix part must be non-empty"
        );
        assert_eq!(
            parse_err("a/"),
            format!(
                "unable to parse requirement: <nil>: Invalid value: \"a/\": name part must be non-empty; {NAME_PART_REGEX}"
            )
        );
        assert_eq!(
            parse_err("Example.com/a"),
            "unable to parse requirement: <nil>: Invalid value: \"Example.com/a\": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        );
        assert_eq!(
            parse_err("a/b/c"),
            "unable to parse requirement: <nil>: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        );
        assert_eq!(
            parse_err("a\"b"),
            format!(
                "unable to parse requirement: <nil>: Invalid value: \"a\\\"b\": {NAME_PART_REGEX}"
            )
        );
        assert!(parse_err("é").contains("Invalid value: \"é\""));
        // Key checked before the operator is read.
        assert!(parse_err("-bad in (").starts_with("unable to parse requirement: <nil>:"));
        // Valid prefixes.
        let prefix253 = format!(
            "{}.{}.{}.{}",
            "a".repeat(63),
            "b".repeat(63),
            "c".repeat(63),
            "d".repeat(61)
        );
        assert_eq!(prefix253.len(), 253);
        assert_eq!(parse(&format!("{prefix253}/k")).len(), 1);
        let prefix254 = format!("{prefix253}e");
        assert!(parse_err(&format!("{prefix254}/k"))
            .ends_with("prefix part must be no more than 253 characters"));
    }

    #[test]
    fn invalid_values() {
        assert_eq!(
            parse_err("a=-bad"),
            format!(
                "unable to parse requirement: values[0][a]: Invalid value: \"-bad\": {LABEL_VALUE_REGEX}"
            )
        );
        assert_eq!(
            parse_err("a in (ok,bad-)"),
            format!(
                "unable to parse requirement: values[0][a]: Invalid value: \"bad-\": {LABEL_VALUE_REGEX}"
            )
        );
        // Index after sorting.
        assert_eq!(
            parse_err("a in (zz,-bad)"),
            format!(
                "unable to parse requirement: values[0][a]: Invalid value: \"-bad\": {LABEL_VALUE_REGEX}"
            )
        );
        assert_eq!(
            parse_err("a notin (b,c_)"),
            format!(
                "unable to parse requirement: values[1][a]: Invalid value: \"c_\": {LABEL_VALUE_REGEX}"
            )
        );
        let long = "v".repeat(64);
        assert_eq!(
            parse_err(&format!("a={long}")),
            format!(
                "unable to parse requirement: values[0][a]: Invalid value: \"{long}\": must be no more than 63 characters"
            )
        );
        // Several errors are aggregated.
        assert_eq!(
            parse_err("a in (-x,-y)"),
            format!(
                "unable to parse requirement: [values[0][a]: Invalid value: \"-x\": {LABEL_VALUE_REGEX}, values[1][a]: Invalid value: \"-y\": {LABEL_VALUE_REGEX}]"
            )
        );
        assert_eq!(
            parse_err("a=b/c"),
            format!(
                "unable to parse requirement: values[0][a]: Invalid value: \"b/c\": {LABEL_VALUE_REGEX}"
            )
        );
    }

    #[test]
    fn gt_lt_non_integer() {
        assert_eq!(
            parse_err("a>b"),
            "unable to parse requirement: values[0]: Invalid value: \"b\": for 'Gt', 'Lt' operators, the value must be an integer"
        );
        assert_eq!(
            parse_err("x<a"),
            "unable to parse requirement: values[0]: Invalid value: \"a\": for 'Gt', 'Lt' operators, the value must be an integer"
        );
        assert_eq!(
            parse_err("a>"),
            "unable to parse requirement: values[0]: Invalid value: \"\": for 'Gt', 'Lt' operators, the value must be an integer"
        );
        assert_eq!(
            parse_err("a>1.5"),
            "unable to parse requirement: values[0]: Invalid value: \"1.5\": for 'Gt', 'Lt' operators, the value must be an integer"
        );
        assert!(parse_err("a>99999999999999999999").contains("must be an integer"));
        // A negative bound is an integer but not a valid label value (as in Go).
        assert_eq!(
            parse_err("a>-1"),
            format!(
                "unable to parse requirement: values[0][a]: Invalid value: \"-1\": {LABEL_VALUE_REGEX}"
            )
        );
        assert_eq!(
            parse_err("a<-x"),
            format!(
                "unable to parse requirement: [values[0]: Invalid value: \"-x\": for 'Gt', 'Lt' operators, the value must be an integer, values[0][a]: Invalid value: \"-x\": {LABEL_VALUE_REGEX}]"
            )
        );
    }

    #[test]
    fn display_round_trip() {
        for (input, want) in [
            ("x=a,y=b,z=c", "x=a,y=b,z=c"),
            ("x!=a,y=b", "x!=a,y=b"),
            ("x= ,z= ", "x=,z="),
            ("!x", "!x"),
            ("x>1,z<5", "x>1,z<5"),
            ("b in (z, a), a", "a,b in (a,z)"),
            ("a==b", "a=b"),
            ("a notin (b)", "a!=b"),
        ] {
            let sel = parse_label_selector(input).unwrap();
            assert_eq!(sel.to_string(), want, "{input:?}");
            assert_eq!(LabelSelector::parse(&sel.to_string()).unwrap(), sel);
        }
    }

    // --- label selectors: matching through parsed selectors ---

    #[test]
    fn label_matching() {
        assert!(label_matches("", &[("x", "y")]));
        assert!(label_matches("x=y", &[("x", "y")]));
        assert!(label_matches("x=y,z=w", &[("x", "y"), ("z", "w")]));
        assert!(label_matches("x!=y,z!=w", &[("x", "z"), ("z", "a")]));
        assert!(label_matches("notin=in", &[("notin", "in")]));
        assert!(label_matches("x", &[("x", "z")]));
        assert!(label_matches("!x", &[("y", "z")]));
        assert!(label_matches("x>1", &[("x", "2")]));
        assert!(label_matches("x<1", &[("x", "0")]));
        assert!(!label_matches("x=z", &[]));
        assert!(!label_matches("x=y", &[("x", "z")]));
        assert!(!label_matches("x=y,z=w", &[("x", "w"), ("z", "w")]));
        assert!(!label_matches("x!=y,z!=w", &[("x", "z"), ("z", "w")]));
        assert!(!label_matches("x", &[("y", "z")]));
        assert!(!label_matches("!x", &[("x", "z")]));
        assert!(!label_matches("x>1", &[("x", "0")]));
        assert!(!label_matches("x<1", &[("x", "2")]));
        assert!(!label_matches("x>1", &[]));
        assert!(!label_matches("x>1", &[("x", "v2")]));

        let set = [("foo", "bar"), ("baz", "blah")];
        assert!(label_matches("foo=bar", &set));
        assert!(label_matches("baz=blah", &set));
        assert!(label_matches("foo=bar,baz=blah", &set));
        assert!(!label_matches("foo=blah", &set));
        assert!(!label_matches("baz=bar", &set));
        assert!(!label_matches("foo=bar,foobar=bar,baz=blah", &set));

        // notin / != match a missing label.
        assert!(label_matches("env notin (prod)", &[]));
        assert!(label_matches("env notin (prod)", &[("env", "dev")]));
        assert!(!label_matches("env notin (prod)", &[("env", "prod")]));
        assert!(label_matches("env!=prod", &[("app", "x")]));
        assert!(label_matches(
            "env in (prod, staging)",
            &[("env", "staging")]
        ));
        assert!(!label_matches("env in (prod, staging)", &[("env", "dev")]));
        assert!(!label_matches("env in (prod, staging)", &[]));

        // Empty values.
        assert!(label_matches("x=", &[("x", "")]));
        assert!(!label_matches("x=", &[]));
        assert!(!label_matches("x in ()", &[("y", "baz")]));
        assert!(label_matches("x notin (),y", &[("y", "")]));
        assert!(!label_matches("x notin (),!y", &[("y", "")]));
        assert!(label_matches("!x,y", &[("y", "")]));
    }

    // --- field selectors ---
}
