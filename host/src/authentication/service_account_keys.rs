//! The keys of service-account tokens (kube's `pkg/serviceaccount/jwt.go` signer and
//! `keyutil.ParsePublicKeysPEM` / `ParsePrivateKeyPEM`): ECDSA P-256 (`ES256`) and RSA
//! (`RS256`, what kubeadm generates: `sa.key` as PKCS#1 `RSA PRIVATE KEY`, `sa.pub` as a PKIX
//! `PUBLIC KEY`). Read from PEM: `PRIVATE KEY` (PKCS#8, either kind), `RSA PRIVATE KEY`
//! (PKCS#1), `EC PRIVATE KEY` (SEC1, P-256), `PUBLIC KEY` (PKIX, either kind), `RSA PUBLIC KEY`
//! (PKCS#1) and `CERTIFICATE` (its public key), as kube's key files may hold; other blocks
//! (`EC PARAMETERS`) are skipped, as kube's parsers skip them. A key's `kid` is
//! kube's `keyIDFromPublicKey`: base64url (no padding) of the SHA-256 of its PKIX DER.

use base64::engine::general_purpose::URL_SAFE_NO_PAD as B64;
use base64::Engine;
use ring::rand::SystemRandom;
use ring::signature::{self, EcdsaKeyPair, KeyPair, RsaKeyPair};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

/// The key tokens are signed with.
pub enum SigningKey {
    /// ECDSA P-256, `ES256`.
    Ec(EcdsaKeyPair),
    /// RSA (2048 bits or more), `RS256` (PKCS#1 v1.5 with SHA-256).
    Rsa(RsaKeyPair),
}

/// A key tokens are verified with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum VerificationKey {
    /// The uncompressed P-256 point (65 bytes).
    Ec(Vec<u8>),
    /// The PKCS#1 `RSAPublicKey` DER, and its modulus and exponent (big-endian, for the JWK).
    Rsa {
        der: Vec<u8>,
        n: Vec<u8>,
        e: Vec<u8>,
    },
}

/// OID 1.2.840.10045.2.1 (id-ecPublicKey) with P-256, as a P-256 PKIX DER begins (26 bytes);
/// the uncompressed point follows.
const SPKI_P256_PREFIX: [u8; 26] = [
    0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a,
    0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
];

/// The AlgorithmIdentifier of rsaEncryption (OID 1.2.840.113549.1.1.1, NULL parameters).
const RSA_ALGORITHM: [u8; 15] = [
    0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00,
];

/// A DER header: `tag` and the definite length `len`.
fn der_header(tag: u8, len: usize) -> Vec<u8> {
    let mut out = vec![tag];
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes: Vec<u8> = len
            .to_be_bytes()
            .into_iter()
            .skip_while(|b| *b == 0)
            .collect();
        out.push(0x80 | bytes.len() as u8);
        out.extend(bytes);
    }
    out
}

impl VerificationKey {
    /// The PKIX `SubjectPublicKeyInfo` DER of the key.
    pub fn pkix_der(&self) -> Vec<u8> {
        match self {
            VerificationKey::Ec(point) => [&SPKI_P256_PREFIX[..], point].concat(),
            VerificationKey::Rsa { der, .. } => {
                let mut bits = der_header(0x03, der.len() + 1);
                bits.push(0);
                bits.extend_from_slice(der);
                let mut out = der_header(0x30, RSA_ALGORITHM.len() + bits.len());
                out.extend_from_slice(&RSA_ALGORITHM);
                out.extend(bits);
                out
            }
        }
    }

    /// kube's `keyIDFromPublicKey`.
    pub fn key_id(&self) -> String {
        B64.encode(Sha256::digest(self.pkix_der()))
    }

    /// The JWS `alg` this key verifies.
    pub fn alg(&self) -> &'static str {
        match self {
            VerificationKey::Ec(_) => "ES256",
            VerificationKey::Rsa { .. } => "RS256",
        }
    }

    /// The JWK of `/openid/v1/jwks` (kube's `publicJWKsFromKeys`).
    pub fn jwk(&self, kid: &str) -> Value {
        match self {
            VerificationKey::Ec(p) => {
                json!({"use": "sig", "kty": "EC", "kid": kid, "crv": "P-256", "alg": "ES256",
                       "x": B64.encode(&p[1..33]), "y": B64.encode(&p[33..65])})
            }
            VerificationKey::Rsa { n, e, .. } => {
                json!({"use": "sig", "kty": "RSA", "kid": kid, "alg": "RS256",
                       "n": B64.encode(n), "e": B64.encode(e)})
            }
        }
    }

    /// Whether `sig` over `input` verifies with this key under `alg` (`ES256`/`RS256`).
    pub fn verifies(&self, alg: &str, input: &[u8], sig: &[u8]) -> bool {
        match (self, alg) {
            (VerificationKey::Ec(p), "ES256") => {
                signature::UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, p)
                    .verify(input, sig)
                    .is_ok()
            }
            (VerificationKey::Rsa { der, .. }, "RS256") => {
                signature::UnparsedPublicKey::new(&signature::RSA_PKCS1_2048_8192_SHA256, der)
                    .verify(input, sig)
                    .is_ok()
            }
            _ => false,
        }
    }

    /// A key from a JWK (RFC 7517/7518): `kty` `RSA` (`n`, `e`) or `EC` on `P-256` (`x`, `y`);
    /// `None` for any other.
    pub fn from_jwk(jwk: &Value) -> Option<VerificationKey> {
        let field = |k: &str| B64.decode(jwk[k].as_str()?).ok();
        match jwk["kty"].as_str()? {
            "RSA" => {
                // RSAPublicKey ::= SEQUENCE { modulus INTEGER, publicExponent INTEGER }
                let integer = |b: &[u8]| {
                    let b: Vec<u8> = b.iter().skip_while(|x| **x == 0).copied().collect();
                    let mut content = if b.first().is_some_and(|x| x & 0x80 != 0) {
                        vec![0]
                    } else {
                        Vec::new()
                    };
                    content.extend(b);
                    let mut out = der_header(0x02, content.len());
                    out.extend(content);
                    out
                };
                let body = [integer(&field("n")?), integer(&field("e")?)].concat();
                let mut der = der_header(0x30, body.len());
                der.extend(body);
                VerificationKey::rsa(&der).ok()
            }
            "EC" if jwk["crv"] == "P-256" => {
                let (x, y) = (field("x")?, field("y")?);
                (x.len() == 32 && y.len() == 32)
                    .then(|| VerificationKey::Ec([&[4u8][..], &x, &y].concat()))
            }
            _ => None,
        }
    }

    /// An RSA key from its PKCS#1 `RSAPublicKey` DER.
    fn rsa(der: &[u8]) -> anyhow::Result<VerificationKey> {
        use x509_parser::prelude::FromDer;
        let (_, k) = x509_parser::public_key::RSAPublicKey::from_der(der)
            .map_err(|e| anyhow::anyhow!("not an RSA public key: {e}"))?;
        let trim = |b: &[u8]| {
            b.iter()
                .skip_while(|x| **x == 0)
                .copied()
                .collect::<Vec<u8>>()
        };
        Ok(VerificationKey::Rsa {
            der: der.to_vec(),
            n: trim(k.modulus),
            e: trim(k.exponent),
        })
    }

    /// A key from a PKIX `SubjectPublicKeyInfo` DER: P-256 or RSA.
    fn from_pkix(der: &[u8]) -> anyhow::Result<VerificationKey> {
        use x509_parser::prelude::FromDer;
        let (_, spki) = x509_parser::x509::SubjectPublicKeyInfo::from_der(der)
            .map_err(|e| anyhow::anyhow!("not a PKIX public key: {e}"))?;
        match spki.parsed() {
            Ok(x509_parser::public_key::PublicKey::RSA(_)) => {
                VerificationKey::rsa(&spki.subject_public_key.data)
            }
            Ok(x509_parser::public_key::PublicKey::EC(point))
                if der.starts_with(&SPKI_P256_PREFIX) && point.data().len() == 65 =>
            {
                Ok(VerificationKey::Ec(point.data().to_vec()))
            }
            _ => anyhow::bail!("unsupported public key: P-256 and RSA keys are read"),
        }
    }
}

impl SigningKey {
    /// A signing key from PKCS#8 DER (P-256 or RSA) or, `pkcs1`, PKCS#1 RSA DER.
    fn from_der(der: &[u8], pkcs1: bool, rng: &SystemRandom) -> anyhow::Result<SigningKey> {
        if pkcs1 {
            return RsaKeyPair::from_der(der)
                .map(SigningKey::Rsa)
                .map_err(|e| anyhow::anyhow!("not an RSA private key: {e}"));
        }
        if let Ok(k) =
            EcdsaKeyPair::from_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, der, rng)
        {
            return Ok(SigningKey::Ec(k));
        }
        RsaKeyPair::from_pkcs8(der)
            .map(SigningKey::Rsa)
            .map_err(|e| anyhow::anyhow!("neither a P-256 nor an RSA private key: {e}"))
    }

    /// A P-256 key from SEC1 `ECPrivateKey` DER (OpenSSL's `EC PRIVATE KEY`, kubeadm's ECDSA
    /// `sa.key`): `SEQUENCE { 1, OCTET STRING key, [0] curve OPTIONAL, [1] BIT STRING public }`.
    /// Errors: another shape, another curve, or no public key (ring needs it).
    fn from_sec1(der: &[u8], rng: &SystemRandom) -> anyhow::Result<SigningKey> {
        const P256: [u8; 10] = [0x06, 0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];
        let bad = || anyhow::anyhow!("not a P-256 EC PRIVATE KEY");
        // The outer SEQUENCE's header (short or one/two-byte long form).
        let body = match der {
            [0x30, l, rest @ ..] if *l < 0x80 => rest,
            [0x30, 0x81, _, rest @ ..] => rest,
            [0x30, 0x82, _, _, rest @ ..] => rest,
            _ => return Err(bad()),
        };
        let rest = body.strip_prefix(&[0x02, 0x01, 0x01]).ok_or_else(bad)?;
        let (private, mut rest) = match rest {
            [0x04, 0x20, tail @ ..] if tail.len() >= 32 => tail.split_at(32),
            _ => return Err(bad()),
        };
        let mut public = None;
        while let [tag, len, tail @ ..] = rest {
            let len = *len as usize;
            if tail.len() < len {
                return Err(bad());
            }
            let (content, next) = tail.split_at(len);
            match tag {
                0xa0 if content != P256 => {
                    anyhow::bail!("an EC PRIVATE KEY on another curve than P-256")
                }
                0xa1 => match content {
                    [0x03, 0x42, 0x00, point @ ..] if point.len() == 65 => public = Some(point),
                    _ => return Err(bad()),
                },
                _ => {}
            }
            rest = next;
        }
        let public =
            public.ok_or_else(|| anyhow::anyhow!("an EC PRIVATE KEY without its public key"))?;
        EcdsaKeyPair::from_private_key_and_public_key(
            &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            private,
            public,
            rng,
        )
        .map(SigningKey::Ec)
        .map_err(|e| anyhow::anyhow!("not a P-256 EC PRIVATE KEY: {e}"))
    }

    /// The key that verifies what this one signs.
    pub fn verification_key(&self) -> VerificationKey {
        match self {
            SigningKey::Ec(k) => VerificationKey::Ec(k.public_key().as_ref().to_vec()),
            SigningKey::Rsa(k) => VerificationKey::rsa(k.public_key().as_ref())
                .expect("ring's RSAPublicKey DER parses"),
        }
    }

    /// The JWS `alg` of tokens signed with this key.
    pub fn alg(&self) -> &'static str {
        match self {
            SigningKey::Ec(_) => "ES256",
            SigningKey::Rsa(_) => "RS256",
        }
    }

    /// The signature of `input`. Errors: ring's (never for these keys in practice).
    pub fn sign(&self, rng: &SystemRandom, input: &[u8]) -> anyhow::Result<Vec<u8>> {
        match self {
            SigningKey::Ec(k) => k
                .sign(rng, input)
                .map(|s| s.as_ref().to_vec())
                .map_err(|_| anyhow::anyhow!("signing failed")),
            SigningKey::Rsa(k) => {
                let mut sig = vec![0; k.public().modulus_len()];
                k.sign(&signature::RSA_PKCS1_SHA256, rng, input, &mut sig)
                    .map_err(|_| anyhow::anyhow!("signing failed"))?;
                Ok(sig)
            }
        }
    }
}

/// The keys of a PEM file: its private keys (to sign with, or to verify with their public
/// halves) and its public keys. Errors: a block of another kind, or a key of another type.
pub fn pem_keys(
    pem_text: &str,
    rng: &SystemRandom,
) -> anyhow::Result<(Vec<SigningKey>, Vec<VerificationKey>)> {
    let (mut private, mut public) = (Vec::new(), Vec::new());
    for block in pem::parse_many(pem_text)? {
        let der = block.contents();
        match block.tag() {
            "PRIVATE KEY" => private.push(SigningKey::from_der(der, false, rng)?),
            "EC PRIVATE KEY" => private.push(SigningKey::from_sec1(der, rng)?),
            "RSA PRIVATE KEY" => private.push(SigningKey::from_der(der, true, rng)?),
            "PUBLIC KEY" => public.push(VerificationKey::from_pkix(der)?),
            "RSA PUBLIC KEY" => public.push(VerificationKey::rsa(der)?),
            "CERTIFICATE" => {
                let (_, cert) = x509_parser::parse_x509_certificate(der)
                    .map_err(|e| anyhow::anyhow!("not a certificate: {e}"))?;
                public.push(VerificationKey::from_pkix(cert.public_key().raw)?);
            }
            // Other blocks (`EC PARAMETERS`, …) are skipped, as kube's parsers skip them.
            _ => {}
        }
    }
    if private.is_empty() && public.is_empty() {
        anyhow::bail!("no PRIVATE KEY, RSA PRIVATE KEY, EC PRIVATE KEY, PUBLIC KEY, RSA PUBLIC KEY or CERTIFICATE block of a P-256 or RSA key");
    }
    Ok((private, public))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// openssl with `args`; its standard output.
    fn openssl(args: &[&str]) -> String {
        let out = std::process::Command::new("openssl")
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// kube's key id of a P-256 key is the SHA-256 of its PKIX DER; the DER built here for an
    /// RSA key is the one a PKIX PEM carries (same id either way).
    #[test]
    fn key_ids_follow_the_pkix_der() {
        let rng = SystemRandom::new();
        let ec = rcgen::KeyPair::generate().unwrap();
        let (private, _) = pem_keys(&ec.serialize_pem(), &rng).unwrap();
        let (_, public) = pem_keys(&ec.public_key_pem(), &rng).unwrap();
        assert_eq!(private[0].verification_key(), public[0]);
        assert_eq!(
            public[0].pkix_der(),
            pem::parse(ec.public_key_pem()).unwrap().contents()
        );
        assert_eq!(private[0].alg(), "ES256");
        assert_eq!(
            VerificationKey::from_jwk(&public[0].jwk("k")).as_ref(),
            Some(&public[0])
        );
    }

    /// `openssl ecparam -genkey -name prime256v1`: `EC PARAMETERS` then a SEC1 `EC PRIVATE KEY`,
    /// read as the same key as its PKIX public half; a file with no key is refused.
    #[test]
    fn sec1_keys_with_their_parameters_block() {
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("ec.key");
        let pem = openssl(&["ecparam", "-genkey", "-name", "prime256v1"]);
        assert!(pem.contains("BEGIN EC PARAMETERS") && pem.contains("BEGIN EC PRIVATE KEY"));
        std::fs::write(&key, &pem).unwrap();
        let public_pem = openssl(&["ec", "-in", key.to_str().unwrap(), "-pubout"]);
        let rng = SystemRandom::new();
        let (private, _) = pem_keys(&pem, &rng).unwrap();
        let (_, public) = pem_keys(&public_pem, &rng).unwrap();
        assert_eq!(private[0].verification_key(), public[0]);
        let sig = private[0].sign(&rng, b"x").unwrap();
        assert!(public[0].verifies("ES256", b"x", &sig));
        let only_parameters =
            "-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n";
        assert!(pem_keys(only_parameters, &rng).is_err());
    }

    /// kubeadm's RSA pair (openssl: a PKCS#1 private key, its PKIX public key): one key id,
    /// `RS256` signatures that verify, the JWK's modulus and exponent.
    #[test]
    fn rsa_keys_as_kubeadm_writes_them() {
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("sa.key");
        let private_pem = openssl(&["genrsa", "-traditional", "2048"]);
        assert!(private_pem.contains("BEGIN RSA PRIVATE KEY"));
        std::fs::write(&key, &private_pem).unwrap();
        let public_pem = openssl(&["rsa", "-in", key.to_str().unwrap(), "-pubout"]);
        let rng = SystemRandom::new();
        let (private, _) = pem_keys(&private_pem, &rng).unwrap();
        let (_, public) = pem_keys(&public_pem, &rng).unwrap();
        let signer = &private[0];
        assert_eq!(signer.alg(), "RS256");
        assert_eq!(signer.verification_key(), public[0]);
        let sig = signer.sign(&rng, b"header.claims").unwrap();
        assert!(public[0].verifies("RS256", b"header.claims", &sig));
        assert!(!public[0].verifies("RS256", b"header.other", &sig));
        assert!(!public[0].verifies("ES256", b"header.claims", &sig));
        let jwk = public[0].jwk("k");
        assert_eq!(VerificationKey::from_jwk(&jwk).as_ref(), Some(&public[0]));
        assert_eq!(jwk["kty"], "RSA");
        assert_eq!(jwk["e"], "AQAB");
        assert_eq!(B64.decode(jwk["n"].as_str().unwrap()).unwrap().len(), 256);
        // The PKIX DER built for the id is the one openssl wrote.
        let pkix = pem::parse(&public_pem).unwrap();
        assert_eq!(public[0].pkix_der(), pkix.contents());
    }
}
