//! The secure serving, authentication and authorization options into what serves them
//! (`cmd/kube-apiserver/app/options`: `SecureServingOptions`,
//! `BuiltInAuthenticationOptions`, `BuiltInAuthorizationOptions`): the TLS acceptor, the
//! authenticator, the authorizer chain, and the generated admin kubeconfig.

use super::certs::{self, CertificateOptions};
use crate::authentication::{Authenticator, ServiceAccountTokens, TokenFile, X509Authenticator};
use crate::authorization::rbac::{bootstrap_policy, RbacAuthorizer};
use crate::authorization::Authorizer;
use crate::cli::ServeArgs;
use std::path::PathBuf;
use std::sync::Arc;

/// What the options produce.
pub struct Security {
    /// Accepts TLS connections on the secure port.
    pub tls: tokio_rustls::TlsAcceptor,
    /// The request authenticator.
    pub authenticator: Authenticator,
    /// The authorizer chain.
    pub authorizer: Authorizer,
    /// Where the admin kubeconfig was written, when the client CA was generated.
    pub admin_kubeconfig: Option<PathBuf>,
    /// Auditing, when a policy and a log are given.
    pub audit: Option<crate::server::filters::audit::Auditing>,
    /// Service-account tokens: issued by TokenRequest, accepted by the authenticator.
    pub service_accounts: Arc<ServiceAccountTokens>,
}

/// Build them for a secure port listening on `secure_port`. Errors: a certificate, key, CA
/// or token file that cannot be read or used (the token file's with its line), an invalid
/// audit policy (naming the rule), an audit log that cannot be opened, or the cert dir cannot
/// be written — the server refuses to start.
pub fn security(args: &ServeArgs, secure_port: u16) -> anyhow::Result<Security> {
    let certificates = certs::certificates(&CertificateOptions {
        cert_dir: args
            .cert_dir
            .clone()
            .unwrap_or_else(|| args.data_dir.join("pki")),
        tls_files: args
            .tls_cert_file
            .clone()
            .zip(args.tls_private_key_file.clone()),
        client_ca_file: args.client_ca_file.clone(),
        bind_address: args.bind_address,
        extra_sans: args.tls_sans.clone(),
    })?;
    let config = crate::server::tls::server_config(
        &certificates.serving.cert_pem,
        &certificates.serving.key_pem,
    )?;
    let x509 = X509Authenticator::from_ca_pem(certificates.client_ca_pem.as_bytes())
        .map_err(|e| anyhow::anyhow!("client CA: {e}"))?;
    let tokens = match &args.token_auth_file {
        Some(path) => Some(TokenFile::load(path)?),
        None => None,
    };
    let service_accounts = Arc::new(service_account_tokens(args)?);
    let jwt = match &args.authentication_config {
        Some(path) => {
            let issuers = if args.service_account_issuer.is_empty() {
                vec![crate::authentication::service_account::DEFAULT_ISSUER.to_string()]
            } else {
                args.service_account_issuer.clone()
            };
            Some(crate::app::authentication_config::start(path, &issuers)?)
        }
        None => None,
    };
    let authenticator = Authenticator {
        x509: Some(x509),
        tokens,
        anonymous: args.anonymous_auth,
        service_accounts: Some(service_accounts.clone()),
        jwt,
    };
    let rbac = Arc::new(RbacAuthorizer::new(bootstrap_policy::policy()));
    let authorizer = Authorizer::new(args.authorization_mode.clone(), rbac);
    let admin_kubeconfig = match &certificates.admin {
        Some(admin) => {
            std::fs::create_dir_all(&args.data_dir)?;
            let path = args.data_dir.join("admin.kubeconfig");
            certs::write_kubeconfig(
                &path,
                &certs::local_url(args.bind_address, secure_port),
                &certificates.serving_ca_pem,
                admin,
            )?;
            Some(path)
        }
        None => None,
    };
    let audit = match (&args.audit_policy_file, &args.audit_log_path) {
        (Some(policy), Some(path)) => Some(crate::server::filters::audit::Auditing {
            policy: Arc::new(crate::audit::Policy::load(policy)?),
            backend: crate::audit::LogBackend::start(&crate::audit::LogOptions {
                path: path.clone(),
                max_size_mib: args.audit_log_maxsize,
                max_backup: args.audit_log_maxbackup,
            })?,
        }),
        (Some(policy), None) => {
            // Validated all the same, so a broken policy is found at once.
            crate::audit::Policy::load(policy)?;
            tracing::warn!("--audit-policy-file without --audit-log-path: nothing is audited");
            None
        }
        _ => None,
    };
    Ok(Security {
        audit,
        tls: tokio_rustls::TlsAcceptor::from(config),
        authenticator,
        authorizer,
        admin_kubeconfig,
        service_accounts,
    })
}

/// The service-account token signer and verifier from the flags; without
/// `--service-account-signing-key-file`, `<cert-dir>/sa.key` (a P-256 key written 0600 on the
/// first start, reused after).
fn service_account_tokens(args: &ServeArgs) -> anyhow::Result<ServiceAccountTokens> {
    let path = match &args.service_account_signing_key_file {
        Some(p) => p.clone(),
        None => {
            let dir = args
                .cert_dir
                .clone()
                .unwrap_or_else(|| args.data_dir.join("pki"));
            let p = dir.join("sa.key");
            if !p.exists() {
                std::fs::create_dir_all(&dir)?;
                certs::write_private(&p, &rcgen::KeyPair::generate()?.serialize_pem())?;
            }
            p
        }
    };
    ServiceAccountTokens::load(
        &path,
        &args.service_account_key_file,
        &args.service_account_issuer,
        &args.api_audiences,
        args.service_account_max_token_expiration
            .map_or(0, |d| d.as_secs() as i64),
    )
}
