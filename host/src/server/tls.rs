//! The TLS side of secure serving (`k8s.io/apiserver/pkg/server/secure_serving.go`
//! `tlsConfig`): rustls with the serving certificate, ALPN `h2` then `http/1.1` (client-go
//! and kubectl use HTTP/2), TLS 1.2 and 1.3, and client certificates *requested* but not
//! required or verified here — as Go's `tls.RequestClientCert` — so that a request without
//! one can still authenticate by token or as anonymous, and one from an unknown CA is a 401
//! from [`crate::authentication::X509Authenticator`], not a handshake failure. The handshake
//! signature (possession of the certificate's key) is still checked here.

use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::WebPkiSupportedAlgorithms;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::{DigitallySignedStruct, DistinguishedName, SignatureScheme};
use std::sync::Arc;

/// A rustls server configuration for `cert_pem` (chain, leaf first) and `key_pem`.
/// Errors: no certificate or key in the PEM text, or a key that does not fit.
pub fn server_config(cert_pem: &str, key_pem: &str) -> anyhow::Result<Arc<rustls::ServerConfig>> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let chain = CertificateDer::pem_slice_iter(cert_pem.as_bytes())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| anyhow::anyhow!("serving certificate: {e}"))?;
    if chain.is_empty() {
        anyhow::bail!("serving certificate: no certificate found");
    }
    let key = PrivateKeyDer::from_pem_slice(key_pem.as_bytes())
        .map_err(|e| anyhow::anyhow!("serving key: {e}"))?;
    let verifier = Arc::new(RequestClientCertificate {
        algorithms: provider.signature_verification_algorithms,
    });
    let mut config = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(rustls::ALL_VERSIONS)?
        .with_client_cert_verifier(verifier)
        .with_single_cert(chain, key)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// Asks for a client certificate, accepts any chain, checks the handshake signature.
#[derive(Debug)]
struct RequestClientCertificate {
    algorithms: WebPkiSupportedAlgorithms,
}

impl ClientCertVerifier for RequestClientCertificate {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        false
    }

    // No CA hints: a client sends its certificate whichever CA issued it, and an unknown one
    // is answered 401 rather than silently treated as anonymous.
    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &[]
    }

    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}
