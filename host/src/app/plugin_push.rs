//! `wasm-apiserver plugin push` and `plugin manifest`: deliver a component through the API.
//!
//! `push` uploads the component to `strategyplugincomponents/<sha256>` (skipped when the
//! server has it) and creates or updates the `StrategyPlugin` object naming it, as
//! `kubectl apply` would; every replica then serves it. An admission policy component
//! (`wit/admission/`) gets an `AdmissionPlugin` object instead, whose `contextReads` grant
//! what the component declares it reads (read offline from its `describe`); an existing
//! object keeps its settings, mode, rules and selectors. `manifest` prints that object as YAML
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

/// The `AdmissionPlugin` object for an admission component: `spec.sha256`, and
/// `spec.contextReads` granting what the component declares it reads (loaded offline).
/// Errors: the component does not load.
fn admission_object(name: &str, sha256: &str, bytes: &[u8]) -> anyhow::Result<Value> {
    let runtime = crate::plugin::PluginRuntime::new(crate::plugin::RuntimeConfig::default())?;
    let policy = runtime
        .load_admission(name, bytes)
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let reads: Vec<Value> = policy
        .description()
        .context_reads
        .iter()
        .map(|g| json!({"group": g.group, "resource": g.resource}))
        .collect();
    Ok(json!({
        "apiVersion": format!("{STATUS_GROUP}/v1"),
        "kind": "AdmissionPlugin",
        "metadata": {"name": name},
        "spec": {"sha256": sha256, "contextReads": reads},
    }))
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
    let (bytes, sha) = read(file)?;
    let name = object_name(file, name);
    let object = if crate::plugin::admission_plugin::is_admission(&bytes) {
        refuse_strategy_flags(inactive, extends)?;
        admission_object(&name, &sha, &bytes)?
    } else {
        manifest_object(&name, &sha, !inactive, extends)
    };
    println!(
        "# Upload the component first: wasm-apiserver plugin push {} --upload-only",
        file.display()
    );
    print!("{}", serde_yaml_ng::to_string(&object)?);
    Ok(0)
}

/// A kube-rs client for `target`. Errors: the kubeconfig or the URL.
pub(super) async fn client(target: &Target) -> anyhow::Result<kube::Client> {
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

/// A failed request as kubectl words it: the server's Status as `Error from server
/// (Reason): message`, where kube-rs' own Display would append a debug dump of the
/// Status; any other error as it is.
fn from_server(e: kube::Error) -> anyhow::Error {
    match e {
        kube::Error::Api(s) => anyhow::anyhow!("Error from server ({}): {}", s.reason, s.message),
        e => e.into(),
    }
}

/// What a push does with the record of a file in a server's `--plugin-dir` (`spec.file`).
enum FolderRecord {
    /// Not a record: an object `push` may update.
    No,
    /// A record whose file every replica reports `Removed`: its name is free for an object
    /// (the servers hand a removed file's name over), once the record is deleted.
    Removed,
}

/// Classify `current`; a record some replica still serves is refused with what to do: the
/// server owning the file keeps the object (a replace could only fail on `spec.file`'s
/// immutability).
fn folder_record(kind: &str, name: &str, current: &Value) -> anyhow::Result<FolderRecord> {
    let Some(file) = current.pointer("/spec/file").and_then(Value::as_str) else {
        return Ok(FolderRecord::No);
    };
    let replicas: Vec<(&str, &str)> = current
        .pointer("/status/replicas")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|r| {
            (
                r["server"].as_str().unwrap_or("?"),
                r["state"].as_str().unwrap_or("?"),
            )
        })
        .collect();
    if !replicas.is_empty() && replicas.iter().all(|(_, st)| *st == "Removed") {
        return Ok(FolderRecord::Removed);
    }
    let serving: Vec<String> = replicas
        .iter()
        .filter(|(_, st)| *st != "Removed")
        .map(|(server, st)| format!("{server}={st}"))
        .collect();
    anyhow::bail!(
        "{kind} {name} is served from the file {file} in a server's --plugin-dir ({}), and a \
         push cannot replace it. To manage {name} through the API, remove {file} from the \
         plugin folder (the resource's data is kept), wait until the servers report it \
         Removed, and push again; or push under another name (--name)",
        if serving.is_empty() {
            "no replica has reported it yet".to_string()
        } else {
            serving.join(", ")
        }
    )
}

/// Delete the record of a removed folder file so that the next create takes its name;
/// preconditions on uid and resourceVersion, so a record some server wrote meanwhile stays.
async fn delete_removed_record(
    api: &kube::Api<kube::core::DynamicObject>,
    current: &kube::core::DynamicObject,
) -> anyhow::Result<()> {
    let dp = kube::api::DeleteParams {
        preconditions: Some(kube::api::Preconditions {
            uid: current.metadata.uid.clone(),
            resource_version: current.metadata.resource_version.clone(),
        }),
        ..Default::default()
    };
    match api
        .delete(&current.metadata.name.clone().unwrap_or_default(), &dp)
        .await
    {
        Ok(_) => Ok(()),
        Err(e) if matches!(status_code(&e), Some(404 | 409)) => Ok(()),
        Err(e) => Err(from_server(e)).context("deleting the removed file's record"),
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
    // An admission policy's object is built from its `describe`, loaded from these bytes.
    let admission = crate::plugin::admission_plugin::is_admission(&bytes).then(|| bytes.clone());
    if admission.is_some() {
        refuse_strategy_flags(inactive, extends)?;
    }
    let client = client(target).await?;
    let path = format!("/apis/{STATUS_GROUP}/v1/{COMPONENTS_PLURAL}/{sha}");
    let get = http::Request::get(&path).body(Vec::new())?;
    let present = match client.request_text(get).await {
        Ok(_) => true,
        Err(e) if status_code(&e) == Some(404) => false,
        Err(e) => return Err(from_server(e)).context("asking for the component"),
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
            .map_err(from_server)
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
    if let Some(bytes) = admission {
        let wanted = admission_object(&name, &sha, &bytes)?;
        return apply_admission_plugin(client, &name, &sha, wanted).await;
    }
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
        let result = match api.get_opt(&name).await.map_err(from_server)? {
            None => {
                let obj: kube::core::DynamicObject = serde_json::from_value(wanted.clone())?;
                api.create(&pp, &obj).await.map(|o| (o, "created"))
            }
            Some(current)
                if matches!(
                    folder_record("StrategyPlugin", &name, &current.data)?,
                    FolderRecord::Removed
                ) =>
            {
                delete_removed_record(&api, &current).await?;
                println!("{STATUS_PLURAL}.{STATUS_GROUP}/{name}: the record of a removed plugin-folder file, deleted");
                continue;
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
            Err(e) => return Err(from_server(e)).context(format!("writing StrategyPlugin {name}")),
        }
    }
    anyhow::bail!("StrategyPlugin {name} kept changing; try again")
}

/// `--inactive` and `--extends` are a strategy's: refused for an admission policy.
fn refuse_strategy_flags(inactive: bool, extends: Option<&str>) -> anyhow::Result<()> {
    if inactive || extends.is_some() {
        anyhow::bail!(
            "--inactive and --extends apply to strategy plugins; this component is an admission policy (an AdmissionPlugin object serves it)"
        );
    }
    Ok(())
}

/// Create the `AdmissionPlugin` `name`, or set the `sha256` and `contextReads` of the
/// existing one (its settings, mode, rules and selectors kept).
async fn apply_admission_plugin(
    client: kube::Client,
    name: &str,
    sha: &str,
    wanted: Value,
) -> anyhow::Result<i32> {
    let resource = kube::discovery::ApiResource {
        group: STATUS_GROUP.into(),
        version: "v1".into(),
        api_version: format!("{STATUS_GROUP}/v1"),
        kind: "AdmissionPlugin".into(),
        plural: "admissionplugins".into(),
    };
    let api: kube::Api<kube::core::DynamicObject> = kube::Api::all_with(client, &resource);
    let pp = kube::api::PostParams::default();
    let what = format!("admissionplugins.{STATUS_GROUP}/{name}");
    for _ in 0..5 {
        let result = match api.get_opt(name).await.map_err(from_server)? {
            None => {
                let obj: kube::core::DynamicObject = serde_json::from_value(wanted.clone())?;
                api.create(&pp, &obj).await.map(|o| (o, "created"))
            }
            Some(mut current) => {
                let before = current.data["spec"].clone();
                for key in ["sha256", "contextReads"] {
                    current.data["spec"][key] = wanted["spec"][key].clone();
                }
                if current.data["spec"] == before {
                    println!("{what} unchanged");
                    return Ok(0);
                }
                api.replace(name, &pp, &current)
                    .await
                    .map(|o| (o, "configured"))
            }
        };
        match result {
            Ok((o, verb)) => {
                let reads: Vec<String> = wanted["spec"]["contextReads"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|r| {
                        let (g, res) = (
                            r["group"].as_str().unwrap_or(""),
                            r["resource"].as_str().unwrap_or(""),
                        );
                        if g.is_empty() {
                            res.to_string()
                        } else {
                            format!("{res}.{g}")
                        }
                    })
                    .collect();
                println!(
                    "{what} {verb} (sha256:{sha}, generation {}; grants reading: {})",
                    o.metadata.generation.unwrap_or(0),
                    if reads.is_empty() {
                        "nothing".to_string()
                    } else {
                        reads.join(", ")
                    }
                );
                return Ok(0);
            }
            Err(e) if matches!(status_code(&e), Some(409)) => continue,
            Err(e) => {
                return Err(from_server(e)).context(format!("writing AdmissionPlugin {name}"))
            }
        }
    }
    anyhow::bail!("AdmissionPlugin {name} kept changing; try again")
}
