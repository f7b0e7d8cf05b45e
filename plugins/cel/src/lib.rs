//! # wasm-apiserver-cel
//!
//! The Common Expression Language as Kubernetes evaluates it (`k8s.io/apiserver/pkg/cel`), one
//! crate for every use of this round — CustomResourceDefinition `x-kubernetes-validations`,
//! ValidatingAdmissionPolicy and MutatingAdmissionPolicy expressions and `matchConditions`, the
//! claim mappings of structured authentication — for the host and inside wasm components (it
//! builds for `wasm32-wasip2`).
//!
//! It wraps the `cel` crate (cel-rust, pinned: its minor releases change the API), which parses
//! (cel-go's grammar and error format, macros `has`, `all`, `exists`, `exists_one`, `map`,
//! `filter`, optional syntax) and interprets. Compared: `rscel` (non-standard default
//! semantics, protobuf code generation in its build), `cel-rs` (dormant since 2024), `cel-cxx`
//! (binds the C++ implementation: no wasm). None of them type-checks or counts cost; both are
//! this crate's to add, over the parsed expression.
//!
//! - [`escaping`]: property names as identifiers (`escaping.go`);
//! - [`limits`]: kube's per-call, per-object and estimated cost limits;
//! - [`types`]: CEL types, with the sizes a schema bounds;
//! - [`schema`]: the type of a structural schema's values (`SchemaDeclType`);
//! - [`checker`]: type checking against declared [`Variables`], cel-go's errors;
//! - [`value`]: JSON objects as CEL values, shaped by their schema type when there is one;
//! - [`library`]: Kubernetes' libraries, registered on every expression's environment;
//! - [`Expression`]: compile (and check) once, evaluate with named variables.
//!
//! ## Kubernetes' libraries and what this crate supports
//!
//! | library (`k8s.io/apiserver/pkg/cel/library`, kube version) | functions | here |
//! |---|---|---|
//! | CEL standard library | operators, `size`, `contains`, `startsWith`, `endsWith`, `matches`, conversions, `duration`, `timestamp` and their getters, macros | yes (the `cel` crate; `matches` is [`library::regex`]'s, with its pattern cache) |
//! | optional types (1.28) | `?.`, `[?]`, `optional.of/none/ofNonZeroValue`, `hasValue`, `value`, `or`, `orValue`, `optMap`, `optFlatMap` | yes; `first`, `last`, `optional.unwrap`, `unwrapOpt`: not yet |
//! | `ext.Strings` v2 (1.29) | `charAt`, `indexOf`, `lastIndexOf`, `lowerAscii`, `upperAscii`, `replace`, `split`, `substring`, `trim`, `join`, `format`, `strings.quote` | yes (the `cel` crate's extension, a later version: its `reverse` is refused by the checker, as kube's version 2 has none) |
//! | URLs (1.0) | `url`, `isURL`, `getScheme`, `getHost`, `getHostname`, `getPort`, `getEscapedPath`, `getQuery` | yes ([`library::urls`], over a port of Go's `url.ParseRequestURI`) |
//! | regex (1.0) | `find`, `findAll` | yes ([`library::regex`]: compiled patterns cached per thread, as kube compiles constant ones once; an invalid pattern's reason is worded by the `regex` crate) |
//! | lists (1.0) | `isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf` | yes ([`library::lists`]; `sum` of an empty list is `int` 0 until types are checked); `includes` (lists v1, 1.37): not yet |
//! | authz (1.27), authz selectors (1.31) | `path`, `group`, `serviceAccount`, `resource`, `subresource`, `namespace`, `name`, `check`, `allowed`, `errored`, `reason`, `error`, `fieldSelector`, `labelSelector` | yes ([`library::authz`]: the caller's `Authorizer` decides; selectors are passed to it as written) |
//! | quantity (1.28) | `quantity`, `isQuantity`, `sign`, `isGreaterThan`, `isLessThan`, `compareTo`, `asApproximateFloat`, `asInteger`, `isInteger`, `add`, `sub` | yes ([`library::quantity`], over the apimachinery crate's `Quantity`); `mul`, `div`, `divInt` (newer kube): not yet |
//! | `ext.Sets` (1.29) | `sets.contains`, `sets.equivalent`, `sets.intersects` | yes ([`library::sets`]) |
//! | IP (1.30) | `ip`, `isIP`, `ip.isCanonical`, `family`, `isUnspecified`, `isLoopback`, `isLinkLocalMulticast`, `isLinkLocalUnicast`, `isGlobalUnicast`, `string` | yes ([`library::ip`]; a parse error's reason is netip's generic one) |
//! | CIDR (1.30) | `cidr`, `isCIDR`, `containsIP`, `containsCIDR`, `ip`, `prefixLength`, `masked`, `string` | yes ([`library::cidr`]) |
//! | format (1.31) | `format.named`, `format.dns1123Label()` … `format.datetime()`, `validate` | yes ([`library::format`]) but `format.uri()` |
//! | two-variable comprehensions (1.32) | `all`, `exists`, `existsOne`, `transformList`, `transformMap`, `transformMapEntry` with two variables | not yet (the `cel` crate declares no two-variable macros) |
//! | semver (1.33) | `semver`, `isSemver` (with `normalize`), `isGreaterThan`, `isLessThan`, `compareTo`, `major`, `minor`, `patch` | yes ([`library::semver`]; parse errors worded by the `semver` crate) |
//! | `ext.Lists` v3 (1.34) | `slice`, `flatten`, `distinct`, `reverse`, `sort`, `sortBy`, `lists.range` | not yet |
//!
//! Every function above that is supported is declared to the [`checker`] with kube's overloads
//! (`checker/decls.rs`); one that is not is undeclared, so a rule calling it is refused when
//! it is compiled.
//!
//! ## Types and cost
//!
//! - [`Expression::compile_checked`] checks an expression against [`Variables`] typed from a
//!   structural schema ([`schema::schema_type`]: objects, maps from `additionalProperties`,
//!   lists, int-or-string as `dyn`, embedded resources, formats), with cel-go's errors
//!   (undeclared references, no matching overload, undefined fields), and gives the result
//!   type for the caller to require (`bool` for a rule, `string` for a `messageExpression`).
//! - [`Expression::estimated_cost`]: cel-go's static estimate with kube's library costs and
//!   the schema's bounds ([`static_cost`]); past
//!   [`limits::STATIC_ESTIMATED_COST_LIMIT`] kube refuses a CRD rule — the caller warns
//!   instead, with [`static_cost::cost_error_message`].
//! - Every evaluation counts its cost as cel-go's tracker would ([`runtime_cost`]) and stops
//!   past its limit ([`Expression::evaluate_with_limit`]; [`limits::PER_CALL_LIMIT`] by
//!   default), the [`EvalError`] saying what it had spent.

pub mod checker;
pub mod cost;
pub mod environment;
pub mod escaping;
pub mod library;
pub mod limits;
pub mod runtime_cost;
pub mod schema;
pub mod static_cost;
pub mod types;
pub mod value;

pub use checker::{Checked, Variables};
pub use types::Type;

use std::sync::Arc;

pub use cel::Value;

/// A compiled expression (`cel.Program`): parsed once, evaluated any number of times.
pub struct Expression {
    env: Arc<cel::Env>,
    program: cel::Program,
    /// The program rewritten to count its cost ([`runtime_cost`]): what is evaluated.
    instrumented: runtime_cost::Instrumented,
    checked: Option<(Checked, Variables)>,
    estimate: Option<static_cost::CostEstimate>,
}

/// Why an expression does not compile: cel-go's text (`ERROR: <input>:1:5: …` with the
/// source line and a caret), as kube quotes it in `compilation failed: …`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CompileError(pub String);

impl std::fmt::Display for CompileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CompileError {}

/// Why an evaluation failed: cel-go's text where the `cel` crate's error has a cel-go
/// counterpart (`no such key: x`), the crate's own otherwise; for an evaluation stopped by
/// its cost limit, cel-go's `operation cancelled: actual cost limit exceeded` and the cost
/// spent by then.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EvalError {
    pub message: String,
    /// Set when the evaluation passed its cost limit: the cost it had spent when stopped.
    pub cost_limit_exceeded: Option<u64>,
}

impl EvalError {
    /// A failure with `message`.
    pub fn new(message: impl Into<String>) -> EvalError {
        EvalError {
            message: message.into(),
            cost_limit_exceeded: None,
        }
    }
}

impl std::fmt::Display for EvalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// A value and what computing it cost, in cel-go's units ([`cost`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Evaluated {
    pub value: Value,
    pub cost: u64,
}

impl std::error::Error for EvalError {}

impl Expression {
    /// Compile `source` in the standard environment with Kubernetes' libraries ([`library`]),
    /// without checking types. Errors: it does not parse.
    pub fn compile(source: &str) -> Result<Expression, CompileError> {
        static ENV: std::sync::OnceLock<Arc<cel::Env>> = std::sync::OnceLock::new();
        let env = ENV
            .get_or_init(|| {
                let mut env = cel::Env::stdlib();
                library::register(&mut env).expect("the libraries declare each overload once");
                runtime_cost::register(&mut env).expect("the cost hooks are declared once");
                Arc::new(env)
            })
            .clone();
        // cel-go indents the source line and the caret line by one space.
        let program = env
            .compile(source)
            .map_err(|e| CompileError(e.to_string().replace("\n| ", "\n | ")))?;
        let instrumented = runtime_cost::instrument(program.expression());
        Ok(Expression {
            env,
            program,
            instrumented,
            checked: None,
            estimate: None,
        })
    }

    /// Compile `source` and check its types against `variables` ([`checker`]). Errors: it does
    /// not parse, or does not check (cel-go's messages, every one).
    pub fn compile_checked(
        source: &str,
        variables: &Variables,
    ) -> Result<Expression, CompileError> {
        let mut e = Expression::compile(source)?;
        let checked = checker::check(e.program.expression(), e.program.source_info(), variables)?;
        e.estimate = Some(static_cost::estimate(e.program.expression(), &checked));
        e.checked = Some((checked, variables.clone()));
        Ok(e)
    }

    /// The static cost estimate ([`static_cost`]) of an expression compiled checked; `None`
    /// when compiled unchecked. kube refuses a CRD rule whose maximum passes
    /// [`limits::STATIC_ESTIMATED_COST_LIMIT`]; [`static_cost::cost_error_message`] words it.
    pub fn estimated_cost(&self) -> Option<static_cost::CostEstimate> {
        self.estimate
    }

    /// The types [`Expression::compile_checked`] found; `None` when compiled unchecked.
    pub fn checked(&self) -> Option<&Checked> {
        self.checked.as_ref().map(|(c, _)| c)
    }

    /// Evaluate with `variables` bound by name (`self`, `oldSelf`, `object`, …), each a JSON
    /// value: of its declared type when the expression was checked
    /// ([`value::from_json_typed`]), else [`value::from_json`]; within kube's per-call cost
    /// limit ([`limits::PER_CALL_LIMIT`]). Errors: a missing field or variable, no matching
    /// overload, a function's own error, the cost limit passed.
    pub fn evaluate(&self, variables: &[(&str, &serde_json::Value)]) -> Result<Value, EvalError> {
        self.evaluate_with_limit(variables, limits::PER_CALL_LIMIT)
            .map(|e| e.value)
    }

    /// [`Expression::evaluate`] within `limit` cost units (the smaller of the per-call limit
    /// and what is left of an object's budget), and what it cost ([`runtime_cost`]).
    pub fn evaluate_with_limit(
        &self,
        variables: &[(&str, &serde_json::Value)],
        limit: u64,
    ) -> Result<Evaluated, EvalError> {
        self.run(variables, None, limit)
    }

    /// [`Expression::evaluate_with_limit`] with `authorizer` bound to `authorizer` (an
    /// admission expression's; [`library::authz`]).
    pub fn evaluate_authorized(
        &self,
        variables: &[(&str, &serde_json::Value)],
        authorizer: Arc<dyn library::authz::Authorizer>,
        limit: u64,
    ) -> Result<Evaluated, EvalError> {
        self.run(variables, Some(authorizer), limit)
    }

    fn run(
        &self,
        variables: &[(&str, &serde_json::Value)],
        authorizer: Option<Arc<dyn library::authz::Authorizer>>,
        limit: u64,
    ) -> Result<Evaluated, EvalError> {
        let mut context = cel::Context::with_env(self.env.clone());
        if let Some(a) = authorizer {
            let value = library::authz::AuthorizerVal::new(a);
            context.add_variable_as_val("authorizer", Box::new(value));
        }
        for (name, v) in variables {
            let declared = self.checked.as_ref().and_then(|(_, vars)| vars.get(name));
            let value = match declared {
                Some(t) => value::from_json_typed(v, t),
                None => value::from_json(v),
            };
            context.add_variable_from_value(*name, value);
        }
        let run = self
            .instrumented
            .run(limit, || Value::resolve(&self.instrumented.expr, &context));
        match run {
            Ok((Ok(value), cost)) => Ok(Evaluated { value, cost }),
            Ok((Err(e), _)) => Err(EvalError::new(match e {
                // cel-go's `types.NewErr("no such key: %v")`.
                cel::ExecutionError::NoSuchKey(k) => format!("no such key: {k}"),
                // A library function's own error is its text alone, as cel-go's `types.NewErr`.
                cel::ExecutionError::FunctionError { message, .. } => message,
                e => e.to_string(),
            })),
            Err(spent) => Err(EvalError {
                message: runtime_cost::COST_LIMIT_EXCEEDED.to_string(),
                cost_limit_exceeded: Some(spent),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn eval(rule: &str, obj: &serde_json::Value) -> Result<Value, EvalError> {
        Expression::compile(rule)
            .unwrap()
            .evaluate(&[("self", obj)])
    }

    #[test]
    fn rules_over_an_object() {
        let obj = json!({"spec": {"replicas": 3, "minReplicas": 1, "image": "nginx:1.27",
                                  "ports": [{"port": 80}, {"port": 443}],
                                  "labels": {"team": "a"}}});
        for (rule, want) in [
            ("self.spec.replicas >= self.spec.minReplicas", true),
            ("self.spec.replicas <= 2", false),
            ("has(self.spec.image) && !has(self.spec.command)", true),
            ("self.spec.ports.all(p, p.port > 0 && p.port < 65536)", true),
            ("self.spec.ports.exists_one(p, p.port == 443)", true),
            (
                "self.spec.ports.map(p, p.port).filter(x, x > 100).size() == 1",
                true,
            ),
            ("self.spec.image.matches('^nginx:[0-9.]+$')", true),
            (
                "'team' in self.spec.labels && self.spec.labels['team'] == 'a'",
                true,
            ),
            ("self.spec.?command.orValue('none') == 'none'", true),
        ] {
            assert_eq!(eval(rule, &obj), Ok(Value::Bool(want)), "{rule}");
        }
    }

    #[test]
    fn compile_and_evaluation_errors_say_what_failed() {
        let e = Expression::compile("self.spec.replicas >").err().unwrap();
        assert!(
            e.0.starts_with("ERROR: <input>:1:21: Syntax error: mismatched input '<EOF>'"),
            "{e}"
        );
        assert!(
            e.0.ends_with("\n | self.spec.replicas >\n | ....................^"),
            "{e}"
        );
        let e = eval("self.spec.missing == 1", &json!({"spec": {}})).unwrap_err();
        assert_eq!(e.message, "no such key: missing");
        let e = eval(
            "self.spec.replicas + 'x'",
            &json!({"spec": {"replicas": 1}}),
        )
        .unwrap_err();
        assert!(
            e.message.contains("no matching overload") || e.message.contains("Unsupported"),
            "{e}"
        );
    }

    /// cel-go's `ext.Strings` version 2 (`ext/strings_test.go` cases, rewritten), checked and
    /// evaluated.
    #[test]
    fn strings_extension() {
        let vars = Variables::new();
        for rule in [
            "'hello'.charAt(1) == 'e' && 'hello'.charAt(5) == ''",
            "'hello mellow'.indexOf('ello', 2) == 7 && 'hello mellow'.lastIndexOf('ello') == 7",
            "'TacoCat'.lowerAscii() == 'tacocat' && 'TacoCat'.upperAscii() == 'TACOCAT'",
            "'hello hello'.replace('he', 'we', 1) == 'wello hello'",
            "'hello hello'.replace('he', 'we') == 'wello wello'",
            "'hello world'.split(' ') == ['hello', 'world'] && 'a,b,c'.split(',', 2) == ['a', 'b,c']",
            "'tacocat'.substring(4) == 'cat' && 'tacocat'.substring(0, 4) == 'taco'",
            "' \\ttrim\\n '.trim() == 'trim'",
            "['x', 'y'].join('-') == 'x-y' && ['x', 'y'].join() == 'xy'",
            "strings.quote('a\"b') == '\"a\\\\\"b\"'",
            "'%s is %d'.format(['a', 1]) == 'a is 1'",
        ] {
            let e = Expression::compile_checked(rule, &vars).unwrap_or_else(|e| panic!("{rule}: {e}"));
            assert_eq!(e.evaluate(&[]), Ok(Value::Bool(true)), "{rule}");
        }
        let e = Expression::compile("'hello'.charAt(10)").unwrap();
        assert_eq!(
            e.evaluate(&[]).unwrap_err().message,
            "index out of range: 10"
        );
        // `reverse` is version 3's: kube's environment has none.
        let e = Expression::compile_checked("'abc'.reverse()", &vars)
            .err()
            .unwrap();
        assert!(e.0.contains("undeclared reference to 'reverse'"), "{e}");
    }

    /// kube's authorization library (`authz_test.go`'s shapes, rewritten) against an
    /// authorizer that allows reading deployments in `default` and the path `/healthz`.
    #[test]
    fn authz() {
        use library::authz::{Attributes, Authorizer, Decision};
        struct Fake(std::sync::Mutex<Vec<Attributes>>);
        impl Authorizer for Fake {
            fn authorize(&self, a: &Attributes) -> Decision {
                self.0.lock().unwrap().push(a.clone());
                let allowed = a.path.as_deref() == Some("/healthz")
                    || (a.group == "apps"
                        && a.resource == "deployments"
                        && a.verb == "get"
                        && a.namespace == "default");
                let error = (a.resource == "broken").then(|| "no opinion: broken".to_string());
                Decision {
                    allowed,
                    reason: if allowed {
                        "rbac".into()
                    } else {
                        String::new()
                    },
                    error,
                }
            }
        }
        let fake = Arc::new(Fake(Default::default()));
        let vars = environment::admission(&[]);
        for (rule, want) in [
            ("authorizer.path('/healthz').check('get').allowed()", true),
            ("authorizer.group('apps').resource('deployments').namespace('default').check('get').allowed()", true),
            ("authorizer.group('apps').resource('deployments').namespace('other').check('get').allowed()", false),
            ("authorizer.group('apps').resource('deployments').namespace('default').check('get').reason() == 'rbac'", true),
            ("authorizer.group('').resource('broken').check('get').errored()", true),
            ("authorizer.group('').resource('broken').check('get').error() == 'no opinion: broken'", true),
            ("authorizer.serviceAccount('ns', 'sa').group('').resource('pods').subresource('log').name('p').fieldSelector('a=b').labelSelector('c').check('list').allowed()", false),
        ] {
            let e = Expression::compile_checked(rule, &vars).unwrap_or_else(|e| panic!("{rule}: {e}"));
            let out = e.evaluate_authorized(&[], fake.clone(), limits::PER_CALL_LIMIT).unwrap();
            assert_eq!(out.value, Value::Bool(want), "{rule}");
        }
        let last = fake.0.lock().unwrap().last().cloned().unwrap();
        assert_eq!(last.service_account, Some(("ns".into(), "sa".into())));
        assert_eq!(
            (
                last.subresource.as_str(),
                last.name.as_str(),
                last.verb.as_str()
            ),
            ("log", "p", "list")
        );
        assert_eq!(
            (last.field_selector.as_str(), last.label_selector.as_str()),
            ("a=b", "c")
        );
        // Each check costs 350,000: three exceed the per-call limit, as in kube.
        let three = "authorizer.path('/a').check('get').allowed() || authorizer.path('/b').check('get').allowed() || authorizer.path('/c').check('get').allowed()";
        let e = Expression::compile_checked(three, &vars).unwrap();
        assert!(e.estimated_cost().unwrap().max > limits::PER_CALL_LIMIT);
        let err = e
            .evaluate_authorized(&[], fake.clone(), limits::PER_CALL_LIMIT)
            .unwrap_err();
        assert!(err.cost_limit_exceeded.is_some(), "{err}");
    }

    /// kube's URL library (`urls_test.go` cases, rewritten), checked and evaluated.
    #[test]
    fn urls() {
        let vars = Variables::new();
        for rule in [
            "isURL('https://user:pass@example.com:80/path?query=val#fragment')",
            "!isURL('../relative-path') && !isURL('not a url') && !isURL('')",
            "isURL('/absolute-path') && url('/absolute-path').getScheme() == ''",
            "url('HTTPS://example.com/path').getScheme() == 'https'",
            "url('https://example.com:80/').getHost() == 'example.com:80'",
            "url('https://[::1]:80/').getHost() == '[::1]:80'",
            "url('https://[::1]:80/').getHostname() == '::1'",
            "url('https://example.com:80/').getPort() == '80'",
            "url('https://example.com/').getPort() == ''",
            "url('https://example.com/path with spaces/').getEscapedPath() == '/path%20with%20spaces/'",
            "url('https://example.com/a%2Fb').getEscapedPath() == '/a%2Fb'",
            "url('https://example.com/path?k1=a&k2=b&k2=c').getQuery() == {'k1': ['a'], 'k2': ['b', 'c']}",
            "url('https://example.com/?a=1+2&b=%zz&c').getQuery() == {'a': ['1 2'], 'c': ['']}",
            "url('https://example.com/?').getQuery() == {}",
            "url('https://example.com') == url('https://example.com')",
        ] {
            let e = Expression::compile_checked(rule, &vars).unwrap_or_else(|e| panic!("{rule}: {e}"));
            assert_eq!(e.evaluate(&[]), Ok(Value::Bool(true)), "{rule}");
        }
        for (rule, want) in [
            ("url('../relative')", "URL parse error during conversion from string: parse \"../relative\": invalid URI for request"),
            ("url('https://example.com:8x/')", "URL parse error during conversion from string: parse \"https://example.com:8x/\": invalid port \":8x\" after host"),
            ("url(':x')", "URL parse error during conversion from string: parse \":x\": missing protocol scheme"),
        ] {
            let e = Expression::compile(rule).unwrap();
            assert_eq!(e.evaluate(&[]).unwrap_err().message, want, "{rule}");
        }
    }

    /// kube's regex library (`library_test.go` cases, rewritten).
    #[test]
    fn find_and_find_all() {
        let none = json!(null);
        for (rule, want) in [
            ("'abc 123'.find('[0-9]+') == '123'", true),
            ("'abc 123'.find('xyz') == ''", true),
            ("'123 abc 456'.findAll('[0-9]+') == ['123', '456']", true),
            ("'123 abc 456'.findAll('[0-9]+', 1) == ['123']", true),
            ("'123 abc 456'.findAll('[0-9]+', 0) == []", true),
            ("'123 abc 456'.findAll('[0-9]+', -1).size() == 2", true),
            ("'123 abc 456'.findAll('xyz') == []", true),
            (
                "'abc'.matches('^a') && matches('abc', 'c$') && !'abc'.matches('^b')",
                true,
            ),
        ] {
            assert_eq!(eval(rule, &none), Ok(Value::Bool(want)), "{rule}");
        }
        let e = eval("'x'.find('[')", &none).unwrap_err();
        assert!(e.message.starts_with("Illegal regex: "), "{e}");
        let e = eval("'x'.matches('[')", &none).unwrap_err();
        assert!(e.message.starts_with("'[' not a valid regex:"), "{e}");
    }

    /// kube's list library (`lists_test.go` cases, rewritten).
    #[test]
    fn list_functions() {
        let none = json!(null);
        for (rule, want) in [
            ("[1, 2, 2, 3].isSorted()", true),
            ("[1, 3, 2].isSorted()", false),
            ("['a', 'b'].isSorted() && [].isSorted()", true),
            ("[1, 2, 3].sum() == 6", true),
            ("[1.5, 2.5].sum() == 4.0", true),
            ("[].sum() == 0", true),
            ("[3, 1, 2].min() == 1 && [3, 1, 2].max() == 3", true),
            ("['b', 'a'].min() == 'a'", true),
            (
                "[1, 2, 1].indexOf(1) == 0 && [1, 2, 1].lastIndexOf(1) == 2",
                true,
            ),
            (
                "[1, 2].indexOf(5) == -1 && [1, 2].lastIndexOf(5) == -1",
                true,
            ),
            ("['x', 'y'].indexOf('y') == 1", true),
        ] {
            assert_eq!(eval(rule, &none), Ok(Value::Bool(want)), "{rule}");
        }
        assert_eq!(
            eval("[].min()", &none),
            Err(EvalError::new("min called on empty list"))
        );
        assert_eq!(
            eval("[].max()", &none),
            Err(EvalError::new("max called on empty list"))
        );
        // A list from the object, as a rule sees one.
        let obj = json!({"spec": {"ports": [80, 443, 8080]}});
        assert_eq!(
            eval(
                "self.spec.ports.isSorted() && self.spec.ports.max() == 8080",
                &obj
            ),
            Ok(Value::Bool(true))
        );
    }

    /// kube's quantity library (`quantity_test.go` and the library's documented examples).
    #[test]
    fn quantities() {
        let none = json!(null);
        for (rule, want) in [
            ("quantity('200M').compareTo(quantity('0.2G')) == 0", true),
            ("quantity('50M').compareTo(quantity('50Mi')) == -1", true),
            ("quantity('50Mi').compareTo(quantity('50M')) == 1", true),
            ("quantity('150Mi').isGreaterThan(quantity('100Mi'))", true),
            ("quantity('50Mi').isGreaterThan(quantity('100Mi'))", false),
            ("quantity('50M').isLessThan(quantity('100M'))", true),
            ("quantity('200M') == quantity('0.2G')", true),
            (
                "quantity('50k').add(quantity('20k')) == quantity('70k')",
                true,
            ),
            ("quantity('50k').add(20) == quantity('50020')", true),
            (
                "quantity('50k').sub(quantity('20k')) == quantity('30k')",
                true,
            ),
            ("quantity('50k').sub(20000) == quantity('30k')", true),
            (
                "quantity('50k').add(20).sub(quantity('100k')).sub(-50000) == quantity('20')",
                true,
            ),
            ("quantity('50.703k').asApproximateFloat() == 50703.0", true),
            (
                "quantity('50k').isInteger() && quantity('50k').asInteger() == 50000",
                true,
            ),
            (
                "quantity('9999999999999999999999999999999999999G').isInteger()",
                false,
            ),
            ("quantity('50m').isInteger()", false),
            (
                "sign(quantity('-50m')) == -1 && sign(quantity('0')) == 0",
                true,
            ),
            ("isQuantity('1.5Gi') && !isQuantity('1Gb')", true),
        ] {
            assert_eq!(eval(rule, &none), Ok(Value::Bool(want)), "{rule}");
        }
        assert_eq!(
            eval("quantity('50m').asInteger()", &none),
            Err(EvalError::new("cannot convert value to integer"))
        );
        assert_eq!(
            eval("quantity('1Gb')", &none),
            Err(EvalError::new(
                wasm_apiserver_apimachinery::quantity::ERR_FORMAT_WRONG
            ))
        );
        // A rule over an object's quantities, as a CRD rule reads them.
        let obj = json!({"spec": {"requests": "500Mi", "limits": "1Gi"}});
        assert_eq!(
            eval(
                "quantity(self.spec.requests).isLessThan(quantity(self.spec.limits))",
                &obj
            ),
            Ok(Value::Bool(true))
        );
    }

    /// cel-go's sets extension (`ext/sets_test.go` cases, rewritten).
    #[test]
    fn sets() {
        let none = json!(null);
        for (rule, want) in [
            ("sets.contains([], [])", true),
            ("sets.contains([1, 2, 3], [2, 3])", true),
            ("sets.contains([1, 2], [2, 2, 1])", true),
            ("sets.contains([1, 2], [3])", false),
            ("sets.equivalent([1, 2, 2], [2, 1])", true),
            ("sets.equivalent([1, 2], [1, 3])", false),
            ("sets.intersects([1, 2], [2, 5])", true),
            ("sets.intersects([1], [])", false),
            ("sets.contains(['a', 'b'], ['b'])", true),
        ] {
            assert_eq!(eval(rule, &none), Ok(Value::Bool(want)), "{rule}");
        }
    }

    /// kube's IP library (the library's documented examples and `ip_test.go` cases).
    #[test]
    fn ip_addresses() {
        let none = json!(null);
        for (rule, want) in [
            (
                "isIP('1.2.3.4') && isIP('2001:db8::abcd') && !isIP('1.2.3')",
                true,
            ),
            (
                "ip.isCanonical('127.0.0.1') && ip.isCanonical('2001:db8::abcd')",
                true,
            ),
            (
                "ip.isCanonical('2001:DB8::ABCD') || ip.isCanonical('2001:db8::0:0:0:abcd')",
                false,
            ),
            (
                "ip('127.0.0.1').family() == 4 && ip('::1').family() == 6",
                true,
            ),
            (
                "ip('0.0.0.0').isUnspecified() && ip('::').isUnspecified()",
                true,
            ),
            ("ip('127.0.0.1').isUnspecified()", false),
            (
                "ip('127.0.0.1').isLoopback() && ip('::1').isLoopback()",
                true,
            ),
            ("ip('192.168.0.1').isLoopback()", false),
            (
                "ip('224.0.0.1').isLinkLocalMulticast() && ip('ff02::1').isLinkLocalMulticast()",
                true,
            ),
            (
                "ip('224.0.1.1').isLinkLocalMulticast() || ip('fd00::1').isLinkLocalMulticast()",
                false,
            ),
            (
                "ip('169.254.169.254').isLinkLocalUnicast() && ip('fe80::1').isLinkLocalUnicast()",
                true,
            ),
            (
                "ip('192.168.0.1').isLinkLocalUnicast() || ip('fd80::1').isLinkLocalUnicast()",
                false,
            ),
            (
                "ip('192.168.0.1').isGlobalUnicast() && ip('2001:db8::abcd').isGlobalUnicast()",
                true,
            ),
            (
                "ip('255.255.255.255').isGlobalUnicast() || ip('ff00::1').isGlobalUnicast()",
                false,
            ),
            (
                "string(ip('2001:db8:0:0:0:0:0:abcd')) == '2001:db8::abcd'",
                true,
            ),
            (
                "ip('10.0.0.1') == ip('10.0.0.1') && ip('10.0.0.1') != ip('10.0.0.2')",
                true,
            ),
        ] {
            assert_eq!(eval(rule, &none), Ok(Value::Bool(want)), "{rule}");
        }
        for (rule, want) in [
            ("ip('fe80::1%eth0')", "IP address \"fe80::1%eth0\" with zone value is not allowed"),
            ("ip('::ffff:1.2.3.4')", "IPv4-mapped IPv6 address \"::ffff:1.2.3.4\" is not allowed"),
            (
                "ip('foo')",
                "IP Address \"foo\" parse error during conversion from string: ParseAddr(\"foo\"): unable to parse IP",
            ),
        ] {
            assert_eq!(eval(rule, &none), Err(EvalError::new(want)), "{rule}");
        }
        assert_eq!(
            eval("string(1) == '1'", &none),
            Ok(Value::Bool(true)),
            "the standard string() keeps working beside string(net.IP)"
        );
    }

    /// kube's CIDR library (the library's documented examples and `cidr_test.go` cases).
    #[test]
    fn cidrs() {
        let none = json!(null);
        for (rule, want) in [
            ("isCIDR('192.168.0.0/16') && isCIDR('2001:db8::/32')", true),
            (
                "isCIDR('192.168.0.0') || isCIDR('192.168.0.0/33') || isCIDR('10.0.0.0/08')",
                false,
            ),
            ("cidr('192.168.0.0/24').containsIP(ip('192.168.0.1'))", true),
            ("cidr('192.168.0.0/24').containsIP('192.168.1.1')", false),
            ("cidr('2001:db8::/32').containsIP('2001:db8::1')", true),
            ("cidr('192.168.0.0/24').containsIP('::1')", false),
            (
                "cidr('192.168.0.0/16').containsCIDR(cidr('192.168.10.0/24'))",
                true,
            ),
            (
                "cidr('192.168.0.0/24').containsCIDR('192.168.0.0/16')",
                false,
            ),
            ("cidr('192.168.0.1/24').ip() == ip('192.168.0.1')", true),
            (
                "cidr('192.168.0.1/24').masked() == cidr('192.168.0.0/24')",
                true,
            ),
            ("cidr('192.168.0.0/24').prefixLength() == 24", true),
            ("string(cidr('2001:db8:0:0::/32')) == '2001:db8::/32'", true),
            ("cidr('10.0.0.1/8') == cidr('10.0.0.0/8')", false),
        ] {
            assert_eq!(eval(rule, &none), Ok(Value::Bool(want)), "{rule}");
        }
        let prefix = "network address parse error during conversion from string: ";
        assert_eq!(
            eval("cidr('192.168.0.0')", &none),
            Err(EvalError::new(format!(
                "{prefix}{prefix}netip.ParsePrefix(\"192.168.0.0\"): no '/'"
            )))
        );
        assert_eq!(
            eval("cidr('10.0.0.0/33')", &none),
            Err(EvalError::new(format!(
                "{prefix}{prefix}netip.ParsePrefix(\"10.0.0.0/33\"): prefix length out of range"
            )))
        );
        assert_eq!(
            eval("cidr('::ffff:1.2.3.4/128')", &none),
            Err(EvalError::new(format!(
                "{prefix}IPv4-mapped IPv6 address \"::ffff:1.2.3.4/128\" is not allowed"
            )))
        );
    }

    /// kube's format library (`format_test.go` cases, rewritten).
    #[test]
    fn named_formats() {
        let none = json!(null);
        for (rule, want) in [
            ("format.dns1123Label().validate('my-label-name') == optional.none()", true),
            ("format.dns1123Label().validate('UPPER').hasValue()", true),
            ("format.dns1123Subdomain().validate('apiextensions.k8s.io') == optional.none()", true),
            ("format.dns1035Label().validate('1abc').hasValue()", true),
            ("format.qualifiedName().validate('apiextensions.k8s.io/v1beta1') == optional.none()", true),
            ("format.dns1123LabelPrefix().validate('my-label-prefix-') == optional.none()", true),
            ("format.labelValue().validate('a_b.c') == optional.none()", true),
            ("format.named('dns1123Label').hasValue() && !format.named('nope').hasValue()", true),
            ("format.named('uuid').value().validate('123e4567-e89b-12d3-a456-426614174000') == optional.none()", true),
            ("format.uuid().validate('nope').value() == ['does not match the UUID format']", true),
            ("format.byte().validate('aGVsbG8=') == optional.none()", true),
            ("format.byte().validate('!').value() == ['invalid base64']", true),
            ("format.date().validate('2021-01-01') == optional.none()", true),
            ("format.date().validate('2021-13-01').value() == ['invalid date']", true),
            ("format.datetime().validate('2021-01-01T00:00:00Z') == optional.none()", true),
            ("format.datetime().validate('yesterday').value() == ['invalid datetime']", true),
        ] {
            assert_eq!(eval(rule, &none), Ok(Value::Bool(want)), "{rule}");
        }
        // The messages are apimachinery's.
        assert_eq!(
            eval("format.dns1123Label().validate('UPPER').value()[0]", &none),
            Ok(Value::String(std::sync::Arc::new(
                wasm_apiserver_apimachinery::validation::is_dns1123_label("UPPER")[0].clone()
            )))
        );
    }

    /// kube's semver library (the library's documented examples and `semver_test.go` cases).
    #[test]
    fn semantic_versions() {
        let none = json!(null);
        for (rule, want) in [
            ("semver('1.2.3').compareTo(semver('1.2.3')) == 0", true),
            ("semver('1.2.3').compareTo(semver('2.0.0')) == -1", true),
            ("semver('1.2.3').compareTo(semver('0.1.2')) == 1", true),
            ("semver('2.0.0').isGreaterThan(semver('1.9.9'))", true),
            ("semver('1.0.0-alpha').isLessThan(semver('1.0.0'))", true),
            ("semver('1.0.0+build1') == semver('1.0.0+build2')", true),
            ("semver('1.2.3').major() == 1 && semver('1.2.3').minor() == 2 && semver('1.2.3').patch() == 3", true),
            ("isSemver('1.2.3') && !isSemver('v1.2.3') && !isSemver('1.2')", true),
            ("isSemver('v1.2', true) && semver('v01.02', true) == semver('1.2.0')", true),
            ("isSemver('1.2-beta', true)", false),
        ] {
            assert_eq!(eval(rule, &none), Ok(Value::Bool(want)), "{rule}");
        }
        assert_eq!(
            eval("semver('1-beta', true)", &none),
            Err(EvalError::new(
                "short version cannot contain PreRelease/Build meta data"
            ))
        );
    }

    #[test]
    fn numbers_as_kube_types_them_without_a_schema() {
        let obj = json!({"i": 3, "u": u64::MAX, "d": 1.5});
        assert_eq!(eval("self.i", &obj), Ok(Value::Int(3)));
        assert_eq!(eval("self.u", &obj), Ok(Value::UInt(u64::MAX)));
        assert_eq!(eval("self.d", &obj), Ok(Value::Float(1.5)));
    }
}
