//! The libraries' cases (kube's `library/*_test.go` and cel-go's extension tests, rewritten),
//! compiled — checked where a case says — and evaluated through [`crate::Expression`].

use crate::*;
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
    // `authorizer.requestResource` (kube's `compile.go`): the request's resource, a verb away
    // from a check.
    let e = Expression::compile_checked("authorizer.requestResource.check('get').allowed()", &vars)
        .unwrap();
    let request = Attributes {
        group: "apps".into(),
        resource: "deployments".into(),
        namespace: "default".into(),
        name: "d".into(),
        ..Default::default()
    };
    let out = e
        .evaluate_authorized_request(&[], fake.clone(), request, limits::PER_CALL_LIMIT)
        .unwrap();
    assert_eq!(out.value, Value::Bool(true));
    let last = fake.0.lock().unwrap().last().cloned().unwrap();
    assert_eq!(
        (last.resource.as_str(), last.name.as_str()),
        ("deployments", "d")
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

/// cel-go's two-variable comprehensions (`ext/comprehensions_test.go` cases, rewritten),
/// checked and evaluated.
#[test]
fn two_variable_comprehensions() {
    let vars = Variables::new();
    for rule in [
        "[1, 2, 3].all(i, v, v == i + 1)",
        "{'a': 1, 'b': 2}.all(k, v, v > 0 && k.size() == 1)",
        "[1, 2, 3].exists(i, v, i == 1 && v == 2) && !['a'].exists(i, v, i > 0)",
        "{'a': 1, 'b': 2}.existsOne(k, v, v == 2) && [1, 1].exists_one(i, v, v == 1) == false",
        "[1, 2, 3].transformList(i, v, i * v) == [0, 2, 6]",
        "[1, 2, 3].transformList(i, v, v > 1, v * 10) == [20, 30]",
        "{'a': 1, 'b': 2}.transformMap(k, v, v * 2) == {'a': 2, 'b': 4}",
        "{'a': 1, 'b': 2}.transformMap(k, v, k == 'b', k + string(v)) == {'b': 'b2'}",
        "['x', 'y'].transformMap(i, v, v + v) == {0: 'xx', 1: 'yy'}",
        "{'a': 'x'}.transformMapEntry(k, v, {v: k}) == {'x': 'a'}",
        // The outer pair's variables inside an inner comprehension, and shadowing.
        "[1, 2].all(i, v, [10, 20].exists(j, w, w == v * 10 && j == i))",
        "[1, 2].all(i, v, [3].all(v, v == 3))",
    ] {
        let e = Expression::compile_checked(rule, &vars).unwrap_or_else(|e| panic!("{rule}: {e}"));
        assert_eq!(e.evaluate(&[]), Ok(Value::Bool(true)), "{rule}");
    }
    let e = Expression::compile("{'a': 'x', 'b': 'x'}.transformMapEntry(k, v, {v: k})").unwrap();
    let err = e.evaluate(&[]).unwrap_err();
    assert!(err.message.starts_with("insert failed: key "), "{err}");
    // Types flow through the pairs: the value of a list of strings is a string.
    let e = Expression::compile_checked("['a'].all(i, v, v + 1 == 2)", &vars)
        .err()
        .unwrap();
    assert!(
        e.0.contains("found no matching overload for '_+_' applied to '(string, int)'"),
        "{e}"
    );
    let e = Expression::compile_checked("1.all(i, v, true)", &vars)
        .err()
        .unwrap();
    assert!(
        e.0.contains("expression of type 'int' cannot be range of a comprehension"),
        "{e}"
    );
}

/// kube's `format.uri()`: Go's `url.ParseRequestURI` and its error text.
#[test]
fn format_uri() {
    for (rule, want) in [
        ("format.uri().validate('https://example.com/a?b=c') == optional.none()", true),
        ("format.named('uri').value().validate('/path').hasValue()", false),
        (
            "format.uri().validate('relative/path').value() == ['parse \"relative/path\": invalid URI for request']",
            true,
        ),
    ] {
        let e = Expression::compile_checked(rule, &Variables::new()).unwrap_or_else(|e| panic!("{rule}: {e}"));
        assert_eq!(e.evaluate(&[]), Ok(Value::Bool(want)), "{rule}");
    }
}

/// cel-go's optional library, later versions (`optional_test` cases, rewritten).
#[test]
fn optional_lists() {
    for rule in [
        "optional.unwrap([optional.of(1), optional.none(), optional.of(3)]) == [1, 3]",
        "[optional.of('a'), optional.none()].unwrapOpt() == ['a']",
        "[1, 2, 3].first() == optional.of(1) && [1, 2, 3].last().value() == 3",
        "![].first().hasValue() && [].last() == optional.none()",
    ] {
        let e = Expression::compile_checked(rule, &Variables::new())
            .unwrap_or_else(|e| panic!("{rule}: {e}"));
        assert_eq!(e.evaluate(&[]), Ok(Value::Bool(true)), "{rule}");
    }
}
