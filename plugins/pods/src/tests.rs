//! Native tests of each rule, through the SDK's hook sequence ([`wasm_apiserver_sdk::testing`]).

use super::*;
use wasm_apiserver_sdk::field::ErrorType;
use wasm_apiserver_sdk::glue;
use wasm_apiserver_sdk::testing::{create, update, update_status};

fn pod(spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "web", "namespace": "default", "creationTimestamp": "2025-01-01T00:00:00Z"},
           "spec": spec})
}

fn one(container: Value) -> Value {
    pod(json!({"containers": [container]}))
}

fn ctr(name: &str, image: &str) -> Value {
    json!({"name": name, "image": image})
}

fn with_resources(mut c: Value, resources: Value) -> Value {
    c["resources"] = resources;
    c
}

/// (type, field) of each error, for compact assertions.
fn errs(out: &wasm_apiserver_sdk::testing::Outcome) -> Vec<(ErrorType, String)> {
    out.errors
        .iter()
        .map(|e| (e.error_type, e.field.clone()))
        .collect()
}

fn stored(spec: Value) -> Value {
    let out = create::<Pods>(pod(spec));
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let mut o = out.object;
    o["metadata"]["uid"] = json!("0b6c1a5e-1111-2222-3333-444455556666");
    o["metadata"]["resourceVersion"] = json!("1");
    o
}

// --- describe -------------------------------------------------------------------------------

#[test]
fn describe_matches_kube_apiserver() {
    let d = Pods::describe();
    assert_eq!(
        (d.group.as_str(), d.version.as_str(), d.kind.as_str()),
        ("", "v1", "Pod")
    );
    assert_eq!(
        (d.plural.as_str(), d.singular.as_str(), d.list_kind.as_str()),
        ("pods", "pod", "PodList")
    );
    assert_eq!(d.short_names, vec!["po"]);
    assert_eq!(d.categories, vec!["all"]);
    assert!(d.namespaced);
    assert_eq!(d.subresources, vec!["status"]);
    assert_eq!(d.selectable_fields, vec!["spec.nodeName", "status.phase"]);
    let cols: Vec<(&str, i32, &str)> = d
        .printer_columns
        .iter()
        .map(|c| (c.name.as_str(), c.priority, c.json_path.as_str()))
        .collect();
    assert_eq!(
        cols,
        vec![
            ("Name", 0, "@name"),
            ("Ready", 0, ""),
            ("Status", 0, ""),
            ("Restarts", 0, ""),
            ("Age", 0, "@age"),
            ("IP", 1, ""),
            ("Node", 1, ""),
            ("Nominated Node", 1, ""),
            ("Readiness Gates", 1, ""),
        ]
    );
    let containers = &d.openapi_schema["properties"]["spec"]["properties"]["containers"];
    assert_eq!(containers["x-kubernetes-patch-merge-key"], "name");
    assert_eq!(containers["x-kubernetes-patch-strategy"], "merge");
    assert!(containers["items"]["properties"]["resources"]["description"].is_string());
}

#[test]
fn example_is_a_valid_pod() {
    let example = Pods::describe().example.expect("example");
    let out = create::<Pods>(example);
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!(out.object["status"]["qosClass"], "Guaranteed");
}

// --- prepare_for_create: defaults and status ------------------------------------------------

#[test]
fn create_applies_scheme_defaults() {
    let out = create::<Pods>(one(
        json!({"name": "app", "image": "nginx", "ports": [{"containerPort": 80}]}),
    ));
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let o = &out.object;
    assert_eq!(o["metadata"]["generation"], 1);
    let spec = &o["spec"];
    assert_eq!(spec["restartPolicy"], "Always");
    assert_eq!(spec["dnsPolicy"], "ClusterFirst");
    assert_eq!(spec["terminationGracePeriodSeconds"], 30);
    assert_eq!(spec["schedulerName"], "default-scheduler");
    assert_eq!(spec["securityContext"], json!({}));
    assert_eq!(spec["enableServiceLinks"], true);
    let c = &spec["containers"][0];
    assert_eq!(c["imagePullPolicy"], "Always", "no tag means :latest");
    assert_eq!(c["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(c["terminationMessagePolicy"], "File");
    assert_eq!(c["ports"][0]["protocol"], "TCP");
    assert_eq!(c["resources"], json!({}));
    assert_eq!(
        o["status"],
        json!({"phase": "Pending", "qosClass": "BestEffort"})
    );
}

#[test]
fn pull_policy_depends_on_the_tag() {
    let policy = |image: &str| {
        let out = create::<Pods>(one(ctr("app", image)));
        out.object["spec"]["containers"][0]["imagePullPolicy"].clone()
    };
    assert_eq!(policy("nginx:latest"), "Always");
    assert_eq!(policy("nginx"), "Always");
    assert_eq!(policy("nginx:1.27"), "IfNotPresent");
    assert_eq!(policy("registry.example.com:5000/team/app"), "Always");
    assert_eq!(
        policy("nginx@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"),
        "IfNotPresent"
    );
}

#[test]
fn explicit_values_are_kept() {
    let mut p = one(json!({"name": "app", "image": "nginx", "imagePullPolicy": "Never"}));
    p["spec"]["restartPolicy"] = json!("Never");
    p["spec"]["terminationGracePeriodSeconds"] = json!(5);
    let out = create::<Pods>(p);
    assert_eq!(out.object["spec"]["restartPolicy"], "Never");
    assert_eq!(out.object["spec"]["terminationGracePeriodSeconds"], 5);
    assert_eq!(
        out.object["spec"]["containers"][0]["imagePullPolicy"],
        "Never"
    );
}

#[test]
fn client_status_is_replaced() {
    let mut p = one(ctr("app", "nginx"));
    p["status"] = json!({"phase": "Running", "podIP": "10.0.0.1"});
    let out = create::<Pods>(p);
    assert_eq!(
        out.object["status"],
        json!({"phase": "Pending", "qosClass": "BestEffort"})
    );
}

#[test]
fn requests_default_from_limits_and_quantities_are_canonical() {
    let c = with_resources(
        ctr("app", "nginx:1"),
        json!({"limits": {"cpu": "1000m", "memory": "1.5Gi"}}),
    );
    let out = create::<Pods>(one(c));
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let res = &out.object["spec"]["containers"][0]["resources"];
    assert_eq!(res["limits"], json!({"cpu": "1", "memory": "1536Mi"}));
    assert_eq!(res["requests"], json!({"cpu": "1", "memory": "1536Mi"}));
}

#[test]
fn explicit_requests_are_not_overwritten() {
    let c = with_resources(
        ctr("app", "nginx:1"),
        json!({"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "250m"}}),
    );
    let out = create::<Pods>(one(c));
    let res = &out.object["spec"]["containers"][0]["resources"];
    assert_eq!(res["requests"], json!({"cpu": "250m", "memory": "1Gi"}));
    assert_eq!(out.object["status"]["qosClass"], "Burstable");
}

#[test]
fn resource_values_round_up_to_milli() {
    let c = with_resources(
        ctr("app", "nginx:1"),
        json!({"requests": {"cpu": "0.0001", "memory": "0.5"}}),
    );
    let out = create::<Pods>(one(c));
    assert_eq!(
        out.object["spec"]["containers"][0]["resources"]["requests"],
        json!({"cpu": "1m", "memory": "500m"})
    );
}

#[test]
fn host_network_defaults_host_ports() {
    let mut p = one(json!({"name": "app", "image": "nginx", "ports": [{"containerPort": 8080}]}));
    p["spec"]["hostNetwork"] = json!(true);
    let out = create::<Pods>(p);
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!(
        out.object["spec"]["containers"][0]["ports"][0]["hostPort"],
        8080
    );
}

#[test]
fn probes_and_volumes_get_defaults() {
    let p = pod(json!({
        "containers": [{"name": "app", "image": "nginx",
                        "livenessProbe": {"httpGet": {"port": 8080}},
                        "volumeMounts": [{"name": "scratch", "mountPath": "/tmp"}]}],
        "volumes": [{"name": "scratch"}, {"name": "cfg", "configMap": {"name": "cfg"}}]
    }));
    let out = create::<Pods>(p);
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let probe = &out.object["spec"]["containers"][0]["livenessProbe"];
    assert_eq!(probe["httpGet"]["path"], "/");
    assert_eq!(probe["httpGet"]["scheme"], "HTTP");
    assert_eq!(
        (
            probe["timeoutSeconds"].clone(),
            probe["periodSeconds"].clone()
        ),
        (json!(1), json!(10))
    );
    assert_eq!(
        (
            probe["successThreshold"].clone(),
            probe["failureThreshold"].clone()
        ),
        (json!(1), json!(3))
    );
    assert_eq!(out.object["spec"]["volumes"][0]["emptyDir"], json!({}));
    assert_eq!(
        out.object["spec"]["volumes"][1]["configMap"]["defaultMode"],
        420
    );
}

#[test]
fn qos_classes() {
    let qos = |containers: Value| {
        create::<Pods>(pod(json!({"containers": containers}))).object["status"]["qosClass"].clone()
    };
    let guaranteed = with_resources(
        ctr("a", "x:1"),
        json!({"limits": {"cpu": "1", "memory": "1Gi"}}),
    );
    let burstable = with_resources(ctr("b", "x:1"), json!({"requests": {"memory": "64Mi"}}));
    let cpu_only_limit = with_resources(ctr("c", "x:1"), json!({"limits": {"cpu": "1"}}));
    let unrelated = with_resources(
        ctr("d", "x:1"),
        json!({"limits": {"ephemeral-storage": "1Gi"}}),
    );
    assert_eq!(qos(json!([guaranteed.clone()])), "Guaranteed");
    assert_eq!(qos(json!([burstable.clone()])), "Burstable");
    assert_eq!(qos(json!([guaranteed.clone(), burstable])), "Burstable");
    assert_eq!(qos(json!([cpu_only_limit])), "Burstable");
    assert_eq!(qos(json!([ctr("e", "x:1")])), "BestEffort");
    assert_eq!(qos(json!([unrelated])), "BestEffort");
    // Init containers count.
    let p = pod(json!({"containers": [guaranteed], "initContainers": [ctr("init", "x:1")]}));
    assert_eq!(create::<Pods>(p).object["status"]["qosClass"], "Burstable");
}

#[test]
fn scheduling_gates_add_a_condition() {
    let p = pod(
        json!({"containers": [ctr("app", "nginx")], "schedulingGates": [{"name": "example.com/wait"}]}),
    );
    let out = create::<Pods>(p);
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    let c = &out.object["status"]["conditions"][0];
    assert_eq!(
        (c["type"].clone(), c["status"].clone(), c["reason"].clone()),
        (
            json!("PodScheduled"),
            json!("False"),
            json!("SchedulingGated")
        )
    );
    assert_eq!(c["lastTransitionTime"], "2025-01-01T00:00:00Z");
}

#[test]
fn match_label_keys_become_selector_requirements() {
    let mut p = pod(json!({
        "containers": [ctr("app", "nginx")],
        "affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
            "labelSelector": {"matchLabels": {"app": "web"}},
            "matchLabelKeys": ["version"],
            "topologyKey": "kubernetes.io/hostname"
        }]}}
    }));
    p["metadata"]["labels"] = json!({"app": "web", "version": "v2"});
    let out = create::<Pods>(p);
    let sel = &out.object["spec"]["affinity"]["podAntiAffinity"]
        ["requiredDuringSchedulingIgnoredDuringExecution"][0]["labelSelector"];
    assert_eq!(
        sel["matchExpressions"],
        json!([{"key": "version", "operator": "In", "values": ["v2"]}])
    );
}

#[test]
fn pod_level_resources_are_dropped() {
    let p =
        pod(json!({"containers": [ctr("app", "nginx")], "resources": {"limits": {"cpu": "1"}}}));
    let out = create::<Pods>(p);
    assert!(out.object["spec"].get("resources").is_none());
}

// --- validate ---------------------------------------------------------------------------------

#[test]
fn at_least_one_container() {
    let out = create::<Pods>(pod(json!({"containers": []})));
    assert_eq!(
        errs(&out),
        vec![(ErrorType::Required, "spec.containers".into())]
    );
    let out = create::<Pods>(
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", "namespace": "default"}}),
    );
    assert_eq!(
        errs(&out),
        vec![(ErrorType::Required, "spec.containers".into())]
    );
}

#[test]
fn container_names_are_dns_labels_and_unique() {
    let out = create::<Pods>(pod(
        json!({"containers": [ctr("app", "a"), ctr("app", "b"), ctr("Bad_Name", "c"), ctr("", "d")]}),
    ));
    assert_eq!(
        errs(&out),
        vec![
            (ErrorType::Duplicate, "spec.containers[1].name".into()),
            (ErrorType::Invalid, "spec.containers[2].name".into()),
            (ErrorType::Required, "spec.containers[3].name".into()),
        ]
    );
}

#[test]
fn names_are_unique_across_init_and_regular_containers() {
    let p = pod(
        json!({"containers": [ctr("app", "a")], "initContainers": [ctr("setup", "b"), ctr("app", "c"), ctr("setup", "d")]}),
    );
    let out = create::<Pods>(p);
    assert_eq!(
        errs(&out),
        vec![
            (ErrorType::Duplicate, "spec.initContainers[1].name".into()),
            (ErrorType::Duplicate, "spec.initContainers[2].name".into()),
        ]
    );
}

#[test]
fn image_is_required_and_trimmed() {
    let out = create::<Pods>(pod(
        json!({"containers": [{"name": "app"}], "initContainers": [{"name": "init"}]}),
    ));
    assert_eq!(
        errs(&out),
        vec![
            (ErrorType::Required, "spec.containers[0].image".into()),
            (ErrorType::Required, "spec.initContainers[0].image".into())
        ]
    );
    let out = create::<Pods>(one(ctr("app", " nginx")));
    assert_eq!(
        errs(&out),
        vec![(ErrorType::Invalid, "spec.containers[0].image".into())]
    );
}

#[test]
fn restart_policy_is_one_of_three() {
    let mut p = one(ctr("app", "nginx"));
    p["spec"]["restartPolicy"] = json!("Sometimes");
    let out = create::<Pods>(p);
    assert_eq!(
        errs(&out),
        vec![(ErrorType::NotSupported, "spec.restartPolicy".into())]
    );
    assert_eq!(
        out.errors[0].detail,
        "supported values: \"Always\", \"OnFailure\", \"Never\""
    );
    assert_eq!(out.errors[0].bad_value, Some(json!("Sometimes")));
}

#[test]
fn requests_must_not_exceed_limits() {
    let c = with_resources(
        ctr("app", "nginx"),
        json!({"limits": {"cpu": "1"}, "requests": {"cpu": "1500m"}}),
    );
    let out = create::<Pods>(one(c));
    assert_eq!(
        errs(&out),
        vec![(
            ErrorType::Invalid,
            "spec.containers[0].resources.requests".into()
        )]
    );
    assert_eq!(
        out.errors[0].detail,
        "must be less than or equal to cpu limit of 1"
    );
    assert_eq!(out.errors[0].bad_value, Some(json!("1500m")));
    let c = with_resources(
        ctr("app", "nginx"),
        json!({"limits": {"memory": "1Gi"}, "requests": {"memory": "2Gi"}}),
    );
    let out = create::<Pods>(one(c));
    assert_eq!(
        out.errors[0].detail,
        "must be less than or equal to memory limit of 1Gi"
    );
}

#[test]
fn init_container_resources_are_validated_too() {
    let init = with_resources(
        ctr("init", "busybox"),
        json!({"limits": {"cpu": "100m"}, "requests": {"cpu": "200m"}}),
    );
    let p = pod(json!({"containers": [ctr("app", "nginx")], "initContainers": [init]}));
    let out = create::<Pods>(p);
    assert_eq!(
        errs(&out),
        vec![(
            ErrorType::Invalid,
            "spec.initContainers[0].resources.requests".into()
        )]
    );
}

#[test]
fn quantities_must_be_valid_and_non_negative() {
    let c = with_resources(
        ctr("app", "nginx"),
        json!({"requests": {"cpu": "lots", "memory": "-1Mi"}}),
    );
    let out = create::<Pods>(one(c));
    assert_eq!(
        errs(&out),
        vec![
            (
                ErrorType::Invalid,
                "spec.containers[0].resources.requests[cpu]".into()
            ),
            (
                ErrorType::Invalid,
                "spec.containers[0].resources.requests[memory]".into()
            ),
        ]
    );
    assert!(
        out.errors[0]
            .detail
            .starts_with("quantities must match the regular expression"),
        "{}",
        out.errors[0].detail
    );
    assert_eq!(out.errors[1].detail, "must be greater than or equal to 0");
}

#[test]
fn resource_names_are_checked() {
    // `pods` is a quota resource, not a container resource (the defaulted request too).
    let c = with_resources(ctr("app", "nginx"), json!({"limits": {"pods": "1"}}));
    let out = create::<Pods>(one(c));
    assert_eq!(
        errs(&out),
        vec![
            (
                ErrorType::Invalid,
                "spec.containers[0].resources.limits[pods]".into()
            ),
            (
                ErrorType::Invalid,
                "spec.containers[0].resources.requests[pods]".into()
            ),
        ]
    );
    assert_eq!(
        out.errors[0].detail,
        "must be a standard resource for containers"
    );
    let c = with_resources(
        ctr("app", "nginx"),
        json!({"limits": {"cpu": "1", "nogroup": "1"}}),
    );
    let out = create::<Pods>(one(c));
    let details: Vec<&str> = out.errors.iter().map(|e| e.detail.as_str()).collect();
    assert_eq!(
        &details[..2],
        [
            "must be a standard resource type or fully qualified",
            "must be a standard resource for containers"
        ]
    );
}

#[test]
fn extended_resources_are_not_overcommitted() {
    let c = with_resources(
        ctr("app", "nginx"),
        json!({"limits": {"example.com/gpu": "1"}, "requests": {"example.com/gpu": "2"}}),
    );
    let out = create::<Pods>(one(c));
    assert_eq!(
        errs(&out),
        vec![(
            ErrorType::Invalid,
            "spec.containers[0].resources.requests".into()
        )]
    );
    assert_eq!(
        out.errors[0].detail,
        "must be equal to example.com/gpu limit of 1"
    );
    let c = with_resources(
        ctr("app", "nginx"),
        json!({"limits": {"example.com/gpu": "500m"}}),
    );
    let out = create::<Pods>(one(c));
    assert_eq!(out.errors[0].detail, "must be an integer");
}

#[test]
fn extended_resources_need_a_limit() {
    let c = with_resources(
        ctr("app", "nginx"),
        json!({"requests": {"example.com/gpu": "1"}}),
    );
    let out = create::<Pods>(one(c));
    assert_eq!(
        errs(&out),
        vec![(
            ErrorType::Required,
            "spec.containers[0].resources.limits".into()
        )]
    );
}

#[test]
fn pod_name_is_a_dns_subdomain() {
    let mut p = one(ctr("app", "nginx"));
    p["metadata"]["name"] = json!("Not_Valid");
    let out = create::<Pods>(p);
    assert_eq!(
        errs(&out),
        vec![(ErrorType::Invalid, "metadata.name".into())]
    );
}

#[test]
fn dotted_names_are_valid_but_warned_about() {
    let mut p = one(ctr("app", "nginx"));
    p["metadata"]["name"] = json!("web.v1");
    let out = create::<Pods>(p);
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!(out.warnings.len(), 1);
    assert!(
        out.warnings[0].starts_with("metadata.name: this is used in the Pod's hostname"),
        "{}",
        out.warnings[0]
    );
    assert!(create::<Pods>(one(ctr("app", "nginx"))).warnings.is_empty());
}

#[test]
fn ports_are_validated() {
    let c = json!({"name": "app", "image": "nginx", "ports": [
        {"containerPort": 80, "name": "http"},
        {"containerPort": 70000, "name": "http"},
        {"containerPort": 81, "protocol": "ICMP"},
        {"containerPort": 82, "hostPort": 8080},
        {"containerPort": 83, "hostPort": 8080}
    ]});
    let out = create::<Pods>(one(c));
    assert_eq!(
        errs(&out),
        vec![
            (
                ErrorType::Duplicate,
                "spec.containers[0].ports[1].name".into()
            ),
            (
                ErrorType::Invalid,
                "spec.containers[0].ports[1].containerPort".into()
            ),
            (
                ErrorType::NotSupported,
                "spec.containers[0].ports[2].protocol".into()
            ),
            (
                ErrorType::Duplicate,
                "spec.containers[0].ports[4].hostPort".into()
            ),
        ]
    );
}

#[test]
fn volume_mounts_must_name_a_volume() {
    let p = pod(json!({
        "containers": [{"name": "app", "image": "nginx", "volumeMounts": [
            {"name": "data", "mountPath": "/data"}, {"name": "missing", "mountPath": "/data"}]}],
        "volumes": [{"name": "data", "emptyDir": {}}, {"name": "data", "emptyDir": {}}]
    }));
    let out = create::<Pods>(p);
    assert_eq!(
        errs(&out),
        vec![
            (ErrorType::Duplicate, "spec.volumes[1].name".into()),
            (
                ErrorType::NotFound,
                "spec.containers[0].volumeMounts[1].name".into()
            ),
            (
                ErrorType::Invalid,
                "spec.containers[0].volumeMounts[1].mountPath".into()
            ),
        ]
    );
}

#[test]
fn probes_are_validated() {
    let c = json!({"name": "app", "image": "nginx",
                   "livenessProbe": {"exec": {"command": ["true"]}, "successThreshold": 2},
                   "readinessProbe": {}});
    let out = create::<Pods>(one(c));
    assert_eq!(
        errs(&out),
        vec![
            (
                ErrorType::Invalid,
                "spec.containers[0].livenessProbe.successThreshold".into()
            ),
            (
                ErrorType::Required,
                "spec.containers[0].readinessProbe".into()
            ),
        ]
    );
    let init = json!({"name": "init", "image": "busybox", "readinessProbe": {"exec": {"command": ["true"]}}});
    let out = create::<Pods>(pod(
        json!({"containers": [ctr("app", "nginx")], "initContainers": [init.clone()]}),
    ));
    assert_eq!(
        errs(&out),
        vec![(
            ErrorType::Forbidden,
            "spec.initContainers[0].readinessProbe".into()
        )]
    );
    let mut sidecar = init;
    sidecar["restartPolicy"] = json!("Always");
    let out = create::<Pods>(pod(
        json!({"containers": [ctr("app", "nginx")], "initContainers": [sidecar]}),
    ));
    assert!(out.errors.is_empty(), "{:?}", out.errors);
}

#[test]
fn container_restart_policy_is_for_init_containers() {
    let mut c = ctr("app", "nginx");
    c["restartPolicy"] = json!("Always");
    let mut init = ctr("init", "busybox");
    init["restartPolicy"] = json!("OnFailure");
    let out = create::<Pods>(pod(json!({"containers": [c], "initContainers": [init]})));
    assert_eq!(
        errs(&out),
        vec![
            (
                ErrorType::Forbidden,
                "spec.containers[0].restartPolicy".into()
            ),
            (
                ErrorType::NotSupported,
                "spec.initContainers[0].restartPolicy".into()
            ),
        ]
    );
}

#[test]
fn spec_level_fields_are_validated() {
    let p = pod(json!({
        "containers": [ctr("app", "nginx")],
        "dnsPolicy": "Sometimes",
        "activeDeadlineSeconds": 0,
        "hostname": "Not_A_Label",
        "tolerations": [{"key": "k", "operator": "Exists", "value": "v"}],
        "ephemeralContainers": [{"name": "debug", "image": "busybox"}]
    }));
    let out = create::<Pods>(p);
    assert_eq!(
        errs(&out),
        vec![
            (ErrorType::NotSupported, "spec.dnsPolicy".into()),
            (ErrorType::Invalid, "spec.activeDeadlineSeconds".into()),
            (ErrorType::Invalid, "spec.hostname".into()),
            (ErrorType::Invalid, "spec.tolerations[0].operator".into()),
            (ErrorType::Forbidden, "spec.ephemeralContainers".into()),
        ]
    );
}

#[test]
fn node_name_conflicts_with_scheduling_gates() {
    let p = pod(
        json!({"containers": [ctr("app", "nginx")], "nodeName": "node-1", "schedulingGates": [{"name": "gate"}]}),
    );
    let out = create::<Pods>(p);
    assert_eq!(
        errs(&out),
        vec![(ErrorType::Forbidden, "spec.nodeName".into())]
    );
}

#[test]
fn deletion_cost_annotation_is_an_int32() {
    let mut p = one(ctr("app", "nginx"));
    p["metadata"]["annotations"] = json!({"controller.kubernetes.io/pod-deletion-cost": "+10"});
    let out = create::<Pods>(p);
    assert_eq!(
        errs(&out),
        vec![(
            ErrorType::Invalid,
            "metadata.annotations[controller.kubernetes.io/pod-deletion-cost]".into()
        )]
    );
}

// --- validate_update --------------------------------------------------------------------------

#[test]
fn image_updates_are_allowed_and_bump_generation() {
    let old = stored(
        json!({"containers": [ctr("app", "nginx:1.26")], "initContainers": [ctr("init", "busybox:1")]}),
    );
    let mut new = old.clone();
    new["spec"]["containers"][0]["image"] = json!("nginx:1.27");
    new["spec"]["initContainers"][0]["image"] = json!("busybox:2");
    new["status"] = json!({"phase": "Running"});
    let out = update::<Pods>(new, old);
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!(out.object["metadata"]["generation"], 2);
    assert_eq!(out.object["spec"]["containers"][0]["image"], "nginx:1.27");
    assert_eq!(
        out.object["status"]["phase"], "Pending",
        "status comes from the stored pod"
    );
}

#[test]
fn an_unchanged_update_keeps_the_generation() {
    let old = stored(json!({"containers": [ctr("app", "nginx:1.26")]}));
    let mut new = old.clone();
    new["metadata"]["labels"] = json!({"tier": "web"});
    let out = update::<Pods>(new, old);
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!(out.object["metadata"]["generation"], 1);
}

#[test]
fn an_update_without_the_defaults_is_defaulted_first() {
    let old = stored(json!({"containers": [ctr("app", "nginx:1.26")]}));
    let mut new = pod(json!({"containers": [ctr("app", "nginx:1.27")]}));
    new["metadata"] = old["metadata"].clone();
    let out = update::<Pods>(new, old);
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!(out.object["spec"]["restartPolicy"], "Always");
}

#[test]
fn other_spec_changes_are_forbidden() {
    let old = stored(json!({"containers": [ctr("app", "nginx:1.26")]}));
    let mut new = old.clone();
    new["spec"]["restartPolicy"] = json!("Never");
    let out = update::<Pods>(new, old.clone());
    assert_eq!(errs(&out), vec![(ErrorType::Forbidden, "spec".into())]);
    let detail = &out.errors[0].detail;
    assert!(
        detail.starts_with("pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"),
        "{detail}"
    );
    assert!(detail.contains("spec.restartPolicy"), "{detail}");

    let mut new = old.clone();
    new["spec"]["containers"][0]["resources"] = json!({"limits": {"cpu": "1"}});
    let out = update::<Pods>(new, old);
    assert_eq!(errs(&out), vec![(ErrorType::Forbidden, "spec".into())]);
}

#[test]
fn quantities_are_compared_by_value() {
    let old = stored(
        json!({"containers": [with_resources(ctr("app", "nginx:1"), json!({"limits": {"cpu": "1"}}))]}),
    );
    let mut new = old.clone();
    new["spec"]["containers"][0]["resources"] =
        json!({"limits": {"cpu": "1000m"}, "requests": {"cpu": "1.0"}});
    let out = update::<Pods>(new, old);
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!(out.object["metadata"]["generation"], 1);
}

#[test]
fn containers_may_not_be_added_or_removed() {
    let old = stored(json!({"containers": [ctr("app", "nginx:1")]}));
    let mut new = old.clone();
    new["spec"]["containers"] = json!([ctr("app", "nginx:1"), ctr("extra", "busybox:1")]);
    let out = update::<Pods>(new, old);
    assert_eq!(
        errs(&out),
        vec![(ErrorType::Forbidden, "spec.containers".into())]
    );
    assert_eq!(
        out.errors[0].detail,
        "pod updates may not add or remove containers"
    );
}

#[test]
fn active_deadline_seconds_may_only_decrease() {
    let old = stored(json!({"containers": [ctr("app", "nginx:1")], "activeDeadlineSeconds": 100}));
    let mut new = old.clone();
    new["spec"]["activeDeadlineSeconds"] = json!(50);
    assert!(update::<Pods>(new.clone(), old.clone()).errors.is_empty());
    new["spec"]["activeDeadlineSeconds"] = json!(200);
    let out = update::<Pods>(new.clone(), old.clone());
    assert_eq!(
        errs(&out),
        vec![(ErrorType::Invalid, "spec.activeDeadlineSeconds".into())]
    );
    assert_eq!(
        out.errors[0].detail,
        "must be less than or equal to previous value"
    );
    new["spec"]
        .as_object_mut()
        .unwrap()
        .remove("activeDeadlineSeconds");
    let out = update::<Pods>(new, old);
    assert_eq!(
        errs(&out),
        vec![(ErrorType::Invalid, "spec.activeDeadlineSeconds".into())]
    );
}

#[test]
fn tolerations_may_only_be_added() {
    let t1 =
        json!({"key": "a", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10});
    let old = stored(json!({"containers": [ctr("app", "nginx:1")], "tolerations": [t1.clone()]}));
    let mut new = old.clone();
    let mut t1b = t1.clone();
    t1b["tolerationSeconds"] = json!(20);
    new["spec"]["tolerations"] = json!([t1b, {"key": "b", "operator": "Exists"}]);
    let out = update::<Pods>(new.clone(), old.clone());
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    new["spec"]["tolerations"] = json!([{"key": "b", "operator": "Exists"}]);
    let out = update::<Pods>(new, old);
    assert_eq!(
        errs(&out),
        vec![(ErrorType::Forbidden, "spec.tolerations".into())]
    );
}

#[test]
fn termination_grace_period_is_immutable_except_from_negative_to_one() {
    let old = stored(json!({"containers": [ctr("app", "nginx:1")]}));
    let mut new = old.clone();
    new["spec"]["terminationGracePeriodSeconds"] = json!(60);
    assert_eq!(
        errs(&update::<Pods>(new, old.clone())),
        vec![(ErrorType::Forbidden, "spec".into())]
    );
    let mut negative = old.clone();
    negative["spec"]["terminationGracePeriodSeconds"] = json!(-1);
    let mut new = negative.clone();
    new["spec"]["terminationGracePeriodSeconds"] = json!(1);
    assert!(update::<Pods>(new, negative).errors.is_empty());
}

#[test]
fn scheduling_gates_may_only_be_removed() {
    let old = stored(
        json!({"containers": [ctr("app", "nginx:1")], "schedulingGates": [{"name": "a"}, {"name": "b"}]}),
    );
    let mut new = old.clone();
    new["spec"]["schedulingGates"] = json!([{"name": "a"}]);
    assert!(update::<Pods>(new.clone(), old.clone()).errors.is_empty());
    new["spec"]["schedulingGates"] = json!([{"name": "a"}, {"name": "c"}]);
    let out = update::<Pods>(new, old);
    assert_eq!(
        errs(&out),
        vec![(ErrorType::Forbidden, "spec.schedulingGates[1].name".into())]
    );
}

#[test]
fn an_update_is_validated_like_a_create() {
    let old = stored(json!({"containers": [ctr("app", "nginx:1")]}));
    let mut new = old.clone();
    new["spec"]["containers"][0]["image"] = json!("");
    let out = update::<Pods>(new, old);
    // validatePodMetadataAndSpec and ValidateContainerUpdates both report it, as in Go.
    assert_eq!(
        errs(&out),
        vec![
            (ErrorType::Required, "spec.containers[0].image".into()),
            (ErrorType::Required, "spec.containers[0].image".into())
        ]
    );
}

#[test]
fn mirror_pod_annotation_may_not_be_added() {
    let old = stored(json!({"containers": [ctr("app", "nginx:1")], "nodeName": "node-1"}));
    let mut new = old.clone();
    new["metadata"]["annotations"] = json!({"kubernetes.io/config.mirror": "x"});
    let out = update::<Pods>(new, old);
    assert_eq!(
        errs(&out),
        vec![(
            ErrorType::Forbidden,
            "metadata.annotations[kubernetes.io/config.mirror]".into()
        )]
    );
}

// --- status subresource -----------------------------------------------------------------------

#[test]
fn status_update_keeps_the_spec() {
    let old = stored(json!({"containers": [ctr("app", "nginx:1")]}));
    let mut new = old.clone();
    new["spec"]["containers"][0]["image"] = json!("evil:1");
    new["status"] =
        json!({"phase": "Running", "podIP": "10.1.2.3", "podIPs": [{"ip": "10.1.2.3"}]});
    let out = update_status::<Pods>(new, old);
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!(out.object["spec"]["containers"][0]["image"], "nginx:1");
    assert_eq!(out.object["status"]["phase"], "Running");
    assert_eq!(
        out.object["status"]["qosClass"], "BestEffort",
        "backfilled from the stored pod"
    );
    assert_eq!(out.object["metadata"]["generation"], 1);
}

#[test]
fn status_phase_must_be_known() {
    let old = stored(json!({"containers": [ctr("app", "nginx:1")]}));
    let mut new = old.clone();
    new["status"] = json!({"phase": "Exploded"});
    let out = update_status::<Pods>(new, old);
    assert_eq!(
        errs(&out),
        vec![(ErrorType::NotSupported, "status.phase".into())]
    );
    assert_eq!(
        out.errors[0].detail,
        "supported values: \"Pending\", \"Running\", \"Succeeded\", \"Failed\", \"Unknown\""
    );
}

#[test]
fn qos_class_is_immutable() {
    let old = stored(json!({"containers": [ctr("app", "nginx:1")]}));
    let mut new = old.clone();
    new["status"]["qosClass"] = json!("Guaranteed");
    let out = update_status::<Pods>(new, old);
    assert_eq!(
        errs(&out),
        vec![(ErrorType::Invalid, "status.qosClass".into())]
    );
}

#[test]
fn pod_ips_are_validated() {
    let old = stored(json!({"containers": [ctr("app", "nginx:1")]}));
    let mut new = old.clone();
    new["status"]["podIPs"] = json!([{"ip": "10.0.0.1"}, {"ip": "not-an-ip"}]);
    let out = update_status::<Pods>(new.clone(), old.clone());
    assert_eq!(
        errs(&out),
        vec![
            (ErrorType::Invalid, "status.podIPs[1]".into()),
            (ErrorType::Invalid, "status.podIPs".into())
        ]
    );
    new["status"]["podIPs"] = json!([{"ip": "10.0.0.1"}, {"ip": "fd00::1"}]);
    assert!(update_status::<Pods>(new, old).errors.is_empty());
}

#[test]
fn terminated_containers_stay_terminated_unless_restartable() {
    let old_status = json!({"phase": "Failed", "qosClass": "BestEffort", "containerStatuses": [{
        "name": "app", "image": "nginx:1", "imageID": "", "ready": false, "restartCount": 0,
        "state": {"terminated": {"exitCode": 0}}}]});
    let mut old = stored(json!({"containers": [ctr("app", "nginx:1")], "restartPolicy": "Never"}));
    old["status"] = old_status;
    let mut new = old.clone();
    new["status"]["containerStatuses"][0]["state"] = json!({"running": {}});
    let out = update_status::<Pods>(new.clone(), old.clone());
    assert_eq!(
        errs(&out),
        vec![(
            ErrorType::Forbidden,
            "status.containerStatuses[0].state".into()
        )]
    );
    old["spec"]["restartPolicy"] = json!("Always");
    assert!(update_status::<Pods>(new, old).errors.is_empty());
}

#[test]
fn observed_generation_is_preserved() {
    let mut old = stored(json!({"containers": [ctr("app", "nginx:1")]}));
    old["status"]["observedGeneration"] = json!(1);
    old["status"]["conditions"] =
        json!([{"type": "Ready", "status": "False", "observedGeneration": 1}]);
    let mut new = old.clone();
    new["status"] =
        json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]});
    let out = update_status::<Pods>(new, old);
    assert!(out.errors.is_empty(), "{:?}", out.errors);
    assert_eq!(out.object["status"]["observedGeneration"], 1);
    assert_eq!(
        out.object["status"]["conditions"][0]["observedGeneration"],
        1
    );
}

// --- graceful delete --------------------------------------------------------------------------

fn delete(pod: &Value, requested: Option<i64>) -> Option<i64> {
    glue::check_graceful_delete::<Pods>(&pod.to_string(), requested)
}

#[test]
fn graceful_delete_periods() {
    let mut p =
        stored(json!({"containers": [ctr("app", "nginx:1")], "terminationGracePeriodSeconds": 45}));
    assert_eq!(delete(&p, None), Some(0), "not scheduled: immediately");
    assert_eq!(delete(&p, Some(10)), Some(0));
    p["spec"]["nodeName"] = json!("node-1");
    assert_eq!(delete(&p, None), Some(45));
    assert_eq!(delete(&p, Some(10)), Some(10));
    assert_eq!(delete(&p, Some(-5)), Some(1));
    p["spec"]
        .as_object_mut()
        .unwrap()
        .remove("terminationGracePeriodSeconds");
    assert_eq!(delete(&p, None), Some(30));
    p["status"]["phase"] = json!("Succeeded");
    assert_eq!(delete(&p, Some(10)), Some(0));
    p["status"]["phase"] = json!("Failed");
    assert_eq!(delete(&p, None), Some(0));
}

// --- printer cells and attributes -------------------------------------------------------------

fn cells(p: &Value) -> Vec<Value> {
    glue::printer_cells::<Pods>(&p.to_string())
        .iter()
        .map(|c| serde_json::from_str(c).unwrap())
        .collect()
}

#[test]
fn printer_cells_of_a_new_pod() {
    let p = stored(json!({"containers": [ctr("a", "x:1"), ctr("b", "x:1")]}));
    assert_eq!(
        cells(&p),
        vec![
            json!("0/2"),
            json!("Pending"),
            json!("0"),
            json!("<none>"),
            json!("<none>"),
            json!("<none>"),
            json!("<none>")
        ]
    );
}

#[test]
fn printer_cells_of_a_running_pod() {
    let mut p = stored(json!({"containers": [ctr("a", "x:1"), ctr("b", "x:1")]}));
    p["status"]["phase"] = json!("Running");
    p["status"]["containerStatuses"] = json!([
        {"name": "a", "image": "x:1", "imageID": "", "ready": true, "restartCount": 2, "state": {"running": {}}},
        {"name": "b", "image": "x:1", "imageID": "", "ready": false, "restartCount": 1, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
    ]);
    p["spec"]["nodeName"] = json!("node-1");
    p["status"]["podIP"] = json!("10.0.0.7");
    assert_eq!(
        cells(&p),
        vec![
            json!("1/2"),
            json!("CrashLoopBackOff"),
            json!("3"),
            json!("10.0.0.7"),
            json!("node-1"),
            json!("<none>"),
            json!("<none>")
        ]
    );
    p["status"]["containerStatuses"][1] = json!({"name": "b", "image": "x:1", "imageID": "", "ready": true, "restartCount": 1, "state": {"running": {}}});
    assert_eq!(cells(&p)[..3], [json!("2/2"), json!("Running"), json!("3")]);
    p["spec"]["readinessGates"] =
        json!([{"conditionType": "example.dev/lb"}, {"conditionType": "example.dev/dns"}]);
    p["status"]["nominatedNodeName"] = json!("node-2");
    p["status"]["conditions"] = json!([{"type": "example.dev/lb", "status": "True"}, {"type": "example.dev/dns", "status": "False"}]);
    assert_eq!(cells(&p)[5..], [json!("node-2"), json!("1/2")]);
    p["metadata"]["deletionTimestamp"] = json!("2025-01-01T00:01:00Z");
    assert_eq!(cells(&p)[1], json!("Terminating"));
}

#[test]
fn printer_cells_of_init_containers_and_reasons() {
    let mut p = stored(
        json!({"containers": [ctr("a", "x:1")], "initContainers": [ctr("i1", "x:1"), ctr("i2", "x:1")]}),
    );
    p["status"]["initContainerStatuses"] = json!([
        {"name": "i1", "image": "x:1", "imageID": "", "ready": false, "restartCount": 0, "state": {"terminated": {"exitCode": 0}}},
        {"name": "i2", "image": "x:1", "imageID": "", "ready": false, "restartCount": 4, "state": {"running": {}}}
    ]);
    assert_eq!(
        cells(&p)[..3],
        [json!("0/1"), json!("Init:1/2"), json!("4")]
    );
    p["status"]["initContainerStatuses"][1]["state"] = json!({"terminated": {"exitCode": 3}});
    assert_eq!(cells(&p)[1], json!("Init:ExitCode:3"));
    let mut evicted = stored(json!({"containers": [ctr("a", "x:1")]}));
    evicted["status"] = json!({"phase": "Failed", "reason": "Evicted"});
    assert_eq!(cells(&evicted)[1], json!("Evicted"));
}

#[test]
fn attributes_are_node_name_and_phase() {
    let mut p = stored(json!({"containers": [ctr("a", "x:1")], "nodeName": "node-1"}));
    p["metadata"]["labels"] = json!({"app": "web"});
    let attrs = glue::get_attrs::<Pods>(&p.to_string()).unwrap();
    assert_eq!(attrs.labels, vec![("app".to_string(), "web".to_string())]);
    assert_eq!(
        attrs.fields,
        vec![
            ("spec.nodeName".to_string(), "node-1".to_string()),
            ("status.phase".to_string(), "Pending".to_string())
        ]
    );
}

// --- fixtures ---------------------------------------------------------------------------------

/// Run every fixture in `fixtures/` through the native hooks: the same checks as
/// `wasm-apiserver plugin test`, minus the wasm runtime.
#[test]
fn fixtures_pass_natively() {
    let n = wasm_apiserver_sdk::testing::run_fixtures::<Pods>(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures"
    ));
    assert!(n >= 6, "fixtures missing");
}
