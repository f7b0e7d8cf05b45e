//! The StorageFactory from the server's flags (kube-apiserver's
//! `pkg/kubeapiserver/options` etcd options and `default_storage_factory_builder.go`): the
//! embedded store under `--data-dir` or etcd at `--etcd-servers`, per-resource
//! `--etcd-servers-overrides`, the watch cache switch, encryption at rest
//! (`encryption_config.rs`).

use super::encryption_config;
use crate::cli::ServeArgs;
use std::time::Duration;
use wasm_apiserver_storage::embedded::EmbeddedOptions;
use wasm_apiserver_storage::etcd3::Etcd3Config;
use wasm_apiserver_storage::factory::{AnyBackend, BackendConfig, StorageFactory};
use wasm_apiserver_storage::value::ReloadableTransformers;

/// Open the default backend and every override; returns the default backend (for `/readyz`),
/// the factory (encrypting as `--encryption-provider-config` or the generated default says)
/// and what it encrypts with. Errors: a backend cannot be opened, an override does not parse,
/// the encryption configuration does not load.
pub async fn storage_factory(
    args: &ServeArgs,
) -> anyhow::Result<(AnyBackend, StorageFactory, encryption_config::Summary)> {
    let backend_config = if args.etcd_servers.is_empty() {
        BackendConfig::Embedded(
            args.data_dir.join("store"),
            EmbeddedOptions {
                compaction_interval: compaction_interval(args),
                max_request_bytes: args.embedded_max_request_bytes,
                ..EmbeddedOptions::default()
            },
        )
    } else {
        BackendConfig::Etcd(etcd_config(args, args.etcd_servers.clone()))
    };
    let backend = AnyBackend::open(&backend_config)
        .await
        .map_err(|e| anyhow::anyhow!("storage: {e}"))?;
    let mut factory = StorageFactory::new(&args.etcd_prefix, backend.clone());
    for o in &args.etcd_servers_overrides {
        let (gr, servers) = parse_override(o)?;
        let b = AnyBackend::open(&BackendConfig::Etcd(etcd_config(args, servers)))
            .await
            .map_err(|e| anyhow::anyhow!("storage override {o}: {e}"))?;
        factory.set_override(gr, b);
    }
    factory.set_watch_cache(args.watch_cache);
    let (transformers, encryption) = encryption_config::load_or_generate(
        args.encryption_provider_config.as_deref(),
        &args.data_dir,
    )?;
    if encryption.generated {
        // A key generated now cannot have sealed anything stored: Secrets sealed already are
        // another server's (a replica's data dir, or a key file lost). Serving them would
        // answer 500s and split the Secrets between keys; refuse, and forget the new key.
        if let Some(sealed) = sealed_secret(&backend, &args.etcd_prefix).await {
            let _ = std::fs::remove_file(&encryption.path);
            anyhow::bail!(
                "the store already holds Secrets encrypted with a key this server does not have ({sealed}…); start it with the --encryption-provider-config of the servers that wrote them (its own generated {} was removed)",
                encryption.path.display()
            );
        }
    }
    record_transformations();
    encryption_config::start_kms(&transformers);
    factory.set_transformers(if args.encryption_provider_config_automatic_reload {
        ReloadableTransformers::reloadable(transformers)
    } else {
        ReloadableTransformers::fixed(transformers)
    });
    Ok((backend, factory, encryption))
}

/// The encryption prefix and key name (`k8s:enc:secretbox:v1:key-…:`) of the first stored
/// Secret, when it is encrypted.
async fn sealed_secret(backend: &AnyBackend, prefix: &str) -> Option<String> {
    let start = format!("{}/secrets/", prefix.trim_end_matches('/'));
    let end = wasm_apiserver_storage::backend::prefix_end(&start);
    let resp = backend.backend().range(&start, &end, 1, 0).await.ok()?;
    let value = &resp.kvs.first()?.value;
    value
        .starts_with(b"k8s:enc:")
        .then(|| super::encryption_reload::encryption_prefix(value))
}

/// `--etcd-compaction-interval-seconds`; `None` when 0 (compaction off).
fn compaction_interval(args: &ServeArgs) -> Option<Duration> {
    (args.etcd_compaction_interval_seconds > 0)
        .then(|| Duration::from_secs(args.etcd_compaction_interval_seconds))
}

/// The etcd client configuration of `servers`: the TLS files and compaction interval of the
/// flags (the same for the default servers and every override, as kube-apiserver's).
fn etcd_config(args: &ServeArgs, servers: Vec<String>) -> Etcd3Config {
    Etcd3Config {
        ca_file: args.etcd_cafile.clone(),
        cert_file: args.etcd_certfile.clone(),
        key_file: args.etcd_keyfile.clone(),
        compaction_interval: compaction_interval(args),
        ..Etcd3Config::new(servers)
    }
}

/// Parse one `--etcd-servers-overrides` entry: `group/resource#server;server`
/// (kube-apiserver's `pkg/kubeapiserver/options` format; the core group is empty).
/// Errors: no `#`, no `/`, or no server.
pub fn parse_override(s: &str) -> anyhow::Result<((String, String), Vec<String>)> {
    let (gr, servers) = s.split_once('#').ok_or_else(|| {
        anyhow::anyhow!("--etcd-servers-overrides {s:?}: expected group/resource#servers")
    })?;
    let (group, resource) = gr.split_once('/').ok_or_else(|| {
        anyhow::anyhow!("--etcd-servers-overrides {s:?}: expected group/resource before '#'")
    })?;
    let servers: Vec<String> = servers
        .split(';')
        .filter(|x| !x.is_empty())
        .map(String::from)
        .collect();
    if servers.is_empty() || resource.is_empty() {
        anyhow::bail!("--etcd-servers-overrides {s:?}: needs a resource and at least one server");
    }
    Ok(((group.to_string(), resource.to_string()), servers))
}

/// `apiserver_storage_transformation_operations_total{transformation_type,
/// transformer_prefix, status}` and `apiserver_storage_transformation_duration_seconds`
/// (kube's `k8s.io/apiserver/pkg/storage/value/metrics.go`: buckets 5 µs × 2^0..24; `status`
/// `OK` or `unknown-non-grpc`), fed by the storage crate's transformers. The
/// label values are the configured prefixes and key names (bounded by the configuration),
/// `identity` and `unknown`.
fn record_transformations() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(|| {
        let total = crate::metrics::counter_vec(
            "apiserver_storage_transformation_operations_total",
            "Total number of transformations. Successful transformation will have a status 'OK' and a varied status string when the transformation fails.",
            &["transformation_type", "transformer_prefix", "status"],
        );
        let buckets: Vec<f64> = (0..25).map(|i| 5e-6 * 2f64.powi(i)).collect();
        let duration = crate::metrics::histogram_vec(
            "apiserver_storage_transformation_duration_seconds",
            "Latencies in seconds of value transformation operations.",
            &buckets,
            &["transformation_type", "transformer_prefix"],
        );
        wasm_apiserver_storage::value::metrics::set_recorder(Box::new(
            move |kind, prefix, elapsed, ok| {
                // kube's `getErrorCode` of an error that is not a gRPC status; the latency of
                // successful transformations only.
                let status = if ok { "OK" } else { "unknown-non-grpc" };
                total.with_label_values(&[kind, prefix, status]).inc();
                if ok {
                    duration
                        .with_label_values(&[kind, prefix])
                        .observe(elapsed.as_secs_f64());
                }
            },
        ));
    });
}

#[cfg(test)]
mod tests {
    use super::parse_override;

    #[test]
    fn etcd_servers_overrides_parse_like_kube_apiserver() {
        let ((g, r), s) = parse_override("/events#http://127.0.0.1:4002").unwrap();
        assert_eq!((g.as_str(), r.as_str()), ("", "events"));
        assert_eq!(s, ["http://127.0.0.1:4002"]);
        let (_, s) = parse_override("example.dev/widgets#http://a:2379;http://b:2379").unwrap();
        assert_eq!(s.len(), 2);
        assert!(parse_override("widgets").is_err());
        assert!(parse_override("widgets#http://a").is_err());
        assert!(parse_override("/events#").is_err());
    }
}
