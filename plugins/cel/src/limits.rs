//! Kubernetes' bounds on CEL (`k8s.io/apiserver/pkg/apis/cel/config.go`,
//! `k8s.io/apiserver/pkg/cel/limits.go`, `apiextensions-apiserver/pkg/apis/apiextensions/
//! validation/validation.go`), in cost units of cel-go's cost model unless stated.

/// `PerCallLimit`: the most one evaluation of one expression may cost at run time.
pub const PER_CALL_LIMIT: u64 = 1_000_000;

/// `RuntimeCELCostBudget`: the most all the rules of one object (a custom resource's
/// `x-kubernetes-validations`, one admission policy's expressions) may cost together.
pub const RUNTIME_CEL_COST_BUDGET: u64 = 10_000_000;

/// `RuntimeCELCostBudgetMatchConditions`: the budget of an admission policy's or webhook's
/// `matchConditions`.
pub const RUNTIME_CEL_COST_BUDGET_MATCH_CONDITIONS: u64 = 2_500_000;

/// `StaticEstimatedCostLimit`: the most one rule's estimated worst-case cost may be when a
/// CustomResourceDefinition is written.
pub const STATIC_ESTIMATED_COST_LIMIT: u64 = 10_000_000;

/// `StaticEstimatedCRDCostLimit`: the most the estimated costs of all the rules of one
/// CustomResourceDefinition's schema may add up to.
pub const STATIC_ESTIMATED_CRD_COST_LIMIT: u64 = 100_000_000;

/// `MaxRequestSizeBytes` (3 MiB): the largest object a rule can see, which bounds the sizes
/// the cost estimate assumes for unbounded lists, maps and strings.
pub const MAX_REQUEST_SIZE_BYTES: u64 = 3 * 1024 * 1024;

/// `MaxEvaluatedMessageExpressionSizeBytes` (5 KiB): the longest message a
/// `messageExpression` may produce.
pub const MAX_EVALUATED_MESSAGE_EXPRESSION_SIZE_BYTES: usize = 5 * 1024;
