//! `wasm-apiserver encryption rotate`: rotate the encryption key of every resource entry
//! that encrypts, in one call, without a restart and without a window in which a replica
//! cannot read what another writes — the steps kube documents for a key rotation
//! ("Rotating a decryption key", `encrypt-data.md`), each waited on:
//! 1. a new random 32-byte key is added **second** to each entry's first provider (read,
//!    not written) and the file written; the command waits until every replica has loaded
//!    it;
//! 2. the new key moves **first** (written), the old one second; waited on the same way;
//! 3. a `StorageVersionMigration` per affected resource rewrites every object with the new
//!    key (the storage version migrator); progress is printed from its `Running` condition;
//! 4. every other key of that provider is dropped; waited on (the file before this step is
//!    kept as `<file>.before-rotation` until it is done). A replica refuses a configuration that would strand
//!    a stored object (`encryption_reload.rs`), and the command then fails with its reason
//!    and puts the previous file back.
//!
//! "Every replica": the identity Leases (`controllers/apiserver_identity.rs`) renewed within
//! `--replica-grace`; each must reload its configuration
//! (`--encryption-provider-config-automatic-reload`) and read the same file (a shared path,
//! or copies kept in step by other means: the command waits on what each replica reports
//! having loaded, not on how the file reached it). Before it starts, every replica must have
//! loaded the file as it is.
//!
//! The file is rewritten as YAML (its leading `#` comment lines kept; other comments are
//! lost), durably and 0600.

use super::encryption_config::parse;
use super::encryption_reload::config_hash;
use super::plugin_push::{client, Target};
use crate::controllers::apiserver_identity::{
    expired_after, AUTOMATIC_RELOAD, CONFIG_HASH, IDENTITY_LABEL, IDENTITY_VALUE, NAMESPACE,
    RELOAD_ERROR,
};
use anyhow::{bail, Context};
use base64::Engine;
use serde_json::{json, Value};
use serde_yaml_ng::Value as Yaml;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

/// The options of `encryption rotate`.
#[derive(Clone, Debug)]
pub struct Options {
    /// The `EncryptionConfiguration` file the replicas read.
    pub config: std::path::PathBuf,
    /// The server to talk to.
    pub target: Target,
    /// How long each step may take.
    pub timeout: Duration,
    /// A replica whose identity lease was not renewed for this long is taken as gone.
    pub replica_grace: Duration,
}

/// The providers a rotation gives a new key.
const ROTATED: [&str; 3] = ["aesgcm", "aescbc", "secretbox"];

/// Rotate; prints each step. Returns the exit code. Errors: the file, the server, a replica
/// that does not follow (named, with its reason), a failed migration.
pub async fn rotate(opts: &Options) -> anyhow::Result<i32> {
    let path = &opts.config;
    let original =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    parse(&original).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
    let header: String = original
        .lines()
        .take_while(|l| l.starts_with('#'))
        .map(|l| format!("{l}\n"))
        .collect();
    let doc: Yaml = serde_yaml_ng::from_str(&original)?;
    let plan = Plan::new(&doc)?;
    let client = client(&opts.target).await?;

    let replicas = replicas(&client, opts.replica_grace).await?;
    if replicas.is_empty() {
        bail!("no replica reports an identity lease (kube-system, label {IDENTITY_LABEL}={IDENTITY_VALUE}); is the leases plugin served?");
    }
    let current = hash(&original);
    for r in &replicas {
        if r.automatic_reload != "true" {
            bail!("replica {} does not reload its encryption configuration: start it with --encryption-provider-config-automatic-reload", r.name);
        }
        if r.config_hash != current {
            bail!(
                "replica {} has loaded another encryption configuration ({}) than {} ({current}); give every replica this file first",
                r.name,
                r.config_hash,
                path.display()
            );
        }
    }
    println!(
        "{} replica(s): {}",
        replicas.len(),
        replicas
            .iter()
            .map(|r| r.name.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (n, old) in plan.old_keys.iter().enumerate() {
        println!(
            "resources {}: new {} key {} (sha256 {}…) replaces {old}",
            plan.entry_resources[n].join(","),
            plan.providers[n],
            plan.new_key.0,
            &plan.new_key.2[..16]
        );
    }

    let steps = [
        (
            "1/4 new key added as a read key",
            plan.render(&doc, Step::Added)?,
        ),
        (
            "2/4 new key made the write key",
            plan.render(&doc, Step::Writing)?,
        ),
    ];
    let names: BTreeSet<String> = replicas.iter().map(|r| r.name.clone()).collect();
    let mut previous = original.clone();
    for (what, yaml) in steps {
        let text = format!("{header}{yaml}");
        apply(&client, opts, path, &text, &previous, &names).await?;
        println!("{what}: every replica has loaded it");
        previous = text;
    }

    let resources = affected_resources(&client, &plan.resource_patterns).await?;
    let stamp = chrono::Utc::now().format("%Y%m%d%H%M%S");
    for (group, version, resource) in &resources {
        let name = format!(
            "rotate-{}-{stamp}",
            if group.is_empty() {
                resource.clone()
            } else {
                format!("{resource}.{group}")
            }
        );
        migrate(&client, &name, group, version, resource, opts.timeout).await?;
    }
    println!("3/4 every object rewritten with the new key");

    // The last file with the old keys, kept (0600) until every replica has let them go: if
    // this command dies in step 4, nothing it held is lost.
    let backup = path.with_extension("before-rotation");
    super::certs::write_private(&backup, &previous)?;
    let text = format!("{header}{}", plan.render(&doc, Step::Dropped)?);
    apply(&client, opts, path, &text, &previous, &names).await?;
    std::fs::remove_file(&backup)?;
    println!("4/4 old keys dropped: every replica has loaded it");
    Ok(0)
}

/// `sha256:<hex>` of a file's text.
fn hash(text: &str) -> String {
    config_hash(&Sha256::digest(text.as_bytes()))
}

/// Write `text` to `path`, then wait until each of `replicas` (the names the rotation
/// started with) has loaded it. On any error — a refusal, a timeout, a replica gone, the
/// server unreachable — `previous` is written back before the error is returned.
async fn apply(
    client: &kube::Client,
    opts: &Options,
    path: &Path,
    text: &str,
    previous: &str,
    replicas: &BTreeSet<String>,
) -> anyhow::Result<()> {
    parse(text).map_err(|e| anyhow::anyhow!("the rotated configuration does not validate: {e}"))?;
    let before = current(client, opts.replica_grace).await?;
    super::certs::write_private(path, text)?;
    match wait_loaded(client, opts, text, replicas, &before).await {
        Ok(()) => Ok(()),
        Err(e) => {
            super::certs::write_private(path, previous)?;
            Err(e.context(format!("{} was put back as it was", path.display())))
        }
    }
}

/// The live replicas by name.
async fn current(
    client: &kube::Client,
    grace: Duration,
) -> anyhow::Result<BTreeMap<String, Replica>> {
    Ok(replicas(client, grace)
        .await?
        .into_iter()
        .map(|r| (r.name.clone(), r))
        .collect())
}

async fn wait_loaded(
    client: &kube::Client,
    opts: &Options,
    text: &str,
    replicas: &BTreeSet<String>,
    before: &BTreeMap<String, Replica>,
) -> anyhow::Result<()> {
    let want = hash(text);
    let deadline = Instant::now() + opts.timeout;
    loop {
        let now = current(client, opts.replica_grace).await?;
        let mut waiting = Vec::new();
        for name in replicas {
            let Some(r) = now.get(name) else {
                bail!("replica {name} stopped renewing its identity lease during the rotation");
            };
            if r.config_hash == want {
                continue;
            }
            let earlier = before.get(name).and_then(|b| b.reload_error.as_ref());
            if let Some(e) = r.reload_error.as_ref().filter(|e| Some(*e) != earlier) {
                bail!("replica {name} refused the new configuration: {e}");
            }
            waiting.push(name.clone());
        }
        if waiting.is_empty() {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!(
                "replicas {} did not load the new configuration within {:?} (do they read this file?)",
                waiting.join(", "),
                opts.timeout
            );
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// One replica as its identity lease shows it.
struct Replica {
    name: String,
    config_hash: String,
    automatic_reload: String,
    reload_error: Option<String>,
}

/// The replicas whose identity lease was renewed within `grace`.
async fn replicas(client: &kube::Client, grace: Duration) -> anyhow::Result<Vec<Replica>> {
    let list = get(
        client,
        &format!("/apis/coordination.k8s.io/v1/namespaces/{NAMESPACE}/leases?labelSelector={IDENTITY_LABEL}%3D{IDENTITY_VALUE}"),
    )
    .await?;
    let now = chrono::Utc::now();
    Ok(list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|l| !expired_after(l, grace, now))
        .map(|l| {
            let a = &l["metadata"]["annotations"];
            Replica {
                name: l["metadata"]["name"].as_str().unwrap_or("").to_string(),
                config_hash: a[CONFIG_HASH].as_str().unwrap_or("").to_string(),
                automatic_reload: a[AUTOMATIC_RELOAD].as_str().unwrap_or("").to_string(),
                reload_error: a[RELOAD_ERROR].as_str().map(String::from),
            }
        })
        .collect())
}

/// Create a `StorageVersionMigration` for the resource and wait for its end, printing its
/// progress.
async fn migrate(
    client: &kube::Client,
    name: &str,
    group: &str,
    version: &str,
    resource: &str,
    timeout: Duration,
) -> anyhow::Result<()> {
    const PATH: &str = "/apis/storagemigration.k8s.io/v1alpha1/storageversionmigrations";
    let svm = json!({
        "apiVersion": "storagemigration.k8s.io/v1alpha1", "kind": "StorageVersionMigration",
        "metadata": {"name": name},
        "spec": {"resource": {"group": group, "version": version, "resource": resource}},
    });
    send(client, http::Method::POST, PATH, Some(&svm)).await?;
    let deadline = Instant::now() + timeout;
    let mut last = String::new();
    loop {
        let o = get(client, &format!("{PATH}/{name}")).await?;
        let conditions = o["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let find = |ty: &str| {
            conditions
                .iter()
                .find(|c| c["type"] == ty && c["status"] == "True")
                .cloned()
        };
        if find("Succeeded").is_some() {
            println!("  {name}: Succeeded");
            return Ok(());
        }
        if let Some(c) = find("Failed") {
            bail!(
                "{name} failed: {}; the old key stays readable (the file keeps both keys)",
                c["message"].as_str().unwrap_or("")
            );
        }
        if let Some(c) = find("Running") {
            let m = c["message"].as_str().unwrap_or("").to_string();
            if m != last {
                println!("  {name}: {m}");
                last = m;
            }
        }
        if Instant::now() > deadline {
            bail!("{name} did not finish within {timeout:?}; the file keeps both keys");
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
}

/// The served resources an entry's `resources` patterns name (`secrets`, `x.group`, `*.`,
/// `*.group`, `*.*`), each once, in its group's preferred version when that serves it;
/// subresources left out. Resources not served now are not migrated (nor checked by the
/// replicas' reload guard): serve them during a rotation.
async fn affected_resources(
    client: &kube::Client,
    patterns: &[String],
) -> anyhow::Result<Vec<(String, String, String)>> {
    // Every served version of every group, the preferred one first: a resource is migrated
    // once, in the first version that serves it (they share one storage).
    let mut versions = vec![(String::new(), "v1".to_string())];
    let groups = get(client, "/apis").await?;
    for g in groups["groups"].as_array().into_iter().flatten() {
        let Some(name) = g["name"].as_str() else {
            continue;
        };
        let preferred = g["preferredVersion"]["version"].as_str().unwrap_or("");
        let mut vs: Vec<&str> = g["versions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v["version"].as_str())
            .collect();
        vs.sort_by_key(|v| *v != preferred);
        versions.extend(vs.into_iter().map(|v| (name.to_string(), v.to_string())));
    }
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (group, version) in versions {
        let path = if group.is_empty() {
            "/api/v1".to_string()
        } else {
            format!("/apis/{group}/{version}")
        };
        let list = get(client, &path).await?;
        for r in list["resources"].as_array().into_iter().flatten() {
            let plural = r["name"].as_str().unwrap_or("");
            let verbs: Vec<&str> = r["verbs"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            if plural.contains('/') || !verbs.contains(&"list") {
                continue;
            }
            if patterns.iter().any(|p| matches(p, &group, plural))
                && seen.insert((group.clone(), plural.to_string()))
            {
                out.push((group.clone(), version.clone(), plural.to_string()));
            }
        }
    }
    Ok(out)
}

/// Whether an `EncryptionConfiguration` resource pattern names `group`/`plural`.
fn matches(pattern: &str, group: &str, plural: &str) -> bool {
    match pattern.split_once('.') {
        Some(("*", "*")) => true,
        Some(("*", g)) => g == group,
        Some((r, g)) => r == plural && g == group,
        None => group.is_empty() && pattern == plural,
    }
}

async fn get(client: &kube::Client, path: &str) -> anyhow::Result<Value> {
    send(client, http::Method::GET, path, None).await
}

async fn send(
    client: &kube::Client,
    method: http::Method,
    path: &str,
    body: Option<&Value>,
) -> anyhow::Result<Value> {
    let req = http::Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", "application/json")
        .body(body.map(|b| b.to_string().into_bytes()).unwrap_or_default())?;
    client
        .request::<Value>(req)
        .await
        .with_context(|| path.to_string())
}

/// Which file a step writes.
#[derive(Clone, Copy, PartialEq)]
enum Step {
    /// The new key second.
    Added,
    /// The new key first, the old one second.
    Writing,
    /// The new key alone where the old one was.
    Dropped,
}

/// What the rotation changes: the entries whose first provider encrypts, their old write
/// keys, and one new key (name, base64 secret, SHA-256 hex).
struct Plan {
    /// Index of each rotated entry in `resources`.
    entries: Vec<usize>,
    /// The first provider's type of each entry.
    providers: Vec<&'static str>,
    /// The old keys' names of each entry, the write key first.
    old_keys: Vec<String>,
    /// The resource patterns of each rotated entry.
    entry_resources: Vec<Vec<String>>,
    /// The resource patterns of the rotated entries.
    resource_patterns: Vec<String>,
    new_key: (String, String, String),
}

impl Plan {
    fn new(doc: &Yaml) -> anyhow::Result<Plan> {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|e| anyhow::anyhow!("random key: {e}"))?;
        let fp = hex::encode(Sha256::digest(key));
        let new_key = (
            format!("key-{}", &fp[..16]),
            base64::engine::general_purpose::STANDARD.encode(key),
            fp,
        );
        let mut plan = Plan {
            entries: Vec::new(),
            providers: Vec::new(),
            old_keys: Vec::new(),
            entry_resources: Vec::new(),
            resource_patterns: Vec::new(),
            new_key,
        };
        let resources = doc["resources"].as_sequence().cloned().unwrap_or_default();
        for (i, entry) in resources.iter().enumerate() {
            let first = &entry["providers"][0];
            let Some(provider) = ROTATED.into_iter().find(|p| first.get(*p).is_some()) else {
                continue;
            };
            let old = first[provider]["keys"]
                .as_sequence()
                .into_iter()
                .flatten()
                .filter_map(|k| k["name"].as_str())
                .collect::<Vec<_>>()
                .join(", ");
            plan.entries.push(i);
            plan.providers.push(provider);
            plan.old_keys.push(old);
            let patterns: Vec<String> = entry["resources"]
                .as_sequence()
                .into_iter()
                .flatten()
                .map(|r| r.as_str().unwrap_or("").to_string())
                .collect();
            plan.resource_patterns.extend(patterns.iter().cloned());
            plan.entry_resources.push(patterns);
        }
        if plan.entries.is_empty() {
            bail!("nothing to rotate: no resource entry writes with aesgcm, aescbc or secretbox");
        }
        Ok(plan)
    }

    /// The document after `step`, as YAML.
    fn render(&self, doc: &Yaml, step: Step) -> anyhow::Result<String> {
        let mut doc = doc.clone();
        let new =
            serde_yaml_ng::to_value(json!({"name": self.new_key.0, "secret": self.new_key.1}))?;
        for (n, &i) in self.entries.iter().enumerate() {
            let keys = doc["resources"][i]["providers"][0][self.providers[n]]["keys"]
                .as_sequence_mut()
                .context("keys")?;
            match step {
                Step::Added => keys.insert(1.min(keys.len()), new.clone()),
                Step::Writing => keys.insert(0, new.clone()),
                Step::Dropped => *keys = vec![new.clone()],
            }
        }
        Ok(serde_yaml_ng::to_string(&doc)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONFIG: &str = "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - secretbox:\n      keys:\n      - {name: old, secret: AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=}\n  - identity: {}\n- resources: [configmaps]\n  providers:\n  - identity: {}\n";

    #[test]
    fn each_step_moves_the_new_key() {
        let doc: Yaml = serde_yaml_ng::from_str(CONFIG).unwrap();
        let plan = Plan::new(&doc).unwrap();
        assert_eq!(plan.entries, [0]);
        assert_eq!(plan.resource_patterns, ["secrets"]);
        let names = |step| {
            let y: Yaml = serde_yaml_ng::from_str(&plan.render(&doc, step).unwrap()).unwrap();
            parse(&serde_yaml_ng::to_string(&y).unwrap()).unwrap();
            y["resources"][0]["providers"][0]["secretbox"]["keys"]
                .as_sequence()
                .unwrap()
                .iter()
                .map(|k| k["name"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        };
        let new = plan.new_key.0.clone();
        assert_eq!(names(Step::Added), ["old".to_string(), new.clone()]);
        assert_eq!(names(Step::Writing), [new.clone(), "old".to_string()]);
        assert_eq!(names(Step::Dropped), [new]);
        let none: Yaml = serde_yaml_ng::from_str(&CONFIG.replace("secretbox", "x")).unwrap();
        assert!(Plan::new(&none).is_err());
    }

    #[test]
    fn resource_patterns() {
        assert!(matches("secrets", "", "secrets"));
        assert!(!matches("secrets", "apps", "secrets"));
        assert!(matches("deployments.apps", "apps", "deployments"));
        assert!(matches("*.", "", "configmaps"));
        assert!(matches("*.apps", "apps", "x"));
        assert!(matches("*.*", "example.dev", "widgets"));
    }
}
