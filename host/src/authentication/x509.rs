//! Client-certificate authentication (`k8s.io/apiserver/pkg/authentication/request/x509`
//! `Authenticator` with `CommonNameUserConversion`): the chain the client presented during the
//! TLS handshake is verified against the `--client-ca-file` roots for client-auth usage; the
//! user is the leaf's Common Name, its groups the Organizations.
//!
//! The TLS layer only asks for a certificate and checks the handshake signature
//! ([`crate::server::tls`]); the chain is verified here, so a certificate from another CA is a
//! 401 from the authenticator, as with kube-apiserver (`tls.RequestClientCert`), not a failed
//! handshake.

use super::user::UserInfo;
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::danger::ClientCertVerifier;
use rustls::server::WebPkiClientVerifier;
use rustls::RootCertStore;
use std::path::Path;
use std::sync::Arc;

/// Verifies client certificates against a CA bundle.
#[derive(Clone, Debug)]
pub struct X509Authenticator {
    verifier: Arc<dyn ClientCertVerifier>,
}

impl X509Authenticator {
    /// From a PEM bundle of CA certificates (`--client-ca-file`). Errors: unreadable file, no
    /// certificate in it, or a certificate webpki cannot use as a root.
    pub fn from_ca_file(path: &Path) -> anyhow::Result<X509Authenticator> {
        let pem = std::fs::read(path)
            .map_err(|e| anyhow::anyhow!("client CA file '{}': {e}", path.display()))?;
        X509Authenticator::from_ca_pem(&pem)
            .map_err(|e| anyhow::anyhow!("client CA file '{}': {e}", path.display()))
    }

    /// From PEM-encoded CA certificates.
    pub fn from_ca_pem(pem: &[u8]) -> anyhow::Result<X509Authenticator> {
        use rustls::pki_types::pem::PemObject;
        let mut roots = RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(pem) {
            roots.add(cert?)?;
        }
        if roots.is_empty() {
            anyhow::bail!("no CA certificate found");
        }
        let verifier = WebPkiClientVerifier::builder_with_provider(
            Arc::new(roots),
            Arc::new(rustls::crypto::ring::default_provider()),
        )
        .build()?;
        Ok(X509Authenticator { verifier })
    }

    /// Authenticate the chain a client presented (leaf first). `Ok(None)`: no certificate, or
    /// a verified one without a Common Name (the next authenticator decides). Errors: the
    /// chain does not verify (unknown CA, expired, not for client auth) — a 401.
    pub fn authenticate(
        &self,
        chain: &[CertificateDer<'static>],
    ) -> Result<Option<UserInfo>, String> {
        let Some((leaf, intermediates)) = chain.split_first() else {
            return Ok(None);
        };
        self.verifier
            .verify_client_cert(leaf, intermediates, UnixTime::now())
            .map_err(|e| format!("verifying certificate: {e}"))?;
        let (_, cert) = x509_parser::parse_x509_certificate(leaf)
            .map_err(|e| format!("parsing certificate: {e}"))?;
        let subject = cert.subject();
        let name = subject
            .iter_common_name()
            .next()
            .and_then(|a| a.as_str().ok())
            .unwrap_or("")
            .to_string();
        if name.is_empty() {
            return Ok(None);
        }
        let groups = subject
            .iter_organization()
            .filter_map(|a| a.as_str().ok().map(str::to_string))
            .collect();
        Ok(Some(UserInfo {
            name,
            groups,
            ..Default::default()
        }))
    }
}
