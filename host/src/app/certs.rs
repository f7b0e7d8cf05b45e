//! Zero set-up secure serving: the serving certificate and the client CA a fresh start
//! generates, as kube-apiserver's `SecureServingOptions.MaybeDefaultWithSelfSignedCerts`
//! (`k8s.io/apiserver/pkg/server/options/serving.go`) and k3s's bootstrap do.
//!
//! Files under `--cert-dir` (default `<data-dir>/pki`), each written once and reused on
//! later starts:
//! - `ca.crt`/`ca.key` and `apiserver.crt`/`apiserver.key`: a CA and the serving certificate
//!   it signs (SANs: `localhost`, `127.0.0.1`, `::1`, the bind address, `--tls-sans`), unless
//!   `--tls-cert-file`/`--tls-private-key-file` are given;
//! - `client-ca.crt`/`client-ca.key` and `admin.crt`/`admin.key`: a client CA and an admin
//!   client certificate (`CN=kubernetes-admin`, `O=system:masters`), unless
//!   `--client-ca-file` is given; then `<data-dir>/admin.kubeconfig` is (re)written on every
//!   start with the server URL, the CA and the admin certificate embedded.
//!
//! Keys are ECDSA P-256; CAs are valid 10 years, leaf certificates 1 year.

use base64::Engine;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use std::net::IpAddr;
use std::path::{Path, PathBuf};

/// PEM text of a certificate chain and its private key.
#[derive(Clone, Debug)]
pub struct CertKey {
    /// Certificates, leaf first.
    pub cert_pem: String,
    /// The leaf's private key.
    pub key_pem: String,
}

/// What serving needs, found or generated.
#[derive(Clone, Debug)]
pub struct Certificates {
    /// The serving certificate.
    pub serving: CertKey,
    /// The CA a client should trust for the serving certificate (the generated CA, or the
    /// given certificate file itself).
    pub serving_ca_pem: String,
    /// PEM bundle of the client CA(s) client certificates are verified against.
    pub client_ca_pem: String,
    /// The generated admin client certificate, when the client CA was generated.
    pub admin: Option<CertKey>,
}

/// What to look for or generate.
#[derive(Clone, Debug)]
pub struct CertificateOptions {
    /// `--cert-dir`.
    pub cert_dir: PathBuf,
    /// `--tls-cert-file` and `--tls-private-key-file`.
    pub tls_files: Option<(PathBuf, PathBuf)>,
    /// `--client-ca-file`.
    pub client_ca_file: Option<PathBuf>,
    /// `--bind-address`.
    pub bind_address: IpAddr,
    /// `--tls-sans`.
    pub extra_sans: Vec<String>,
}

fn read(path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// Write a file only its owner may read (0600), durably: a temporary file beside it, synced,
/// renamed over `path`, the directory synced — so a crash leaves the old file or the new one,
/// never a missing or empty key (a lost encryption key loses every Secret).
pub(crate) fn write_private(path: &Path, data: &str) -> anyhow::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    let err = |e: std::io::Error| anyhow::anyhow!("{}: {e}", path.display());
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)
        .map_err(err)?;
    // `mode` applies only to a new file: a leftover one gets 0600 too.
    f.set_permissions(std::fs::Permissions::from_mode(0o600))
        .map_err(err)?;
    f.write_all(data.as_bytes()).map_err(err)?;
    f.sync_all().map_err(err)?;
    std::fs::rename(&tmp, path).map_err(err)?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(err)?;
    }
    Ok(())
}

fn validity(params: &mut CertificateParams, years: i32) {
    use chrono::Datelike;
    let today = chrono::Utc::now().date_naive();
    let start = today.pred_opt().unwrap_or(today);
    params.not_before = rcgen::date_time_ymd(start.year(), start.month() as u8, start.day() as u8);
    params.not_after = rcgen::date_time_ymd(
        start.year() + years,
        start.month() as u8,
        start.day().min(28) as u8,
    );
}

/// A new CA: (certificate PEM, key PEM).
fn new_ca(common_name: &str) -> anyhow::Result<(String, String)> {
    let key = KeyPair::generate()?;
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params
        .distinguished_name
        .push(DnType::CommonName, common_name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    validity(&mut params, 10);
    let cert = params.self_signed(&key)?;
    Ok((cert.pem(), key.serialize_pem()))
}

/// A leaf signed by the CA in `ca_cert_pem`/`ca_key_pem`.
fn new_leaf(
    ca_cert_pem: &str,
    ca_key_pem: &str,
    sans: Vec<String>,
    common_name: &str,
    organizations: &[&str],
    usage: ExtendedKeyUsagePurpose,
) -> anyhow::Result<CertKey> {
    let ca_key = KeyPair::from_pem(ca_key_pem)?;
    let issuer = Issuer::from_ca_cert_pem(ca_cert_pem, ca_key)?;
    let key = KeyPair::generate()?;
    let mut params = CertificateParams::new(sans)?;
    params
        .distinguished_name
        .push(DnType::CommonName, common_name);
    for o in organizations {
        params.distinguished_name.push(DnType::OrganizationName, *o);
    }
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![usage];
    validity(&mut params, 1);
    let cert = params.signed_by(&key, &issuer)?;
    Ok(CertKey {
        cert_pem: cert.pem(),
        key_pem: key.serialize_pem(),
    })
}

/// Read `<dir>/<name>.crt` and `.key` if both exist, else make them with `make` and write
/// them (key mode 0600).
fn reuse_or_make(
    dir: &Path,
    name: &str,
    make: impl FnOnce() -> anyhow::Result<CertKey>,
) -> anyhow::Result<CertKey> {
    let (crt, key) = (
        dir.join(format!("{name}.crt")),
        dir.join(format!("{name}.key")),
    );
    if crt.exists() && key.exists() {
        return Ok(CertKey {
            cert_pem: read(&crt)?,
            key_pem: read(&key)?,
        });
    }
    let made = make()?;
    write_private(&key, &made.key_pem)?;
    std::fs::write(&crt, &made.cert_pem)?;
    Ok(made)
}

fn ca(dir: &Path, name: &str, common_name: &str) -> anyhow::Result<CertKey> {
    reuse_or_make(dir, name, || {
        let (cert_pem, key_pem) = new_ca(common_name)?;
        Ok(CertKey { cert_pem, key_pem })
    })
}

/// Find or generate the certificates `opts` describe. Errors: a given file cannot be read,
/// the cert dir cannot be written, or generation fails.
pub fn certificates(opts: &CertificateOptions) -> anyhow::Result<Certificates> {
    let dir = &opts.cert_dir;
    let generate = opts.tls_files.is_none() || opts.client_ca_file.is_none();
    if generate {
        std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
    }
    let (serving, serving_ca_pem) = match &opts.tls_files {
        Some((cert, key)) => {
            let cert_pem = read(cert)?;
            (
                CertKey {
                    cert_pem: cert_pem.clone(),
                    key_pem: read(key)?,
                },
                cert_pem,
            )
        }
        None => {
            let ca = ca(dir, "ca", "wasm-apiserver-ca")?;
            let mut sans: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
            if !opts.bind_address.is_unspecified() {
                sans.push(opts.bind_address.to_string());
            }
            sans.extend(opts.extra_sans.iter().cloned());
            sans.dedup();
            let serving = reuse_or_make(dir, "apiserver", || {
                new_leaf(
                    &ca.cert_pem,
                    &ca.key_pem,
                    sans,
                    "wasm-apiserver",
                    &[],
                    ExtendedKeyUsagePurpose::ServerAuth,
                )
            })?;
            (serving, ca.cert_pem)
        }
    };
    let (client_ca_pem, admin) = match &opts.client_ca_file {
        Some(file) => (read(file)?, None),
        None => {
            let ca = ca(dir, "client-ca", "wasm-apiserver-client-ca")?;
            let admin = reuse_or_make(dir, "admin", || {
                new_leaf(
                    &ca.cert_pem,
                    &ca.key_pem,
                    vec![],
                    "kubernetes-admin",
                    &[crate::authentication::user::SYSTEM_PRIVILEGED_GROUP],
                    ExtendedKeyUsagePurpose::ClientAuth,
                )
            })?;
            (ca.cert_pem, Some(admin))
        }
    };
    Ok(Certificates {
        serving,
        serving_ca_pem,
        client_ca_pem,
        admin,
    })
}

/// Write a kubeconfig at `path` for `server` (`https://host:port`) trusting `ca_pem` and
/// authenticating with `client` (data embedded, key file mode 0600), context namespace
/// `default`.
pub fn write_kubeconfig(
    path: &Path,
    server: &str,
    ca_pem: &str,
    client: &CertKey,
) -> anyhow::Result<()> {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let config = serde_json::json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "wasm-apiserver", "cluster": {
            "server": server, "certificate-authority-data": b64(ca_pem)}}],
        "users": [{"name": "admin", "user": {
            "client-certificate-data": b64(&client.cert_pem),
            "client-key-data": b64(&client.key_pem)}}],
        "contexts": [{"name": "admin@wasm-apiserver", "context": {
            "cluster": "wasm-apiserver", "user": "admin", "namespace": "default"}}],
        "current-context": "admin@wasm-apiserver",
    });
    write_private(path, &serde_yaml_ng::to_string(&config)?)
}

/// The URL a local client reaches the secure port at: the bind address, or `127.0.0.1`
/// when bound to every address.
pub fn local_url(bind: IpAddr, port: u16) -> String {
    let host = if bind.is_unspecified() {
        "127.0.0.1".to_string()
    } else if bind.is_ipv6() {
        format!("[{bind}]")
    } else {
        bind.to_string()
    };
    format!("https://{host}:{port}")
}
