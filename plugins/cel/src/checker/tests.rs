//! Checker cases after cel-go's `checker/checker_test.go` and kube's CRD rule compilation tests
//! (`apiextensions-apiserver/pkg/apiserver/schema/cel/compilation_test.go`), rewritten.

use crate::types::{Field, ObjectType, Type};
use crate::{Expression, Variables};
use serde_json::json;
use std::sync::Arc;

fn object(name: &str, fields: &[(&str, Type)]) -> Type {
    Type::Object(Arc::new(ObjectType {
        name: name.to_string(),
        fields: fields
            .iter()
            .map(|(n, t)| {
                let field = Field {
                    ty: t.clone(),
                    required: false,
                };
                (n.to_string(), field)
            })
            .collect(),
    }))
}

fn self_type() -> Type {
    let port = object("selfType.spec.ports.@idx", &[("port", Type::Int)]);
    let spec = object(
        "selfType.spec",
        &[
            ("replicas", Type::Int),
            ("minReplicas", Type::Int),
            ("image", Type::STRING),
            ("ports", Type::list(port)),
            ("labels", Type::map(Type::STRING, Type::STRING)),
        ],
    );
    object("selfType", &[("spec", spec)])
}

fn vars() -> Variables {
    Variables::new()
        .with("self", self_type())
        .with("object", Type::Dyn)
}

fn output(rule: &str) -> Result<String, String> {
    Expression::compile_checked(rule, &vars())
        .map(|e| e.checked().unwrap().output.to_string())
        .map_err(|e| e.0)
}

#[test]
fn expressions_have_the_types_cel_go_gives_them() {
    for (rule, want) in [
        ("1 + 2", "int"),
        ("self.spec.replicas >= self.spec.minReplicas", "bool"),
        (
            "self.spec.ports.all(p, p.port > 0 && p.port < 65536)",
            "bool",
        ),
        ("self.spec.ports.exists_one(p, p.port == 443)", "bool"),
        ("self.spec.ports.map(p, p.port)", "list(int)"),
        (
            "self.spec.ports.filter(p, p.port > 100)",
            "list(selfType.spec.ports.@idx)",
        ),
        ("self.spec.labels['team']", "string"),
        ("self.spec.labels.team", "string"),
        ("self.spec.?image", "optional_type(string)"),
        ("self.spec.?image.orValue('none')", "string"),
        ("self.spec.?image.optMap(i, i.size())", "optional_type(int)"),
        ("has(self.spec.image) && !has(self.spec.labels.x)", "bool"),
        ("size(self.spec.ports) == self.spec.ports.size()", "bool"),
        ("self.spec.replicas in [1, 2]", "bool"),
        ("'team' in self.spec.labels", "bool"),
        ("[1, 'a']", "ERR"),
        ("{'a': 1, 'b': 'x'}", "ERR"),
        ("[1, dyn('a')]", "ERR"),
        ("'%s %d'.format(['a', 1])", "string"),
        ("[]", "list(dyn)"),
        ("{'a': 1}", "map(string, int)"),
        ("[[1], []]", "list(list(int))"),
        ("type(self.spec.replicas) == int", "bool"),
        ("1 < 1.5 && 2u > 1", "bool"),
        ("object.spec.replicas + 1", "int"),
        ("object.spec", "dyn"),
        ("self.spec.replicas > 1 ? 'many' : 'few'", "string"),
        ("optional.none()", "optional_type(dyn)"),
        ("optional.of(1).value()", "int"),
        (
            "quantity('1Gi').isGreaterThan(quantity(self.spec.image))",
            "bool",
        ),
        ("sign(quantity('1Gi').add(1))", "int"),
        ("sets.contains([1, 2], [1])", "bool"),
        ("ip('1.2.3.4').family() == 4", "bool"),
        ("cidr('10.0.0.0/8').containsIP('10.1.2.3')", "bool"),
        ("ip.isCanonical('::1')", "bool"),
        (
            "format.dns1123Label().validate(self.spec.image)",
            "optional_type(list(string))",
        ),
        ("format.named('uuid').hasValue()", "bool"),
        ("semver('1.2.3').major()", "int"),
        ("'abc 123'.findAll('[0-9]+')", "list(string)"),
        ("[3, 1].sum() + [1.5].max()", "ERR"),
        ("[3, 1].sum() + [2].max()", "int"),
        (
            "timestamp('2024-01-01T00:00:00Z') + duration('1h')",
            "google.protobuf.Timestamp",
        ),
        (
            "self.spec.image.matches('^a') || matches(self.spec.image, 'b$')",
            "bool",
        ),
        ("null == self.spec", "bool"),
    ] {
        match (output(rule), want) {
            (Ok(t), want) if want != "ERR" => assert_eq!(t, want, "{rule}"),
            (Err(_), "ERR") => {}
            (got, _) => panic!("{rule}: {got:?}"),
        }
    }
}

#[test]
fn errors_are_cel_go_texts_at_their_expression() {
    for (rule, want) in [
        (
            "x > 1",
            "ERROR: <input>:1:1: undeclared reference to 'x' (in container '')\n | x > 1\n | ^",
        ),
        (
            "1 + 'a'",
            "ERROR: <input>:1:3: found no matching overload for '_+_' applied to '(int, string)'\n | 1 + 'a'\n | ..^",
        ),
        (
            "self.spec.nope == 1",
            "ERROR: <input>:1:10: undefined field 'nope'\n | self.spec.nope == 1\n | .........^",
        ),
        (
            "self.spec.replicas.x",
            "ERROR: <input>:1:19: type 'int' does not support field selection\n | self.spec.replicas.x\n | ..................^",
        ),
        (
            "'abc'.startsWith(1)",
            "ERROR: <input>:1:17: found no matching overload for 'startsWith' applied to 'string.(int)'\n | 'abc'.startsWith(1)\n | ................^",
        ),
        (
            "1 == 1.0",
            "ERROR: <input>:1:3: found no matching overload for '_==_' applied to '(int, double)'\n | 1 == 1.0\n | ..^",
        ),
        (
            "1.map(x, x)",
            "ERROR: <input>:1:1: expression of type 'int' cannot be range of a comprehension (must be list, map, or dynamic)\n | 1.map(x, x)\n | ^",
        ),
        (
            "foo('https://a')",
            "ERROR: <input>:1:4: undeclared reference to 'foo' (in container '')\n | foo('https://a')\n | ...^",
        ),
    ] {
        assert_eq!(output(rule).unwrap_err(), want, "{rule}");
    }
    // kube compiles with homogeneous aggregate literals and validates literal arguments.
    for (rule, want) in [
        (
            "[1, 'a'].size() == 2",
            "ERROR: <input>:1:5: expected type 'int' but found 'string'",
        ),
        (
            "duration('1x') < duration('1h')",
            "ERROR: <input>:1:10: invalid duration argument",
        ),
        (
            "duration('1d') < duration('1h')",
            "ERROR: <input>:1:10: invalid duration argument",
        ),
        (
            "timestamp('yesterday') == timestamp(0)",
            "ERROR: <input>:1:11: invalid timestamp argument",
        ),
        (
            "self.spec.image.matches('[')",
            "ERROR: <input>:1:25: invalid matches argument",
        ),
    ] {
        let e = output(rule).unwrap_err();
        assert!(e.starts_with(want), "{rule}: {e}");
    }
    // Every error is reported, each located.
    let e = output("a + b").unwrap_err();
    assert_eq!(e.matches("undeclared reference").count(), 2, "{e}");
    assert!(output("self.spec.ports.all(p, p.port)").is_err());
    assert!(output("has(self.spec.nope)")
        .unwrap_err()
        .contains("undefined field 'nope'"));
}

/// What the checker says an expression gives is what evaluating it gives.
#[test]
fn checked_types_agree_with_evaluation() {
    let obj = json!({"spec": {"replicas": 3, "minReplicas": 1, "image": "nginx",
                              "ports": [{"port": 80}, {"port": 443}],
                              "labels": {"team": "a"}}});
    for (rule, want) in [
        ("self.spec.ports.map(p, p.port)", json!([80, 443])),
        ("self.spec.ports.filter(p, p.port > 100).size()", json!(1)),
        ("self.spec.?image.optMap(i, i.size()).value()", json!(5)),
        ("self.spec.replicas > 1 ? 'many' : 'few'", json!("many")),
        ("[3, 1].sum() + [2].max()", json!(6)),
        ("sign(quantity('1Gi').add(1))", json!(1)),
    ] {
        let e = Expression::compile_checked(rule, &vars()).unwrap();
        let v = e.evaluate(&[("self", &obj)]).unwrap();
        assert_eq!(v.json().unwrap(), want, "{rule}");
    }
}
