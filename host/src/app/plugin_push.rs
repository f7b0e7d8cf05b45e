//! `wasm-apiserver plugin push` and `plugin manifest`: deliver a component through the API.
//!
//! `push` uploads the component to `strategyplugincomponents/<sha256>` (skipped when the
//! server has it) and creates or updates the `StrategyPlugin` object naming it, as
//! `kubectl apply` would; every replica then serves it. `manifest` prints that object as YAML
//! for a GitOps repository (the component is uploaded with `push --upload-only`). The client
//! is kube-rs: the kubeconfig (`--kubeconfig`, `$KUBECONFIG`, `~/.kube/config`, in that
//! order; `--context`), or a bare `--server` URL for a development server's plain port.

use crate::reload::{COMPONENTS_PLURAL, STATUS_GROUP, STATUS_PLURAL};
use anyhow::Context;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Where `push` sends its requests.
#[derive(Clone, Debug, Default)]
pub struct Target {
    /// A kubeconfig file.
    pub kubeconfig: Option<PathBuf>,
    /// Its context (default: the current one).
    pub context: Option<String>,
    /// A server URL used without credentials (instead of a kubeconfig).
    pub server: Option<String>,
}

/// The object's name: `--name`, else the file stem.
fn object_name(file: &Path, name: Option<&str>) -> String {
    name.map(str::to_string).unwrap_or_else(|| {
        file.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    })
}

/// The `StrategyPlugin` object for a component with this sha256, attached to the CRD
/// `extends` when given.
pub fn manifest_object(name: &str, sha256: &str, active: bool, extends: Option<&str>) -> Value {
    let mut o = json!({
        "apiVersion": format!("{STATUS_GROUP}/v1"),
        "kind": "StrategyPlugin",
        "metadata": {"name": name},
        "spec": {"sha256": sha256, "active": active},
    });
    if let Some(crd) = extends {
        o["spec"]["extends"] = json!(crd);
    }
    o
}

fn read(file: &Path) -> anyhow::Result<(Vec<u8>, String)> {
    let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    let sha = hex::encode(Sha256::digest(&bytes));
    Ok((bytes, sha))
}

/// `plugin manifest FILE`: print the object for FILE as YAML. Returns the exit code.
/// Errors: the file cannot be read.
pub fn manifest(
    file: &Path,
    name: Option<&str>,
    inactive: bool,
    extends: Option<&str>,
) -> anyhow::Result<i32> {
    let (_, sha) = read(file)?;
    let name = object_name(file, name);
    println!(
        "# Upload the component first: wasm-apiserver plugin push {} --upload-only",
        file.display()
    );
    print!(
        "{}",
        serde_yaml_ng::to_string(&manifest_object(&name, &sha, !inactive, extends))?
    );
    Ok(0)
}

async fn client(target: &Target) -> anyhow::Result<kube::Client> {
    let config = match (&target.server, &target.kubeconfig) {
        (Some(url), _) => kube::Config::new(url.parse().context("--server")?),
        (None, Some(path)) => {
            let kc = kube::config::Kubeconfig::read_from(path)
                .with_context(|| format!("reading {}", path.display()))?;
            let opts = kube::config::KubeConfigOptions {
                context: target.context.clone(),
                ..Default::default()
            };
            kube::Config::from_custom_kubeconfig(kc, &opts).await?
        }
        (None, None) => {
            let opts = kube::config::KubeConfigOptions {
                context: target.context.clone(),
                ..Default::default()
            };
            kube::Config::from_kubeconfig(&opts).await?
        }
    };
    Ok(kube::Client::try_from(config)?)
}

fn status_code(e: &kube::Error) -> Option<u16> {
    match e {
        kube::Error::Api(s) => Some(s.code),
        _ => None,
    }
}

/// `plugin push FILE`: upload, then create or update the object (unless `upload_only`).
/// Prints what was done; returns the exit code. Errors: the file, the connection, or the
/// server's refusal (its Status message).
pub async fn push(
    file: &Path,
    name: Option<&str>,
    inactive: bool,
    upload_only: bool,
    extends: Option<&str>,
    target: &Target,
) -> anyhow::Result<i32> {
    let (bytes, sha) = read(file)?;
    let client = client(target).await?;
    let path = format!("/apis/{STATUS_GROUP}/v1/{COMPONENTS_PLURAL}/{sha}");
    let get = http::Request::get(&path).body(Vec::new())?;
    let present = match client.request_text(get).await {
        Ok(_) => true,
        Err(e) if status_code(&e) == Some(404) => false,
        Err(e) => return Err(e).context("asking for the component"),
    };
    if present {
        println!("component sha256:{sha} already uploaded");
    } else {
        let size = bytes.len();
        let put = http::Request::put(&path)
            .header("Content-Type", crate::server::components::CONTENT_TYPE)
            .body(bytes)?;
        let stored: Value = client
            .request(put)
            .await
            .context("uploading the component")?;
        println!(
            "component sha256:{sha} uploaded ({size} bytes, {} stored)",
            stored["storedSize"]
        );
    }
    if upload_only {
        return Ok(0);
    }
    let name = object_name(file, name);
    let resource = kube::discovery::ApiResource {
        group: STATUS_GROUP.into(),
        version: "v1".into(),
        api_version: format!("{STATUS_GROUP}/v1"),
        kind: "StrategyPlugin".into(),
        plural: STATUS_PLURAL.into(),
    };
    let api: kube::Api<kube::core::DynamicObject> = kube::Api::all_with(client, &resource);
    let wanted = manifest_object(&name, &sha, !inactive, extends);
    let pp = kube::api::PostParams::default();
    // Create, or replace the spec; a conflicting writer makes us read again.
    for _ in 0..5 {
        let result = match api.get_opt(&name).await? {
            None => {
                let obj: kube::core::DynamicObject = serde_json::from_value(wanted.clone())?;
                api.create(&pp, &obj).await.map(|o| (o, "created"))
            }
            Some(mut current) => {
                let mut wanted = wanted.clone();
                // `spec.extends` is immutable: a push without `--extends` keeps it.
                if extends.is_none() {
                    if let Some(crd) = current.data.pointer("/spec/extends") {
                        wanted["spec"]["extends"] = crd.clone();
                    }
                }
                if current.data["spec"] == wanted["spec"] {
                    println!("{STATUS_PLURAL}.{STATUS_GROUP}/{name} unchanged");
                    return Ok(0);
                }
                current.data["spec"] = wanted["spec"].clone();
                api.replace(&name, &pp, &current)
                    .await
                    .map(|o| (o, "configured"))
            }
        };
        match result {
            Ok((o, verb)) => {
                println!(
                    "{STATUS_PLURAL}.{STATUS_GROUP}/{name} {verb} (sha256:{sha}, generation {})",
                    o.metadata.generation.unwrap_or(0)
                );
                return Ok(0);
            }
            Err(e) if matches!(status_code(&e), Some(409)) => continue,
            Err(e) => return Err(e).context(format!("writing StrategyPlugin {name}")),
        }
    }
    anyhow::bail!("StrategyPlugin {name} kept changing; try again")
}
