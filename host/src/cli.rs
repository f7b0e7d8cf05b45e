//! Command-line interface: kube-apiserver-style flags for serving
//! (`cmd/kube-apiserver/app/options`) and the offline plugin author tools `plugin check` and
//! `plugin test`. Parsing only; [`crate::app`] runs what was asked.

use crate::plugin::RuntimeConfig;
use clap::{Args, Parser, Subcommand};
use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

/// wasm-apiserver: a Kubernetes-style API server whose resource strategies are WebAssembly
/// components loaded from --plugin-dir.
#[derive(Debug, Parser)]
#[command(name = "wasm-apiserver", version, about, long_about = None)]
pub struct Cli {
    /// Offline tools; without one, the server runs.
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Server flags.
    #[command(flatten)]
    pub serve: ServeArgs,
}

/// Subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Plugin author tools.
    #[command(subcommand)]
    Plugin(PluginCommand),
    /// Encryption at rest.
    #[command(subcommand)]
    Encryption(EncryptionCommand),
}

/// `wasm-apiserver encryption …`.
#[derive(Debug, Subcommand)]
pub enum EncryptionCommand {
    /// Rotate the encryption key of every resource entry that encrypts, on every replica, in
    /// one call: a new key added as a read key, then made the write key, every affected
    /// object rewritten (StorageVersionMigrations, progress printed), the old key dropped —
    /// each step waited on until every replica has loaded it.
    Rotate {
        /// The EncryptionConfiguration file every replica reads (their
        /// --encryption-provider-config, or <data-dir>/encryption-config.yaml); rewritten in place.
        #[arg(long)]
        encryption_provider_config: PathBuf,
        /// How long each step may take.
        #[arg(long, default_value = "5m", value_parser = humantime::parse_duration)]
        timeout: std::time::Duration,
        /// A replica whose identity lease was not renewed for this long is taken as gone.
        #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
        replica_grace: std::time::Duration,
        /// Kubeconfig file (default: $KUBECONFIG, then ~/.kube/config).
        #[arg(long)]
        kubeconfig: Option<PathBuf>,
        /// Kubeconfig context (default: the current one).
        #[arg(long)]
        context: Option<String>,
        /// A server URL used without credentials (a development server's plain port).
        #[arg(long, conflicts_with_all = ["kubeconfig", "context"])]
        server: Option<String>,
    },
}

/// `wasm-apiserver plugin …`.
#[derive(Debug, Subcommand)]
pub enum PluginCommand {
    /// Load, validate and describe a plugin offline.
    Check {
        /// The component (`*.wasm`).
        file: PathBuf,
        #[command(flatten)]
        limits: PluginLimits,
    },
    /// Run a plugin (a strategy or an admission policy) over the fixture cases (`*.json`) in
    /// DIR and compare with their expectations.
    Test {
        /// The component (`*.wasm`).
        file: PathBuf,
        /// Directory of fixture cases.
        dir: PathBuf,
        #[command(flatten)]
        limits: PluginLimits,
    },
    /// Upload a component through the API and create or update the StrategyPlugin object
    /// naming it (every replica then serves it) — or, for an admission policy component, the
    /// AdmissionPlugin object, granting the reads the component declares. Needs permission
    /// to write strategyplugincomponents and strategyplugins (or admissionplugins) of
    /// wasm-apiserver.dev (cluster-admin).
    Push {
        /// The component (`*.wasm`).
        file: PathBuf,
        /// The object's name (default: the file stem).
        #[arg(long)]
        name: Option<String>,
        /// Create or update the object with `spec.active: false` (the resource is not served).
        #[arg(long)]
        inactive: bool,
        /// Upload the component only (for objects applied from a GitOps repository).
        #[arg(long)]
        upload_only: bool,
        /// Attach the plugin's hooks to this CustomResourceDefinition (`spec.extends`, e.g.
        /// `widgets.example.dev`) instead of serving a resource of its own.
        #[arg(long)]
        extends: Option<String>,
        /// A kubeconfig file (default: $KUBECONFIG, then ~/.kube/config).
        #[arg(long)]
        kubeconfig: Option<PathBuf>,
        /// The kubeconfig context (default: its current context).
        #[arg(long)]
        context: Option<String>,
        /// A server URL to use without credentials instead of a kubeconfig (a development
        /// server's plain loopback port).
        #[arg(long, conflicts_with_all = ["kubeconfig", "context"])]
        server: Option<String>,
    },
    /// Print the StrategyPlugin (or, for an admission policy, AdmissionPlugin) object for a
    /// component as YAML (for GitOps; upload the component with `plugin push --upload-only`).
    Manifest {
        /// The component (`*.wasm`).
        file: PathBuf,
        /// The object's name (default: the file stem).
        #[arg(long)]
        name: Option<String>,
        /// `spec.active: false`.
        #[arg(long)]
        inactive: bool,
        /// `spec.extends`: the CustomResourceDefinition the plugin attaches to.
        #[arg(long)]
        extends: Option<String>,
    },
    /// Write a new plugin project NAME/ (source with one validation rule, fixtures, a build
    /// script, a README) that builds with `./build.sh` and passes `plugin test` as written.
    New {
        /// Project and component name: a DNS-1035 label, e.g. `gadgets`.
        name: String,
        /// The language: `rust`, `python` or `js`.
        #[arg(long, value_parser = ["rust", "python", "js"])]
        lang: String,
        /// The API group served.
        #[arg(long, default_value = "example.dev")]
        group: String,
        /// The kind served, UpperCamelCase (default: NAME without a trailing `s`, camel-cased;
        /// the plural is the lower-cased kind + `s`).
        #[arg(long)]
        kind: Option<String>,
        /// The directory to create NAME/ in.
        #[arg(long, default_value = ".")]
        dir: PathBuf,
        /// Rust only: the `wasm-apiserver-sdk` crate the project depends on by path (default:
        /// `plugins/sdk` of the source tree this binary was built from).
        #[arg(long)]
        sdk_path: Option<PathBuf>,
        /// Write an admission policy project instead (a validating policy with one rule and
        /// its `plugin test` fixtures), in any of the three languages.
        #[arg(long)]
        policy: bool,
    },
    /// Compile the component read from standard input into a precompiled artifact at OUT
    /// (the server runs this in a child process so it never holds the compiler's memory).
    #[command(hide = true)]
    Precompile {
        /// Where to write the artifact.
        #[arg(long)]
        out: PathBuf,
    },
}

/// Limits applied to every plugin call.
#[derive(Debug, Clone, Args)]
pub struct PluginLimits {
    /// Deadline of one strategy hook call, in milliseconds.
    #[arg(long = "plugin-call-timeout-ms", default_value_t = 1000)]
    pub call_timeout_ms: u64,
    /// Cap on one plugin instance's linear memory, in MiB (instances together: twice this).
    #[arg(long = "plugin-memory-limit-mib", default_value_t = 1024)]
    pub memory_limit_mib: usize,
    /// Directory of precompiled plugin artifacts (created if missing). The server defaults it
    /// to `<data-dir>/plugin-cache`.
    #[arg(long = "plugin-cache-dir")]
    pub cache_dir: Option<PathBuf>,
    /// The most memory one plugin compile may use, in MiB (the server compiles in a child
    /// process, one at a time, and refuses a component whose compile needs more).
    #[arg(long = "plugin-compile-memory-mib", default_value_t = 1024)]
    pub compile_memory_mib: u64,
}

impl PluginLimits {
    /// The runtime configuration these flags describe.
    pub fn runtime_config(&self) -> RuntimeConfig {
        RuntimeConfig {
            call_deadline: Duration::from_millis(self.call_timeout_ms),
            memory_limit: self.memory_limit_mib << 20,
            cache_dir: self.cache_dir.clone(),
            compile_in_subprocess: false,
            compile_memory_limit: self.compile_memory_mib << 20,
        }
    }
}

/// Flags of the server (kube-apiserver's names where one exists).
#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Directory whose `*.wasm` files are the strategy plugins.
    #[arg(long, default_value = "plugins.d")]
    pub plugin_dir: PathBuf,
    /// The configured component serving CustomResourceDefinitions (`plugins/customresources`);
    /// relative paths are taken from --plugin-dir. Loaded when the first CRD is served.
    #[arg(long, default_value = "configured/customresources.wasm")]
    pub crd_plugin: PathBuf,
    /// Directory of the embedded store (used when --etcd-servers is not given).
    #[arg(long, default_value = "data")]
    pub data_dir: PathBuf,
    /// Comma-separated etcd endpoints; empty means the embedded store.
    #[arg(long, value_delimiter = ',')]
    pub etcd_servers: Vec<String>,
    /// Per-resource etcd servers, kube-apiserver's format: `group/resource#servers`, servers
    /// separated by `;`, entries by `,` (e.g. `/events#http://127.0.0.1:4002`,
    /// `example.dev/widgets#http://a:2379;http://b:2379`).
    #[arg(long, value_delimiter = ',')]
    pub etcd_servers_overrides: Vec<String>,
    /// Key prefix of every resource in storage.
    #[arg(long, default_value = "/registry")]
    pub etcd_prefix: String,
    /// CA file to verify etcd's serving certificate.
    #[arg(long)]
    pub etcd_cafile: Option<PathBuf>,
    /// Client certificate for etcd.
    #[arg(long)]
    pub etcd_certfile: Option<PathBuf>,
    /// Client key for etcd.
    #[arg(long)]
    pub etcd_keyfile: Option<PathBuf>,
    /// Seconds between compactions of storage history (kube-apiserver's
    /// --etcd-compaction-interval, 5 minutes); 0 disables compaction.
    #[arg(long = "etcd-compaction-interval-seconds", default_value_t = 300)]
    pub etcd_compaction_interval_seconds: u64,
    /// Serve lists and watches from the watch cache (kube-apiserver's --watch-cache).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub watch_cache: bool,
    /// Log format: `text` or `json` (one JSON object per line); also `--logging-format`,
    /// kube-apiserver's name. Text has colour codes only when stderr is a terminal.
    #[arg(long, alias = "logging-format", default_value = "text", value_parser = ["text", "json"])]
    pub log_format: String,
    /// Watch --plugin-dir and hot-reload changed plugins (SIGHUP rescans in any case).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub plugin_reload: bool,
    /// This server's identity among the replicas of one storage (StrategyPlugin status,
    /// leader election, `wasm_apiserver_server_info`). Default: `apiserver-` and a hash of
    /// the host name and the secure port (kube-apiserver's `APIServerID` hashes the host name).
    #[arg(long)]
    pub server_id: Option<String>,
    /// The largest strategy plugin component accepted by an upload, in bytes.
    #[arg(long, default_value_t = 64 << 20)]
    pub max_plugin_component_bytes: u64,
    /// Seconds a watch lasts when the client gives no timeoutSeconds.
    #[arg(long = "min-request-timeout", default_value_t = 1800)]
    pub min_request_timeout_seconds: u64,
    /// Address the secure port listens on (every address by default).
    #[arg(long, default_value = "0.0.0.0")]
    pub bind_address: IpAddr,
    /// Port of HTTPS with authentication and authorization; it cannot be switched off, and 0
    /// lets the system pick a free one (printed at start).
    #[arg(long, default_value_t = 6443)]
    pub secure_port: u16,
    /// A plain-HTTP port on 127.0.0.1 for local development (none unless given; 0 lets the
    /// system pick). Its requests go through the same authentication (tokens, or anonymous)
    /// and authorization.
    #[arg(long)]
    pub port: Option<u16>,
    /// Directory of the generated certificates and keys (default `<data-dir>/pki`).
    #[arg(long)]
    pub cert_dir: Option<PathBuf>,
    /// Serving certificate (PEM, chain leaf first); generated into --cert-dir when absent.
    #[arg(long, requires = "tls_private_key_file")]
    pub tls_cert_file: Option<PathBuf>,
    /// Private key of --tls-cert-file (PEM).
    #[arg(long, requires = "tls_cert_file")]
    pub tls_private_key_file: Option<PathBuf>,
    /// Extra subject alternative names (DNS names or IPs) of the generated serving
    /// certificate, comma-separated.
    #[arg(long, value_delimiter = ',')]
    pub tls_sans: Vec<String>,
    /// CA bundle client certificates are verified against (user = CN, groups = O). Without
    /// it a client CA and an admin certificate are generated and `<data-dir>/admin.kubeconfig`
    /// written.
    #[arg(long)]
    pub client_ca_file: Option<PathBuf>,
    /// Static bearer tokens, kube's CSV format: `token,user,uid,"group1,group2"`.
    #[arg(long)]
    pub token_auth_file: Option<PathBuf>,
    /// An `AuthenticationConfiguration` (apiserver.config.k8s.io/v1): JWT issuers (OIDC) with
    /// their audiences, claim mappings and validation rules; read again when it changes
    /// (kube-apiserver's --authentication-config).
    #[arg(long)]
    pub authentication_config: Option<PathBuf>,
    /// Serve requests without credentials as `system:anonymous` (group
    /// `system:unauthenticated`); otherwise they are answered 401.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub anonymous_auth: bool,
    /// Authorizers in order, comma-separated: `RBAC`, `AlwaysAllow` (development only),
    /// `AlwaysDeny`. Members of `system:masters` are always allowed.
    #[arg(long, value_delimiter = ',', default_value = "RBAC")]
    pub authorization_mode: Vec<crate::authorization::AuthorizationMode>,
    /// Admission plugins to turn off although they are enabled by default, comma-separated:
    /// `NamespaceLifecycle`, `MutatingAdmissionPolicy`, `ValidatingAdmissionPolicy`,
    /// `WasmAdmissionPolicy` (kube-apiserver's `--disable-admission-plugins`; an unknown name
    /// refuses the start).
    #[arg(long, value_delimiter = ',')]
    pub disable_admission_plugins: Vec<String>,
    /// Controllers to run in the server, comma-separated: `*` all (`garbagecollector`,
    /// `namespace`, `system-namespaces`, `validatingadmissionpolicy-status-controller`),
    /// `-name` turns one off (kube-controller-manager's
    /// --controllers).
    #[arg(long, value_delimiter = ',', default_value = "*")]
    pub controllers: Vec<String>,
    /// Run the namespace controller, the garbage collector and the policy status controller
    /// only while holding the
    /// `kube-system/wasm-apiserver-controllers` Lease, so that one of several servers sharing
    /// an etcd runs them (kube-controller-manager's --leader-elect). Without the `leases`
    /// plugin every server runs them, with a warning.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub leader_elect: bool,
    /// How long a lease not renewed stays its holder's before another server takes it.
    #[arg(long, default_value = "15s", value_parser = humantime::parse_duration)]
    pub leader_elect_lease_duration: std::time::Duration,
    /// How long the leader keeps its controllers running without a successful renewal.
    #[arg(long, default_value = "10s", value_parser = humantime::parse_duration)]
    pub leader_elect_renew_deadline: std::time::Duration,
    /// Between two attempts to acquire or renew the lease.
    #[arg(long, default_value = "2s", value_parser = humantime::parse_duration)]
    pub leader_elect_retry_period: std::time::Duration,
    /// Read-only requests served at once (watches not counted); more are answered 429.
    /// 0: no limit.
    #[arg(long, default_value_t = 400)]
    pub max_requests_inflight: usize,
    /// Mutating requests served at once; more are answered 429. 0: no limit.
    #[arg(long, default_value_t = 200)]
    pub max_mutating_requests_inflight: usize,
    /// The largest write the embedded store accepts (key and stored value, bytes): etcd's
    /// `--max-request-bytes` and its default, so an object too large for etcd is too large on
    /// the embedded store too (413). 0: no limit.
    #[arg(long, default_value_t = 1536 * 1024)]
    pub embedded_max_request_bytes: usize,
    /// Issuer of service-account tokens (`iss`); repeated or comma-separated, the first signs,
    /// all are accepted. Default: https://kubernetes.default.svc.cluster.local.
    #[arg(long, value_delimiter = ',')]
    pub service_account_issuer: Vec<String>,
    /// PEM file of the P-256 private key (PKCS#8) that signs service-account tokens. Default:
    /// <cert-dir>/sa.key, generated on the first start.
    #[arg(long)]
    pub service_account_signing_key_file: Option<PathBuf>,
    /// More PEM files of keys whose tokens are accepted (P-256 PRIVATE KEY or PUBLIC KEY).
    #[arg(long)]
    pub service_account_key_file: Vec<PathBuf>,
    /// Audiences the API accepts in a token; comma-separated. Default: the issuers.
    #[arg(long, value_delimiter = ',')]
    pub api_audiences: Vec<String>,
    /// The longest lifetime a TokenRequest gets (longer requests are shortened). Default:
    /// none.
    #[arg(long, value_parser = humantime::parse_duration)]
    pub service_account_max_token_expiration: Option<std::time::Duration>,
    /// apiserver.config.k8s.io/v1 EncryptionConfiguration: which resources are encrypted at
    /// rest, with which providers and keys (aesgcm, aescbc, secretbox, identity). Default:
    /// <data-dir>/encryption-config.yaml, written on the first start (Secrets, secretbox).
    #[arg(long)]
    pub encryption_provider_config: Option<PathBuf>,
    /// Re-read the encryption provider config when it changes (checked every second) and use
    /// it without a restart; a file that does not validate is logged and the last good
    /// configuration kept.
    #[arg(long, default_value_t = false)]
    pub encryption_provider_config_automatic_reload: bool,
    /// audit.k8s.io/v1 Policy (YAML or JSON); with --audit-log-path, requests are audited.
    #[arg(long)]
    pub audit_policy_file: Option<PathBuf>,
    /// File the audit events are written to as JSON lines (`-`: standard output).
    #[arg(long)]
    pub audit_log_path: Option<PathBuf>,
    /// Size in MiB past which the audit log is rotated; 0 never rotates.
    #[arg(long, default_value_t = 0)]
    pub audit_log_maxsize: u64,
    /// Rotated audit log files kept; 0 keeps them all.
    #[arg(long, default_value_t = 0)]
    pub audit_log_maxbackup: usize,
    /// Deadline of a non-watch request, answered 504 when exceeded; also how long shutdown
    /// waits for the requests in flight (kube-apiserver's --request-timeout).
    #[arg(long, default_value = "60s", value_parser = humantime::parse_duration)]
    pub request_timeout: std::time::Duration,
    /// How long the server keeps serving after SIGTERM, with /readyz failing, before it closes
    /// its listener (kube-apiserver's --shutdown-delay-duration).
    #[arg(long, default_value = "0s", value_parser = humantime::parse_duration)]
    pub shutdown_delay_duration: std::time::Duration,
    /// After the shutdown delay, keep the listener open until the requests in flight are done
    /// and answer new requests 429 with `Retry-After` and `Connection: close`, instead of
    /// closing the listener at once (kube-apiserver's --shutdown-send-retry-after).
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set, num_args = 0..=1, default_missing_value = "true")]
    pub shutdown_send_retry_after: bool,
    /// How long shutdown waits for open watches to end once they are told to, after the
    /// requests in flight are done; 0 does not wait (kube-apiserver's
    /// --shutdown-watch-termination-grace-period).
    #[arg(long, default_value = "0s", value_parser = humantime::parse_duration)]
    pub shutdown_watch_termination_grace_period: std::time::Duration,
    /// Longest wait for a complete request head; an HTTP/1 connection idle for this long is
    /// closed (kube-apiserver's ReadHeaderTimeout, 32 s).
    #[arg(long, default_value = "32s", value_parser = humantime::parse_duration)]
    pub read_header_timeout: std::time::Duration,
    #[command(flatten)]
    pub limits: PluginLimits,
}
