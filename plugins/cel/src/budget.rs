//! One object's cost budget across all its rules, as kube spends it when validating a custom
//! resource (`apiextensions-apiserver/pkg/apiserver/schema/cel/validation.go`): every rule is
//! evaluated within the smaller of [`PER_CALL_LIMIT`] and what is left of the object's budget
//! ([`RUNTIME_CEL_COST_BUDGET`] by default); what it cost is taken from the budget.
//!
//! The errors are kube's, with the cost actually spent added:
//!
//! - `'operation cancelled: actual cost limit exceeded': call cost exceeds limit for rule:
//!   <rule> (cost <spent>, limit <limit>)` when one rule
//!   passes the per-call limit (`<rule>`: the rule's `message`, else its expression, as
//!   kube's `ruleErrorString`);
//! - `validation failed due to running out of cost budget, no further validation rules will
//!   be run (cost <spent>, budget <total>)` once the object's budget is spent.

use crate::limits::{PER_CALL_LIMIT, RUNTIME_CEL_COST_BUDGET};
use crate::{EvalError, Evaluated, Expression};
use serde_json::Value as Json;

/// What is left of one object's budget.
#[derive(Debug)]
pub struct Budget {
    total: u64,
    remaining: u64,
}

/// Why a rule was not evaluated to the end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BudgetError {
    /// The rule failed (not for cost): the evaluation's error.
    Failed(EvalError),
    /// The rule passed the per-call limit: kube's message, and the cost spent.
    CallCostExceeded { message: String, spent: u64 },
    /// The object's budget ran out: kube's message; no further rule may run.
    BudgetExhausted { message: String, spent: u64 },
}

impl std::fmt::Display for BudgetError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BudgetError::Failed(e) => write!(f, "{e}"),
            BudgetError::CallCostExceeded { message, .. }
            | BudgetError::BudgetExhausted { message, .. } => f.write_str(message),
        }
    }
}

impl Default for Budget {
    fn default() -> Budget {
        Budget::new(RUNTIME_CEL_COST_BUDGET)
    }
}

impl Budget {
    /// A budget of `total` cost units.
    pub fn new(total: u64) -> Budget {
        Budget {
            total,
            remaining: total,
        }
    }

    /// What is left.
    pub fn remaining(&self) -> u64 {
        self.remaining
    }

    /// Evaluate `expression` (written as `rule`, with `message` if the rule has one) with
    /// `variables` (and `optionals`, [`Expression::evaluate_with_optionals`]), within this
    /// budget, and take its cost. Errors: [`BudgetError`].
    pub fn evaluate(
        &mut self,
        expression: &Expression,
        rule: &str,
        message: Option<&str>,
        variables: &[(&str, &Json)],
        optionals: &[(&str, Option<&Json>)],
    ) -> Result<Evaluated, BudgetError> {
        if self.remaining == 0 {
            return Err(self.exhausted(self.total));
        }
        let limit = PER_CALL_LIMIT.min(self.remaining);
        match expression.evaluate_with_optionals(variables, optionals, limit) {
            Ok(out) => {
                self.remaining = self.remaining.saturating_sub(out.cost);
                Ok(out)
            }
            Err(EvalError {
                cost_limit_exceeded: Some(spent),
                ..
            }) => {
                let spent_total = self.total - self.remaining + spent;
                self.remaining = self.remaining.saturating_sub(spent);
                if limit < PER_CALL_LIMIT {
                    return Err(self.exhausted(spent_total));
                }
                let name = message.map(str::trim).filter(|m| !m.is_empty());
                let name = name.unwrap_or(rule.trim());
                Err(BudgetError::CallCostExceeded {
                    message: format!(
                        "'{}': call cost exceeds limit for rule: {name} (cost {spent}, limit {limit})",
                        crate::runtime_cost::COST_LIMIT_EXCEEDED
                    ),
                    spent,
                })
            }
            Err(e) => Err(BudgetError::Failed(e)),
        }
    }

    fn exhausted(&self, spent: u64) -> BudgetError {
        BudgetError::BudgetExhausted {
            message: format!(
                "validation failed due to running out of cost budget, no further validation \
                 rules will be run (cost {spent}, budget {})",
                self.total
            ),
            spent,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rules_share_the_object_s_budget_and_say_what_they_spent() {
        let items: Vec<u64> = (0..2000).collect();
        let obj = json!({"items": items});
        let heavy = "self.items.all(x, self.items.all(y, x == y || x != y))";
        let e = Expression::compile(heavy).unwrap();
        let mut budget = Budget::default();
        let err = budget
            .evaluate(
                &e,
                heavy,
                Some(" items must differ "),
                &[("self", &obj)],
                &[],
            )
            .unwrap_err();
        let BudgetError::CallCostExceeded { message, spent } = &err else {
            panic!("{err:?}")
        };
        assert!(*spent > PER_CALL_LIMIT);
        assert_eq!(
            message,
            &format!(
                "'operation cancelled: actual cost limit exceeded': call cost exceeds limit for rule: items must differ (cost {spent}, limit 1000000)"
            )
        );
        assert_eq!(budget.remaining(), RUNTIME_CEL_COST_BUDGET - spent);

        // A small budget runs out across rules that each fit the per-call limit.
        let light = "self.items.all(x, x >= 0)";
        let e = Expression::compile(light).unwrap();
        let mut budget = Budget::new(20_000);
        let first = budget
            .evaluate(&e, light, None, &[("self", &obj)], &[])
            .unwrap();
        assert!(first.cost > 10_000 && first.cost < 20_000, "{}", first.cost);
        let err = budget
            .evaluate(&e, light, None, &[("self", &obj)], &[])
            .unwrap_err();
        assert!(
            matches!(&err, BudgetError::BudgetExhausted { message, .. }
                if message.starts_with("validation failed due to running out of cost budget, no further validation rules will be run (cost ")),
            "{err:?}"
        );
        let err = budget
            .evaluate(&e, light, None, &[("self", &obj)], &[])
            .unwrap_err();
        assert!(matches!(err, BudgetError::BudgetExhausted { .. }));
        // A failure that is not about cost is the evaluation's.
        let e = Expression::compile("self.missing == 1").unwrap();
        let err = Budget::default().evaluate(&e, "r", None, &[("self", &obj)], &[]);
        assert_eq!(
            err.unwrap_err(),
            BudgetError::Failed(EvalError::new("no such key: missing"))
        );
    }
}
