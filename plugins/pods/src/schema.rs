//! The OpenAPI v3 schema of a Pod: a subset of kube-apiserver's `io.k8s.api.core.v1.Pod`
//! (descriptions abridged from k8s.io/api/core/v1/types.go). Objects whose fields are not
//! listed keep unknown fields (`x-kubernetes-preserve-unknown-fields`), so nothing is lost by a
//! client that prunes with this schema.

use serde_json::{json, Value};

fn open_object(description: &str) -> Value {
    json!({"type": "object", "description": description, "x-kubernetes-preserve-unknown-fields": true})
}

fn string(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

fn string_enum(description: &str, values: &[&str]) -> Value {
    json!({"type": "string", "description": description, "enum": values})
}

fn int32(description: &str) -> Value {
    json!({"type": "integer", "format": "int32", "description": description})
}

fn int64(description: &str) -> Value {
    json!({"type": "integer", "format": "int64", "description": description})
}

fn quantity() -> Value {
    json!({
        "description": "Quantity is a fixed-point representation of a number, e.g. 100m, 1.5, 128Mi, 1Gi.",
        "oneOf": [{"type": "string"}, {"type": "number"}],
        "x-kubernetes-int-or-string": true
    })
}

fn resource_list(description: &str) -> Value {
    json!({"type": "object", "description": description, "additionalProperties": quantity()})
}

fn string_list(description: &str) -> Value {
    json!({"type": "array", "description": description, "items": {"type": "string"}})
}

fn probe(description: &str) -> Value {
    json!({
        "type": "object",
        "description": description,
        "properties": {
            "exec": open_object("Exec specifies a command to execute in the container."),
            "httpGet": open_object("HTTPGet specifies an HTTP GET request to perform."),
            "tcpSocket": open_object("TCPSocket specifies a connection to a TCP port."),
            "grpc": open_object("GRPC specifies a GRPC HealthCheckRequest."),
            "initialDelaySeconds": int32("Number of seconds after the container has started before probes are initiated."),
            "timeoutSeconds": int32("Number of seconds after which the probe times out. Defaults to 1."),
            "periodSeconds": int32("How often (in seconds) to perform the probe. Defaults to 10."),
            "successThreshold": int32("Minimum consecutive successes for the probe to be considered successful. Defaults to 1; must be 1 for liveness and startup."),
            "failureThreshold": int32("Minimum consecutive failures for the probe to be considered failed. Defaults to 3."),
            "terminationGracePeriodSeconds": int64("Optional duration in seconds the pod needs to terminate gracefully upon probe failure.")
        }
    })
}

fn container(description: &str) -> Value {
    json!({
        "type": "object",
        "description": description,
        "required": ["name"],
        "properties": {
            "name": string("Name of the container specified as a DNS_LABEL. Each container in a pod must have a unique name. Cannot be updated."),
            "image": string("Container image name. Required for pods; may be updated."),
            "imagePullPolicy": string_enum(
                "Image pull policy. Defaults to Always if the :latest tag is specified (or no tag), or IfNotPresent otherwise.",
                &["Always", "IfNotPresent", "Never"]),
            "command": string_list("Entrypoint array. Not executed within a shell."),
            "args": string_list("Arguments to the entrypoint."),
            "workingDir": string("Container's working directory."),
            "ports": {
                "type": "array",
                "description": "List of ports to expose from the container.",
                "items": {
                    "type": "object",
                    "required": ["containerPort"],
                    "properties": {
                        "name": string("An IANA_SVC_NAME, unique within the pod."),
                        "containerPort": int32("Number of port to expose on the pod's IP address: 0 < x < 65536."),
                        "hostPort": int32("Number of port to expose on the host."),
                        "hostIP": string("What host IP to bind the external port to."),
                        // kube's schema defaults the list-map key, so an item without it is named with TCP.
                        "protocol": {"type": "string", "description": "Protocol for port. Defaults to \"TCP\".", "enum": ["SCTP", "TCP", "UDP"], "default": "TCP"}
                    }
                },
                "x-kubernetes-list-map-keys": ["containerPort", "protocol"],
                "x-kubernetes-list-type": "map",
                "x-kubernetes-patch-merge-key": "containerPort",
                "x-kubernetes-patch-strategy": "merge"
            },
            "env": {
                "type": "array",
                "description": "List of environment variables to set in the container.",
                "items": {
                    "type": "object",
                    "required": ["name"],
                    "properties": {
                        "name": string("Name of the environment variable."),
                        "value": string("Variable references $(VAR_NAME) are expanded."),
                        "valueFrom": open_object("Source for the environment variable's value.")
                    }
                },
                "x-kubernetes-list-map-keys": ["name"],
                "x-kubernetes-list-type": "map",
                "x-kubernetes-patch-merge-key": "name",
                "x-kubernetes-patch-strategy": "merge"
            },
            "envFrom": {"type": "array", "description": "Sources to populate environment variables in the container.", "items": open_object("EnvFromSource.")},
            "resources": {
                "type": "object",
                "description": "Compute Resources required by this container. Requests default to limits; requests must not exceed limits.",
                "properties": {
                    "limits": resource_list("Limits describes the maximum amount of compute resources allowed."),
                    "requests": resource_list("Requests describes the minimum amount of compute resources required. Defaults to Limits if omitted."),
                    "claims": {"type": "array", "description": "Names of resources, defined in spec.resourceClaims, used by this container.", "items": open_object("ResourceClaim.")}
                }
            },
            "resizePolicy": {"type": "array", "description": "Resources resize policy for the container.", "items": open_object("ContainerResizePolicy.")},
            "restartPolicy": string_enum("Only for init containers: Always makes it a sidecar.", &["Always"]),
            "volumeMounts": {
                "type": "array",
                "description": "Pod volumes to mount into the container's filesystem.",
                "items": {
                    "type": "object",
                    "required": ["name", "mountPath"],
                    "properties": {
                        "name": string("This must match the Name of a Volume."),
                        "mountPath": string("Path within the container at which the volume should be mounted."),
                        "readOnly": {"type": "boolean", "description": "Mounted read-only if true."},
                        "subPath": string("Path within the volume from which the container's volume should be mounted.")
                    }
                },
                "x-kubernetes-list-map-keys": ["mountPath"],
                "x-kubernetes-list-type": "map",
                "x-kubernetes-patch-merge-key": "mountPath",
                "x-kubernetes-patch-strategy": "merge"
            },
            "livenessProbe": probe("Periodic probe of container liveness."),
            "readinessProbe": probe("Periodic probe of container service readiness."),
            "startupProbe": probe("StartupProbe indicates that the Pod has successfully initialized."),
            "lifecycle": open_object("Actions that the management system should take in response to container lifecycle events."),
            "securityContext": open_object("SecurityContext defines the security options the container should be run with."),
            "terminationMessagePath": string("Path at which the file to which the container's termination message will be written. Defaults to /dev/termination-log."),
            "terminationMessagePolicy": string_enum("How the termination message should be populated. Defaults to File.", &["File", "FallbackToLogsOnError"]),
            "stdin": {"type": "boolean", "description": "Whether this container should allocate a buffer for stdin."},
            "stdinOnce": {"type": "boolean", "description": "Whether the container runtime should close stdin after the first attach."},
            "tty": {"type": "boolean", "description": "Whether this container should allocate a TTY for itself."}
        }
    })
}

fn containers(description: &str) -> Value {
    json!({
        "type": "array",
        "description": description,
        "items": container("A single application container that you want to run within a pod."),
        "x-kubernetes-list-map-keys": ["name"],
        "x-kubernetes-list-type": "map",
        "x-kubernetes-patch-merge-key": "name",
        "x-kubernetes-patch-strategy": "merge"
    })
}

fn container_statuses(description: &str) -> Value {
    json!({
        "type": "array",
        "description": description,
        "items": {
            "type": "object",
            "required": ["name", "ready", "restartCount", "image", "imageID"],
            "properties": {
                "name": string("The name of the container."),
                "ready": {"type": "boolean", "description": "Whether the container is currently passing its readiness check."},
                "started": {"type": "boolean", "description": "Whether the container has finished its postStart hook and passed its startup probe."},
                "restartCount": int32("The number of times the container has been restarted."),
                "image": string("The image the container is running."),
                "imageID": string("The image ID of the container's image."),
                "containerID": string("The ID of the container in the format '<type>://<container_id>'."),
                "state": open_object("Details about the container's current condition: waiting, running or terminated."),
                "lastState": open_object("Details about the container's last termination condition.")
            }
        },
        "x-kubernetes-list-type": "atomic"
    })
}

/// The schema of a Pod.
pub fn pod_schema() -> Value {
    json!({
        "type": "object",
        "description": "Pod is a collection of containers that can run on a host. This resource is created by clients and scheduled onto hosts.",
        "x-kubernetes-group-version-kind": [{"group": "", "kind": "Pod", "version": "v1"}],
        "properties": {
            "apiVersion": string("APIVersion defines the versioned schema of this representation of an object."),
            "kind": string("Kind is a string value representing the REST resource this object represents."),
            "metadata": open_object("Standard object's metadata."),
            "spec": spec_schema(),
            "status": status_schema()
        }
    })
}

fn spec_schema() -> Value {
    json!({
        "type": "object",
        "description": "Specification of the desired behavior of the pod.",
        "required": ["containers"],
        "properties": {
            "containers": containers("List of containers belonging to the pod. There must be at least one container in a Pod. Only images may be updated."),
            "initContainers": containers("List of initialization containers belonging to the pod, run in order before the app containers."),
            "ephemeralContainers": {"type": "array", "description": "Ephemeral containers run in this pod; set through the ephemeralcontainers subresource only.", "items": open_object("EphemeralContainer.")},
            "volumes": {
                "type": "array",
                "description": "List of volumes that can be mounted by containers belonging to the pod.",
                "items": {"type": "object", "required": ["name"], "properties": {"name": string("Volume's name. Must be a DNS_LABEL and unique within the pod.")}, "x-kubernetes-preserve-unknown-fields": true},
                "x-kubernetes-list-map-keys": ["name"],
                "x-kubernetes-list-type": "map",
                "x-kubernetes-patch-merge-key": "name",
                "x-kubernetes-patch-strategy": "merge,retainKeys"
            },
            "restartPolicy": string_enum("Restart policy for all containers within the pod. Defaults to Always.", &["Always", "OnFailure", "Never"]),
            "terminationGracePeriodSeconds": int64("Optional duration in seconds the pod needs to terminate gracefully. Defaults to 30 seconds."),
            "activeDeadlineSeconds": int64("Optional duration in seconds the pod may be active on the node before the system actively tries to mark it failed. May only be lowered on update."),
            "dnsPolicy": string_enum("Set DNS policy for the pod. Defaults to \"ClusterFirst\".", &["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]),
            "dnsConfig": open_object("Specifies the DNS parameters of a pod."),
            "nodeSelector": {"type": "object", "description": "A selector which must be true for the pod to fit on a node.", "additionalProperties": {"type": "string"}, "x-kubernetes-map-type": "atomic"},
            "nodeName": string("A request to schedule this pod onto a specific node. Set by the scheduler (through the binding subresource) otherwise."),
            "serviceAccountName": string("Name of the ServiceAccount to use to run this pod."),
            "automountServiceAccountToken": {"type": "boolean", "description": "Whether a service account token should be automatically mounted."},
            "schedulerName": string("The pod will be dispatched by the specified scheduler. Defaults to default-scheduler."),
            "securityContext": open_object("Pod-level security attributes and common container settings. Defaults to empty."),
            "hostNetwork": {"type": "boolean", "description": "Host networking requested for this pod."},
            "hostPID": {"type": "boolean", "description": "Use the host's pid namespace."},
            "hostIPC": {"type": "boolean", "description": "Use the host's ipc namespace."},
            "hostname": string("Specifies the hostname of the Pod. Defaults to the pod name."),
            "subdomain": string("If specified, the fully qualified Pod hostname will be \"<hostname>.<subdomain>.<pod namespace>.svc.<cluster domain>\"."),
            "affinity": open_object("If specified, the pod's scheduling constraints."),
            "tolerations": {"type": "array", "description": "If specified, the pod's tolerations. Only additions are allowed on update.", "items": open_object("Toleration."), "x-kubernetes-list-type": "atomic"},
            "priorityClassName": string("If specified, indicates the pod's priority."),
            "priority": int32("The priority value, populated from priorityClassName by admission."),
            "preemptionPolicy": string_enum("Policy for preempting pods with lower priority.", &["PreemptLowerPriority", "Never"]),
            "runtimeClassName": string("RuntimeClass used to run this pod."),
            "enableServiceLinks": {"type": "boolean", "description": "Whether information about services should be injected into the pod's environment variables. Defaults to true."},
            "imagePullSecrets": {"type": "array", "description": "References to secrets in the same namespace to use for pulling images.", "items": {"type": "object", "properties": {"name": string("Name of the referent.")}}},
            "schedulingGates": {"type": "array", "description": "Gates that block scheduling; may only be removed on update.", "items": {"type": "object", "required": ["name"], "properties": {"name": string("Name of the scheduling gate.")}}},
            "readinessGates": {"type": "array", "description": "Additional conditions evaluated for pod readiness.", "items": open_object("PodReadinessGate.")},
            "topologySpreadConstraints": {"type": "array", "description": "How a group of pods ought to spread across topology domains.", "items": open_object("TopologySpreadConstraint.")},
            "overhead": resource_list("Resource overhead associated with running a pod for a given RuntimeClass."),
            "os": open_object("The OS of the containers in the pod.")
        }
    })
}

fn status_schema() -> Value {
    json!({
        "type": "object",
        "description": "Most recently observed status of the pod. Set through the status subresource; starts as {phase: Pending, qosClass}.",
        "properties": {
            "phase": string_enum("A simple, high-level summary of where the Pod is in its lifecycle.", &["Pending", "Running", "Succeeded", "Failed", "Unknown"]),
            "qosClass": string_enum("The Quality of Service class assigned to the pod based on resource requirements. Immutable.", &["Guaranteed", "Burstable", "BestEffort"]),
            "conditions": {
                "type": "array",
                "description": "Current service state of pod.",
                "items": {
                    "type": "object",
                    "required": ["type", "status"],
                    "properties": {
                        "type": string("Type is the type of the condition."),
                        "status": string_enum("Status is the status of the condition.", &["True", "False", "Unknown"]),
                        "reason": string("Unique, one-word, CamelCase reason for the condition's last transition."),
                        "message": string("Human-readable message indicating details about last transition."),
                        "lastTransitionTime": {"type": "string", "format": "date-time", "description": "Last time the condition transitioned from one status to another."},
                        "lastProbeTime": {"type": "string", "format": "date-time", "description": "Last time we probed the condition."},
                        "observedGeneration": int64("The .metadata.generation that the condition was set based upon.")
                    }
                },
                "x-kubernetes-list-map-keys": ["type"],
                "x-kubernetes-list-type": "map",
                "x-kubernetes-patch-merge-key": "type",
                "x-kubernetes-patch-strategy": "merge"
            },
            "message": string("A human readable message indicating details about why the pod is in this condition."),
            "reason": string("A brief CamelCase message indicating details about why the pod is in this state, e.g. 'Evicted'."),
            "nominatedNodeName": string("The node the scheduler nominated for this pod after preemption."),
            "hostIP": string("IP address of the host to which the pod is assigned."),
            "hostIPs": {"type": "array", "description": "IP addresses allocated to the host.", "items": {"type": "object", "required": ["ip"], "properties": {"ip": string("IP is the IP address assigned to the host.")}}},
            "podIP": string("IP address allocated to the pod. Routable at least within the cluster."),
            "podIPs": {"type": "array", "description": "IP addresses allocated to the pod; at most one per IP family.", "items": {"type": "object", "required": ["ip"], "properties": {"ip": string("IP is the IP address assigned to the pod.")}}},
            "startTime": {"type": "string", "format": "date-time", "description": "RFC 3339 date and time at which the object was acknowledged by the Kubelet."},
            "observedGeneration": int64("The .metadata.generation that the pod status was set based upon."),
            "containerStatuses": container_statuses("Statuses of the containers in the manifest."),
            "initContainerStatuses": container_statuses("Statuses of the init containers in the manifest."),
            "ephemeralContainerStatuses": container_statuses("Statuses of the ephemeral containers.")
        }
    })
}
