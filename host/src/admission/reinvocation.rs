//! Reinvocation of the mutating stage (`k8s.io/apiserver/pkg/admission/reinvocation.go`,
//! `ReinvocationContext` in `attributes.go`): the chain's mutating stage runs once and, if a
//! member asked for it, once more — every member again, the reinvocable members calling only
//! what must be called again. A member that asks is one that changed the object and calls
//! `IfNeeded` hooks: the mutating admission policies (kube's `policyReinvokeContext`,
//! `plugin/policy/mutating/reinvocationcontext.go`), the mutating webhooks (kube's
//! `webhookReinvokeContext`, `plugin/webhook/mutating/reinvocationcontext.go`) and the wasm
//! mutating policies (which are never called again themselves: they have no
//! `reinvocationPolicy`). A member keeps its own record, [`MemberReinvocation`], which is
//! kube's per-plugin context: what it left the object as, the `IfNeeded` hooks it invoked
//! since the object last changed, and those it must call again.

use serde_json::Value;
use std::collections::{BTreeSet, HashMap};

/// One admission pass's reinvocation state, one per mutating stage of a request.
#[derive(Default, Debug)]
pub struct ReinvocationContext {
    is_reinvoke: bool,
    should_reinvoke: bool,
    members: HashMap<&'static str, MemberReinvocation>,
}

impl ReinvocationContext {
    /// This is the second run of the mutating stage (`IsReinvoke`).
    pub fn is_reinvoke(&self) -> bool {
        self.is_reinvoke
    }

    /// Mark the second run (`SetIsReinvoke`).
    pub fn set_is_reinvoke(&mut self) {
        self.is_reinvoke = true;
    }

    /// A member asked for a second run (`ShouldReinvoke`).
    pub fn should_reinvoke(&self) -> bool {
        self.should_reinvoke
    }

    /// Ask for a second run (`SetShouldReinvoke`).
    pub fn set_should_reinvoke(&mut self) {
        self.should_reinvoke = true;
    }

    /// Take `member`'s record (empty the first time), to be given back with [`Self::put`]
    /// once the member is done (a member holds it across its awaits, not the lock).
    pub fn take(&mut self, member: &'static str) -> MemberReinvocation {
        self.members.remove(member).unwrap_or_default()
    }

    /// Give `member`'s record back.
    pub fn put(&mut self, member: &'static str, record: MemberReinvocation) {
        self.members.insert(member, record);
    }
}

/// One member's record (kube's `webhookReinvokeContext` / `policyReinvokeContext`); hooks are
/// named by a key stable between the two runs (configuration and webhook, policy, binding and
/// param).
#[derive(Default, Debug)]
pub struct MemberReinvocation {
    /// The object as the member left it, kept only while an invoked `IfNeeded` hook may need
    /// calling again (kube always keeps it; the comparison is only used then).
    last_output: Option<Value>,
    /// `IfNeeded` hooks invoked since the object last changed.
    previously_invoked: BTreeSet<String>,
    /// Hooks to call in the second run.
    reinvoke: BTreeSet<String>,
}

impl MemberReinvocation {
    /// At the start of the second run: if the object changed since the member last saw it
    /// (another member changed it after), every `IfNeeded` hook invoked since must be called
    /// again (`IsOutputChangedSinceLast…Invocation`).
    pub fn begin_reinvoke(&mut self, object: Option<&Value>) {
        if !self.previously_invoked.is_empty() && self.last_output.as_ref() != object {
            self.require_reinvoking_previously_invoked();
        }
    }

    /// In the second run: whether `key` is called again (`ShouldReinvoke…`).
    pub fn should_reinvoke(&self, key: &str) -> bool {
        self.reinvoke.contains(key)
    }

    /// The object changed: the `IfNeeded` hooks invoked before are called again
    /// (`RequireReinvokingPreviouslyInvokedPlugins`).
    pub fn require_reinvoking_previously_invoked(&mut self) {
        self.reinvoke.append(&mut self.previously_invoked);
    }

    /// `key`, an `IfNeeded` hook, was invoked (`AddReinvocable…ToPreviouslyInvoked`).
    pub fn add_invoked(&mut self, key: String) {
        self.previously_invoked.insert(key);
    }

    /// The member is done with `object` (`SetLast…InvocationOutput`).
    pub fn end(&mut self, object: Option<&Value>) {
        self.last_output = match self.previously_invoked.is_empty() {
            true => None,
            false => object.cloned(),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_change_after_an_if_needed_hook_calls_it_again() {
        // First run: `a` (IfNeeded) invoked, nothing changed since; the member is done.
        let mut r = MemberReinvocation::default();
        r.add_invoked("a".into());
        r.end(Some(&json!({"v": 1})));
        // Another member changed the object: in the second run `a` is called again.
        let mut again = std::mem::take(&mut r);
        again.begin_reinvoke(Some(&json!({"v": 2})));
        assert!(again.should_reinvoke("a"));
        // Unchanged: it is not.
        r.add_invoked("a".into());
        r.end(Some(&json!({"v": 1})));
        r.begin_reinvoke(Some(&json!({"v": 1})));
        assert!(!r.should_reinvoke("a"));
        // A change within the member moves what was invoked before, not what follows.
        let mut r = MemberReinvocation::default();
        r.add_invoked("a".into());
        r.require_reinvoking_previously_invoked();
        r.add_invoked("b".into());
        assert!(r.should_reinvoke("a") && !r.should_reinvoke("b"));
    }
}
