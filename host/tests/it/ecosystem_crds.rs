//! CRDs of the ecosystem's shape (issue 32's acceptance targets), written here to exercise
//! what Gateway API's HTTPRoute and Gateway, cert-manager and the Prometheus operator use —
//! not copies of them:
//! - CEL as Gateway API writes it: `all`/`exists_one`/`exists`/`filter` (nested two deep),
//!   `has()` on nested fields, a field named `namespace` (`__namespace__` in CEL), a
//!   discriminated union checked by paired rules, `in` with list literals, raw-string regexes,
//!   `duration()`, `isIP()`, `split()`/`substring()`, `size()` on lists, strings and maps,
//!   rules over a map's keys, list indexing, nested ternaries, and a transition rule;
//! - rules that hold only after defaulting (an array default, an object default, leaf
//!   defaults read without `has()`);
//! - a map-list inside a map-list, a map-list inside atomic lists, an integer key, and a
//!   two-key map-list whose second key has a default (Prometheus' container ports), merged by
//!   server-side apply from two managers;
//! - `x-kubernetes-int-or-string`, `x-kubernetes-preserve-unknown-fields` (a leaf and an
//!   object), and `x-kubernetes-embedded-resource`.
//!
//! Each refusal is checked for kube's text (field path, value type, the rule's message).

use crate::common;

use common::server::{Backend, TestServer};
use serde_json::{json, Value};

const ROUTE_CRD: &str = r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: routes.gateway.example.com
spec:
  group: gateway.example.com
  scope: Namespaced
  names: {plural: routes, singular: route, kind: Route}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              controllerName:
                type: string
                maxLength: 253
                x-kubernetes-validations:
                - {rule: "self == oldSelf", message: "field is immutable"}
              hostnames:
                type: array
                maxItems: 16
                items: {type: string, maxLength: 253}
                x-kubernetes-validations:
                - {rule: "self.all(h, !isIP(h))", message: "Hostname must not be an IP address"}
                - rule: "self.all(h, h.contains('*') ? (h.startsWith('*.') && h.substring(2).matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)$')) : true)"
                  message: "a wildcard must be a leading '*.' label"
              labels:
                type: object
                maxProperties: 8
                additionalProperties: {type: string, maxLength: 63}
                x-kubernetes-validations:
                - rule: 'self.all(key, key.matches(r"""^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?([A-Za-z0-9][-A-Za-z0-9_.]{0,61})?[A-Za-z0-9]$"""))'
                  message: "Label keys must be in the form of an optional DNS subdomain prefix followed by a required name segment of up to 63 characters."
                - {rule: 'self.all(key, key.split("/")[0].size() < 253)', message: "If specified, the label key's prefix must be a DNS subdomain not longer than 253 characters in total."}
              parentRefs:
                type: array
                maxItems: 32
                items:
                  type: object
                  required: [name]
                  properties:
                    group: {type: string, default: gateway.example.com, maxLength: 253}
                    kind: {type: string, default: Gateway, maxLength: 63}
                    name: {type: string, maxLength: 253}
                    namespace: {type: string, maxLength: 63}
                    sectionName: {type: string, maxLength: 253}
                x-kubernetes-validations:
                - rule: "self.all(p1, self.exists_one(p2, p1.group == p2.group && p1.kind == p2.kind && p1.name == p2.name && (((!has(p1.__namespace__) || p1.__namespace__ == '') && (!has(p2.__namespace__) || p2.__namespace__ == '')) || (has(p1.__namespace__) && has(p2.__namespace__) && p1.__namespace__ == p2.__namespace__)) && (((!has(p1.sectionName) || p1.sectionName == '') && (!has(p2.sectionName) || p2.sectionName == '')) || (has(p1.sectionName) && has(p2.sectionName) && p1.sectionName == p2.sectionName))))"
                  message: "sectionName must be unique when parentRefs includes 2 or more references to the same parent"
              rules:
                type: array
                minItems: 1
                maxItems: 4
                default: [{matches: [{path: {type: PathPrefix, value: /}}]}]
                x-kubernetes-validations:
                - rule: "(self.size() > 0 ? self[0].matches.size() : 0) + (self.size() > 1 ? self[1].matches.size() : 0) + (self.size() > 2 ? self[2].matches.size() : 0) + (self.size() > 3 ? self[3].matches.size() : 0) <= 6"
                  message: "the total number of matches across all rules in a route must be at most 6"
                items:
                  type: object
                  x-kubernetes-validations:
                  - {rule: "(has(self.backendRefs) && size(self.backendRefs) > 0) ? (!has(self.filters) || self.filters.all(f, !has(f.requestRedirect))): true", message: "RequestRedirect filter must not be used together with backendRefs"}
                  properties:
                    matches:
                      type: array
                      maxItems: 4
                      default: [{path: {type: PathPrefix, value: /}}]
                      items:
                        type: object
                        properties:
                          path:
                            type: object
                            default: {type: PathPrefix, value: /}
                            properties:
                              type: {type: string, enum: [Exact, PathPrefix, RegularExpression], default: PathPrefix}
                              value: {type: string, maxLength: 1024, default: /}
                            x-kubernetes-validations:
                            - {rule: "(self.type in ['Exact','PathPrefix']) ? self.value.startsWith('/') : true", message: "value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']"}
                            - {rule: "(self.type in ['Exact','PathPrefix']) ? !self.value.endsWith('/..') : true", message: "must not end with '/..' when type one of ['Exact', 'PathPrefix']"}
                            - rule: "(self.type in ['Exact','PathPrefix']) ? self.value.matches(r\"\"\"^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$\"\"\") : true"
                              message: "must only contain valid characters (matching ^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$) for types ['Exact', 'PathPrefix']"
                          headers:
                            type: array
                            maxItems: 16
                            x-kubernetes-list-type: map
                            x-kubernetes-list-map-keys: [name]
                            items:
                              type: object
                              required: [name, value]
                              properties:
                                name: {type: string}
                                value: {type: string}
                    filters:
                      type: array
                      maxItems: 8
                      x-kubernetes-validations:
                      - {rule: "self.filter(f, f.type == 'CORS').size() <= 1", message: "CORS filter cannot be repeated"}
                      - {rule: "!(self.exists(f, f.type == 'RequestRedirect') && self.exists(f, f.type == 'URLRewrite'))", message: "May specify either httpRouteFilterRequestRedirect or httpRouteFilterRequestRewrite, but not both"}
                      items:
                        type: object
                        required: [type]
                        properties:
                          type: {type: string, enum: [CORS, RequestRedirect, URLRewrite]}
                          cors:
                            type: object
                            properties:
                              allowOrigins:
                                type: array
                                maxItems: 8
                                x-kubernetes-list-type: set
                                items: {type: string, maxLength: 253}
                                x-kubernetes-validations:
                                - {rule: "!('*' in self && self.size() > 1)", message: "AllowOrigins cannot contain '*' alongside other origins"}
                          requestRedirect:
                            type: object
                            properties:
                              hostname: {type: string}
                          urlRewrite:
                            type: object
                            properties:
                              hostname: {type: string}
                        x-kubernetes-validations:
                        - {rule: "!(has(self.cors) && self.type != 'CORS')", message: "filter.cors must be nil if the filter.type is not CORS"}
                        - {rule: "!(!has(self.cors) && self.type == 'CORS')", message: "filter.cors must be specified for CORS filter.type"}
                    backendRefs:
                      type: array
                      maxItems: 16
                      items:
                        type: object
                        required: [name]
                        properties:
                          group: {type: string, default: ""}
                          kind: {type: string, default: Service}
                          name: {type: string}
                          port: {type: integer, format: int32, minimum: 1, maximum: 65535}
                        x-kubernetes-validations:
                        - {rule: "(size(self.group) == 0 && self.kind == 'Service') ? has(self.port) : true", message: "Must have port for Service reference"}
                    timeouts:
                      type: object
                      properties:
                        request: {type: string, pattern: '^([0-9]{1,5}(h|m|s|ms)){1,4}$'}
                        backendRequest: {type: string, pattern: '^([0-9]{1,5}(h|m|s|ms)){1,4}$'}
                      x-kubernetes-validations:
                      - {rule: "!(has(self.request) && has(self.backendRequest) && duration(self.request) != duration('0s') && duration(self.backendRequest) > duration(self.request))", message: "backendRequest timeout cannot be longer than request timeout"}
              listeners:
                type: array
                maxItems: 16
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    port: {type: integer}
                    ports:
                      type: array
                      x-kubernetes-list-type: map
                      x-kubernetes-list-map-keys: [containerPort, protocol]
                      items:
                        type: object
                        required: [containerPort]
                        properties:
                          containerPort: {type: integer, format: int32}
                          protocol: {type: string, default: TCP}
                          name: {type: string}
                    conditions:
                      type: array
                      x-kubernetes-list-type: map
                      x-kubernetes-list-map-keys: [type]
                      items:
                        type: object
                        required: [type]
                        properties:
                          type: {type: string}
                          status: {type: string}
              maxUnavailable:
                anyOf: [{type: integer}, {type: string}]
                x-kubernetes-int-or-string: true
              config:
                x-kubernetes-preserve-unknown-fields: true
              elements:
                type: array
                items: {type: object, x-kubernetes-preserve-unknown-fields: true}
              issuer:
                type: object
                properties:
                  acme: {type: object, properties: {server: {type: string}}}
                  ca: {type: object, properties: {secretName: {type: string}}}
                  vault: {type: object, properties: {path: {type: string}}}
                x-kubernetes-validations:
                - {rule: "(has(self.acme)?1:0)+(has(self.ca)?1:0)+(has(self.vault)?1:0) == 1", message: "exactly one of acme, ca or vault"}
              scrape:
                type: object
                properties:
                  a: {type: string}
                  b: {type: string}
                  c: {type: string}
                x-kubernetes-validations:
                - {rule: "[has(self.a), has(self.b), has(self.c)].filter(x, x).size() <= 1", message: "at most one of a, b and c"}
              values:
                type: object
                x-kubernetes-preserve-unknown-fields: true
              template:
                type: object
                x-kubernetes-embedded-resource: true
                properties:
                  spec:
                    type: object
                    properties:
                      replicas: {type: integer}
          status:
            type: object
            default: {conditions: [{type: Accepted, status: Unknown}]}
            properties:
              conditions:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [type]
                items:
                  type: object
                  required: [type]
                  properties:
                    type: {type: string}
                    status: {type: string}
              listeners:
                type: array
                x-kubernetes-list-type: map
                x-kubernetes-list-map-keys: [name]
                items:
                  type: object
                  required: [name]
                  properties:
                    name: {type: string}
                    conditions:
                      type: array
                      x-kubernetes-list-type: map
                      x-kubernetes-list-map-keys: [type]
                      items:
                        type: object
                        required: [type]
                        properties:
                          type: {type: string}
                          status: {type: string}
"#;

fn route(s: &TestServer, name: &str, spec: Value) -> std::path::PathBuf {
    let obj = json!({"apiVersion": "gateway.example.com/v1", "kind": "Route",
        "metadata": {"name": name}, "spec": spec});
    s.file(&format!("{name}.json"), &obj.to_string())
}

fn get(s: &TestServer, name: &str) -> Value {
    serde_json::from_str(&s.ok(&["get", "routes", name, "-o", "json"])).unwrap()
}

#[test]
fn a_gateway_shaped_crd_defaults_validates_and_merges_as_kube() {
    let s = TestServer::start_with(Backend::Embedded, &["namespaces"], &[]);
    s.create_default_namespace();
    let crd = s.file("routes-crd.yaml", ROUTE_CRD);
    s.ok(&["apply", "--server-side", "-f", crd.to_str().unwrap()]);
    s.ok(&[
        "wait",
        "--for",
        "condition=established",
        "crd/routes.gateway.example.com",
    ]);

    // Defaults (an array default, an object default, leaf defaults), pruning, the three
    // unknown-field extensions.
    let valid = json!({
        "controllerName": "example.com/gateway",
        "hostnames": ["*.example.com", "example.org"],
        "labels": {"example.com/team": "a", "tier": "web"},
        "parentRefs": [{"name": "gw", "namespace": "infra", "sectionName": "http"},
                       {"name": "gw", "namespace": "infra", "sectionName": "https"}],
        "rules": [{"backendRefs": [{"name": "svc", "port": 80}],
                   "matches": [{"headers": [{"name": "x", "value": "1"}]}],
                   "timeouts": {"request": "10s", "backendRequest": "2s"},
                   "filters": [{"type": "CORS", "cors": {"allowOrigins": ["*"]}}]}],
        "maxUnavailable": "25%",
        "config": {"anything": [1, {"goes": true}]},
        "elements": [{"cluster": "a", "free": {"form": 1}}, {"url": "b"}],
        "issuer": {"ca": {"secretName": "root"}},
        "scrape": {"b": "x"},
        "values": {"nested": {"deep": "kept"}},
        "template": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "t"},
                     "spec": {"replicas": 2, "pruned": true}},
        "unknownField": "pruned"
    });
    // kubectl's default `--validate=strict` refuses the unknown field, as kube does; the
    // embedded resource's type and metadata are not unknown.
    let err = s.fails(&[
        "create",
        "-f",
        route(&s, "valid", valid.clone()).to_str().unwrap(),
    ]);
    assert!(
        err.contains("strict decoding error: unknown field \"spec.template.spec.pruned\", unknown field \"spec.unknownField\""),
        "{err}"
    );
    s.ok(&[
        "create",
        "--validate=false",
        "-f",
        route(&s, "valid", valid).to_str().unwrap(),
    ]);
    let got = get(&s, "valid");
    let spec = &got["spec"];
    assert_eq!(spec.get("unknownField"), None, "{spec}");
    assert_eq!(
        spec["rules"][0]["matches"][0]["path"],
        json!({"type": "PathPrefix", "value": "/"})
    );
    assert_eq!(
        spec["rules"][0]["backendRefs"][0],
        json!({"group": "", "kind": "Service", "name": "svc", "port": 80})
    );
    assert_eq!(spec["parentRefs"][0]["kind"], "Gateway");
    assert_eq!(spec["maxUnavailable"], "25%");
    assert_eq!(spec["config"], json!({"anything": [1, {"goes": true}]}));
    assert_eq!(spec["values"], json!({"nested": {"deep": "kept"}}));
    assert_eq!(
        spec["elements"],
        json!([{"cluster": "a", "free": {"form": 1}}, {"url": "b"}])
    );
    // The status subresource drops a create's status; the schema's default for `status`
    // shows on read (kube defaults what it decodes from storage).
    assert_eq!(
        got["status"],
        json!({"conditions": [{"type": "Accepted", "status": "Unknown"}]})
    );
    assert_eq!(
        spec["template"],
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "t"}, "spec": {"replicas": 2}})
    );
    // No rules at all: the array default, whose matches hold the path default.
    s.ok(&[
        "create",
        "-f",
        route(&s, "bare", json!({"maxUnavailable": 1}))
            .to_str()
            .unwrap(),
    ]);
    assert_eq!(
        get(&s, "bare")["spec"]["rules"],
        json!([{"matches": [{"path": {"type": "PathPrefix", "value": "/"}}]}])
    );

    // Each rule refuses with kube's text: the field path, the value's type, the message.
    let refused = |name: &str, spec: Value, want: &str| {
        let err = s.fails(&["create", "-f", route(&s, name, spec).to_str().unwrap()]);
        assert!(
            err.contains(&format!("The Route \"{name}\" is invalid")) && err.contains(want),
            "{name}: want {want:?} in\n{err}"
        );
    };
    refused(
        "dup-parents",
        json!({"parentRefs": [{"name": "gw", "namespace": "a"}, {"name": "gw", "namespace": "a"}]}),
        "spec.parentRefs: Invalid value: \"array\": sectionName must be unique when parentRefs includes 2 or more references to the same parent",
    );
    refused(
        "union",
        json!({"rules": [{"filters": [{"type": "URLRewrite", "cors": {}}]}]}),
        "spec.rules[0].filters[0]: Invalid value: \"object\": filter.cors must be nil if the filter.type is not CORS",
    );
    refused(
        "union-missing",
        json!({"rules": [{"filters": [{"type": "CORS"}]}]}),
        "filter.cors must be specified for CORS filter.type",
    );
    refused(
        "two-cors",
        json!({"rules": [{"filters": [{"type": "CORS", "cors": {}}, {"type": "CORS", "cors": {}}]}]}),
        "spec.rules[0].filters: Invalid value: \"array\": CORS filter cannot be repeated",
    );
    refused(
        "redirect-and-rewrite",
        json!({"rules": [{"filters": [{"type": "RequestRedirect", "requestRedirect": {}}, {"type": "URLRewrite", "urlRewrite": {}}]}]}),
        "May specify either httpRouteFilterRequestRedirect or httpRouteFilterRequestRewrite, but not both",
    );
    refused(
        "redirect-with-backends",
        json!({"rules": [{"backendRefs": [{"name": "s", "port": 1}], "filters": [{"type": "RequestRedirect", "requestRedirect": {}}]}]}),
        "spec.rules[0]: Invalid value: \"object\": RequestRedirect filter must not be used together with backendRefs",
    );
    refused(
        "origins",
        json!({"rules": [{"filters": [{"type": "CORS", "cors": {"allowOrigins": ["*", "https://a"]}}]}]}),
        "AllowOrigins cannot contain '*' alongside other origins",
    );
    refused(
        "relative-path",
        json!({"rules": [{"matches": [{"path": {"value": "foo"}}]}]}),
        "spec.rules[0].matches[0].path: Invalid value: \"object\": value must be an absolute path and start with '/' when type one of ['Exact', 'PathPrefix']",
    );
    refused(
        "bad-chars",
        json!({"rules": [{"matches": [{"path": {"value": "/a b"}}]}]}),
        "must only contain valid characters",
    );
    refused(
        "too-many-matches",
        json!({"rules": [{"matches": [{}, {}, {}, {}]}, {"matches": [{}, {}, {}]}]}),
        "spec.rules: Invalid value: \"array\": the total number of matches across all rules in a route must be at most 6",
    );
    refused(
        "timeouts",
        json!({"rules": [{"timeouts": {"request": "1s", "backendRequest": "1m"}}]}),
        "spec.rules[0].timeouts: Invalid value: \"object\": backendRequest timeout cannot be longer than request timeout",
    );
    refused(
        "service-port",
        json!({"rules": [{"backendRefs": [{"name": "svc"}]}]}),
        "spec.rules[0].backendRefs[0]: Invalid value: \"object\": Must have port for Service reference",
    );
    refused(
        "label-key",
        json!({"labels": {"-bad-": "x"}}),
        "spec.labels: Invalid value: \"object\": Label keys must be in the form",
    );
    refused(
        "two-issuers",
        json!({"issuer": {"acme": {}, "ca": {}}}),
        "spec.issuer: Invalid value: \"object\": exactly one of acme, ca or vault",
    );
    refused(
        "two-scrapes",
        json!({"scrape": {"a": "x", "c": "y"}}),
        "spec.scrape: Invalid value: \"object\": at most one of a, b and c",
    );
    refused(
        "ip-host",
        json!({"hostnames": ["10.0.0.1"]}),
        "spec.hostnames: Invalid value: \"array\": Hostname must not be an IP address",
    );
    refused(
        "wildcard",
        json!({"hostnames": ["a.*.example.com"]}),
        "a wildcard must be a leading '*.' label",
    );
    refused(
        "headers-dup",
        json!({"rules": [{"matches": [{"headers": [{"name": "x", "value": "1"}, {"name": "x", "value": "2"}]}]}]}),
        "spec.rules[0].matches[0].headers[1]: Duplicate value: {\"name\":\"x\"}",
    );

    // A transition rule: controllerName is immutable.
    let err = s.fails(&[
        "patch",
        "route",
        "valid",
        "--type=merge",
        "-p",
        r#"{"spec":{"controllerName":"example.com/other"}}"#,
    ]);
    assert!(
        err.contains("spec.controllerName: Invalid value: \"string\": field is immutable"),
        "{err}"
    );

    // Server-side apply merges the nested map-lists by their keys: two managers, one
    // listener each, and two ports of one listener keyed by (containerPort, protocol) with
    // the protocol defaulted.
    let apply = |manager: &str, listeners: Value| {
        let obj = json!({"apiVersion": "gateway.example.com/v1", "kind": "Route",
            "metadata": {"name": "merged"}, "spec": {"listeners": listeners}});
        let f = s.file(&format!("{manager}.json"), &obj.to_string());
        s.ok(&[
            "apply",
            "--server-side",
            "--field-manager",
            manager,
            "-f",
            f.to_str().unwrap(),
        ]);
    };
    apply(
        "alice",
        json!([{"name": "a", "ports": [{"containerPort": 80}], "conditions": [{"type": "Ready", "status": "True"}]}]),
    );
    apply(
        "bob",
        json!([{"name": "a", "ports": [{"containerPort": 443}], "conditions": [{"type": "Accepted", "status": "True"}]},
               {"name": "b", "port": 8080}]),
    );
    let listeners = &get(&s, "merged")["spec"]["listeners"];
    assert_eq!(
        listeners,
        &json!([
            {"name": "a",
             "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 443, "protocol": "TCP"}],
             "conditions": [{"type": "Ready", "status": "True"}, {"type": "Accepted", "status": "True"}]},
            {"name": "b", "port": 8080}
        ]),
        "{listeners}"
    );
}
