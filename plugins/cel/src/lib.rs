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
//! - [`environment`]: kube's variables per use and the result type each requires;
//! - [`value`]: JSON objects as CEL values, shaped by their schema type when there is one;
//! - [`library`]: Kubernetes' libraries, registered on every expression's environment;
//! - [`cost`], [`static_cost`], [`runtime_cost`], [`budget`]: cel-go's and kube's cost model,
//!   the static estimate, the run-time count and limit, one object's budget;
//! - [`Expression`]: compile (and check) once, evaluate with named variables.
//!
//! ## Kubernetes' libraries and what this crate supports
//!
//! | library (`k8s.io/apiserver/pkg/cel/library`, kube version) | functions | here |
//! |---|---|---|
//! | CEL standard library | operators, `size`, `contains`, `startsWith`, `endsWith`, `matches`, conversions, `duration`, `timestamp` and their getters, macros | yes (the `cel` crate; `matches` is [`library::regex`]'s, with its pattern cache) |
//! | optional types (1.28) | `?.`, `[?]`, `optional.of/none/ofNonZeroValue`, `hasValue`, `value`, `or`, `orValue`, `optMap`, `optFlatMap` | yes, with `first`, `last`, `optional.unwrap`, `unwrapOpt` of the later versions ([`library::optionals`]) |
//! | `ext.Strings` v2 (1.29) | `charAt`, `indexOf`, `lastIndexOf`, `lowerAscii`, `upperAscii`, `replace`, `split`, `substring`, `trim`, `join`, `format`, `strings.quote` | yes (the `cel` crate's extension, a later version: its `reverse` is refused by the checker, as kube's version 2 has none) |
//! | URLs (1.0) | `url`, `isURL`, `getScheme`, `getHost`, `getHostname`, `getPort`, `getEscapedPath`, `getQuery` | yes ([`library::urls`], over a port of Go's `url.ParseRequestURI`) |
//! | regex (1.0) | `find`, `findAll` | yes ([`library::regex`]: compiled patterns cached per thread, as kube compiles constant ones once; an invalid pattern's reason is worded by the `regex` crate) |
//! | lists (1.0) | `isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf` | yes ([`library::lists`]; `sum` of an empty list is `int` 0 until types are checked); `includes` (lists v1, 1.37): not yet |
//! | authz (1.27), authz selectors (1.31) | `path`, `group`, `serviceAccount`, `resource`, `subresource`, `namespace`, `name`, `check`, `allowed`, `errored`, `reason`, `error`, `fieldSelector`, `labelSelector` | yes ([`library::authz`]: the caller's `Authorizer` decides; selectors are passed to it as written) |
//! | quantity (1.28) | `quantity`, `isQuantity`, `sign`, `isGreaterThan`, `isLessThan`, `compareTo`, `asApproximateFloat`, `asInteger`, `isInteger`, `add`, `sub` | yes ([`library::quantity`], over the apimachinery crate's `Quantity`); `mul`, `div`, `divInt` (newer kube): not yet |
//! | `ext.Sets` (1.29) | `sets.contains`, `sets.equivalent`, `sets.intersects` | yes ([`library::sets`]) |
//! | IP (1.30) | `ip`, `isIP`, `ip.isCanonical`, `family`, `isUnspecified`, `isLoopback`, `isLinkLocalMulticast`, `isLinkLocalUnicast`, `isGlobalUnicast`, `string` | yes ([`library::ip`]; a parse error's reason is netip's generic one) |
//! | CIDR (1.30) | `cidr`, `isCIDR`, `containsIP`, `containsCIDR`, `ip`, `prefixLength`, `masked`, `string` | yes ([`library::cidr`]) |
//! | format (1.31) | `format.named`, `format.dns1123Label()` … `format.datetime()`, `validate` | yes ([`library::format`]) |
//! | two-variable comprehensions (1.32) | `all`, `exists`, `existsOne`, `transformList`, `transformMap`, `transformMapEntry` with two variables | yes ([`library::comprehensions`]: expanded to one-variable comprehensions over the pairs) |
//! | semver (1.33) | `semver`, `isSemver` (with `normalize`), `isGreaterThan`, `isLessThan`, `compareTo`, `major`, `minor`, `patch` | yes ([`library::semver`]; parse errors worded by the `semver` crate) |
//! | JSON patch (1.32) | `jsonpatch.escapeKey` | yes ([`library::jsonpatch`]) |
//! | mutation types (1.32) | `Object{…}`, `Object.<field>{…}`, `JSONPatch{…}` in a MutatingAdmissionPolicy's mutations | yes ([`mutation`], [`Expression::compile_mutation`]) |
//! | `ext.Lists` v3 (1.34) | `slice`, `flatten`, `distinct`, `reverse`, `sort`, `sortBy`, `lists.range` | not yet |
//!
//! Every function above that is supported is declared to the [`checker`] with kube's overloads
//! (`checker/decls.rs`); one that is not is undeclared, so a rule calling it is refused when
//! it is compiled. The table covers kube 1.32's environment (`environment/base.go`) and the
//! later libraries this crate has (semver); kube 1.33's image library is not here either.
//!
//! ## Where this differs from kube
//!
//! - Lists with `x-kubernetes-list-type: set` or `map` compare in order here (kube compares
//!   them as sets and by their keys) and `+` concatenates them (kube merges).
//! - `namespaceObject` is `dyn` (kube types it as a Namespace); `sum()` of an empty list is
//!   the `int` 0 whatever the list's type. So a map literal mixing a value read from it with
//!   a string (`{"team": namespaceObject.metadata.labels.team, "tier": "x"}`) is refused as
//!   mixed types where kube accepts it; `string(…)` around the read makes both agree.
//! - A MutatingAdmissionPolicy's `Object{…}` literals are typed without the target's schema
//!   (kube's `dynamic.ObjectType`, which kube replaces by schema types when it knows them):
//!   their type names are checked against their field paths when evaluated
//!   ([`mutation::object_json`]), but not their fields against the schema (a value of the
//!   wrong type is merged as a leaf; the strategy's validation then answers).
//! - Costs: see [`static_cost`] (scalars from a schema have size 1, an int-or-string's size is
//!   unknown) and [`runtime_cost`] (a loop iteration is charged both sides of `&&`, `||` and
//!   the dearer branch of `?:`; a two-variable comprehension's variables cost 2 per use): both
//!   only ever count more than kube, never less.
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
//!   instead, with [`static_cost::kube_limit_warning`].
//! - Every evaluation counts its cost as cel-go's tracker would ([`runtime_cost`]) and stops
//!   past its limit ([`Expression::evaluate_with_limit`]; [`limits::PER_CALL_LIMIT`] by
//!   default), the [`EvalError`] saying what it had spent; [`budget::Budget`] spends one
//!   object's budget across its rules with kube's messages, naming the rule and the cost.

pub mod budget;
pub mod checker;
pub mod cost;
pub mod environment;
pub mod escaping;
pub mod library;
pub mod limits;
pub mod mutation;
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
    /// The names the expression references: a variable it does not reference is not
    /// converted to a CEL value when bound (an admission policy binds `object`, `oldObject`,
    /// `request` and `namespaceObject` to every expression; most read one).
    referenced: std::collections::HashSet<String>,
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
    /// The standard environment with Kubernetes' libraries and the cost hooks.
    fn new_env() -> cel::Env {
        let mut env = cel::Env::stdlib();
        library::register(&mut env).expect("the libraries declare each overload once");
        runtime_cost::register(&mut env).expect("the cost hooks are declared once");
        env
    }

    /// Compile `source` in the standard environment with Kubernetes' libraries ([`library`]),
    /// without checking types. Errors: it does not parse.
    pub fn compile(source: &str) -> Result<Expression, CompileError> {
        static ENV: std::sync::OnceLock<Arc<cel::Env>> = std::sync::OnceLock::new();
        let env = ENV.get_or_init(|| Arc::new(Expression::new_env())).clone();
        Expression::compile_in(env, source)
    }

    fn compile_in(env: Arc<cel::Env>, source: &str) -> Result<Expression, CompileError> {
        // cel-go indents the source line and the caret line by one space.
        let program = env
            .compile(source)
            .map_err(|e| CompileError(e.to_string().replace("\n| ", "\n | ")))?;
        let instrumented = runtime_cost::instrument(program.expression());
        let referenced = program
            .references()
            .variables()
            .into_iter()
            .map(str::to_string)
            .collect();
        Ok(Expression {
            env,
            program,
            instrumented,
            checked: None,
            estimate: None,
            referenced,
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

    /// Compile a MutatingAdmissionPolicy's expression: checked against `variables` with the
    /// mutation object types ([`mutation`]: `Object{…}`, `JSONPatch{…}`), evaluated in an
    /// environment where the struct types it constructs are registered. Errors: as
    /// [`Expression::compile_checked`].
    pub fn compile_mutation(
        source: &str,
        variables: &Variables,
    ) -> Result<Expression, CompileError> {
        let variables = variables.clone().with_mutation_types();
        let parsed = Expression::compile_checked(source, &variables)?;
        let names = mutation::struct_names(parsed.program.expression());
        if names.is_empty() {
            return Ok(parsed);
        }
        let mut env = Expression::new_env();
        mutation::register(&mut env, &names)
            .map_err(|e| CompileError(format!("registering the object types: {e}")))?;
        let mut e = Expression::compile_in(Arc::new(env), source)?;
        e.checked = parsed.checked;
        e.estimate = parsed.estimate;
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

    /// Whether the expression names the variable `name` (a CRD rule naming `oldSelf` is a
    /// transition rule).
    pub fn references(&self, name: &str) -> bool {
        self.program.references().has_variable(name)
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
        self.run(variables, &[], None, limit)
    }

    /// [`Expression::evaluate_with_limit`] with `optionals` bound as optional values
    /// (`optional.of(v)`, or `optional.none()` for `None`): a CRD rule's `oldSelf` under
    /// `optionalOldSelf`, declared as `optional_type(T)`.
    pub fn evaluate_with_optionals(
        &self,
        variables: &[(&str, &serde_json::Value)],
        optionals: &[(&str, Option<&serde_json::Value>)],
        limit: u64,
    ) -> Result<Evaluated, EvalError> {
        self.run(variables, optionals, None, limit)
    }

    /// [`Expression::evaluate_with_limit`] with `authorizer` bound to `authorizer` (an
    /// admission expression's; [`library::authz`]).
    pub fn evaluate_authorized(
        &self,
        variables: &[(&str, &serde_json::Value)],
        authorizer: Arc<dyn library::authz::Authorizer>,
        limit: u64,
    ) -> Result<Evaluated, EvalError> {
        self.run(variables, &[], Some(authorizer), limit)
    }

    /// [`Expression::evaluate_authorized`] with `authorizer.requestResource` bound too: a
    /// check of `request`'s resource (group, resource, subresource, namespace, name).
    pub fn evaluate_authorized_request(
        &self,
        variables: &[(&str, &serde_json::Value)],
        authorizer: Arc<dyn library::authz::Authorizer>,
        request: library::authz::Attributes,
        limit: u64,
    ) -> Result<Evaluated, EvalError> {
        self.run_with(variables, &[], Some((authorizer, Some(request))), limit)
    }

    fn run(
        &self,
        variables: &[(&str, &serde_json::Value)],
        optionals: &[(&str, Option<&serde_json::Value>)],
        authorizer: Option<Arc<dyn library::authz::Authorizer>>,
        limit: u64,
    ) -> Result<Evaluated, EvalError> {
        self.run_with(variables, optionals, authorizer.map(|a| (a, None)), limit)
    }

    fn run_with(
        &self,
        variables: &[(&str, &serde_json::Value)],
        optionals: &[(&str, Option<&serde_json::Value>)],
        authorizer: Option<(
            Arc<dyn library::authz::Authorizer>,
            Option<library::authz::Attributes>,
        )>,
        limit: u64,
    ) -> Result<Evaluated, EvalError> {
        let mut context = cel::Context::with_env(self.env.clone());
        for (name, v) in optionals {
            let declared = self.checked.as_ref().and_then(|(_, vars)| vars.get(name));
            let optional = match (v, declared) {
                (Some(v), Some(Type::Optional(t))) => {
                    cel::common::types::CelOptional::of(value::to_val(v, Some(t)))
                }
                (Some(v), _) => cel::common::types::CelOptional::of(value::to_val(v, None)),
                (None, _) => cel::common::types::CelOptional::none(),
            };
            context.add_variable_as_val(*name, Box::new(optional));
        }
        if let Some((a, request)) = authorizer {
            let value = library::authz::AuthorizerVal::new(a);
            if let Some(request) = request {
                let check = library::authz::ResourceCheckVal::for_request(value.clone(), request);
                context.add_variable_as_val("authorizer.requestResource", Box::new(check));
            }
            context.add_variable_as_val("authorizer", Box::new(value));
        }
        for (name, v) in variables {
            if !self.referenced.contains(*name) {
                continue;
            }
            let declared = self.checked.as_ref().and_then(|(_, vars)| vars.get(name));
            context.add_variable_as_val(*name, value::to_val(v, declared));
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
