//! The request authenticator kube-apiserver builds (`pkg/kubeapiserver/authenticator/config.go`
//! `Config.New`): a union of the x509 and bearer-token authenticators (the first to recognise
//! the request wins, `authentication/request/union`), each user it finds put in
//! `system:authenticated` (`authentication/group/authenticated_group_adder.go`), and, when
//! `--anonymous-auth` is on, the anonymous user for a request that carried no credentials at
//! all — but not for one whose credentials failed (`union.NewFailOnError`).

use super::service_account::ServiceAccountTokens;
use super::token_file::TokenFile;
use super::user::{UserInfo, ALL_AUTHENTICATED};
use super::x509::X509Authenticator;
use axum::http::{header, HeaderMap};
use rustls::pki_types::CertificateDer;

/// Why a request is answered 401 (logged; the client only sees `Unauthorized`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthenticationError(pub String);

impl std::fmt::Display for AuthenticationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// The configured authenticators.
#[derive(Clone, Debug, Default)]
pub struct Authenticator {
    /// Client certificates (`--client-ca-file`, or the generated client CA).
    pub x509: Option<X509Authenticator>,
    /// Static tokens (`--token-auth-file`).
    pub tokens: Option<TokenFile>,
    /// `--anonymous-auth`.
    pub anonymous: bool,
    /// Service-account tokens (bound tokens of the TokenRequest API).
    pub service_accounts: Option<std::sync::Arc<ServiceAccountTokens>>,
    /// JWT issuers of `--authentication-config` (OIDC), reloaded when the file changes.
    pub jwt: Option<super::jwt::SharedJwt>,
}

impl Authenticator {
    /// Who sent a request with these `headers` over a connection whose client presented
    /// `peer_certificates` (leaf first; empty on plain HTTP or without a certificate).
    /// Errors: presented credentials that do not verify, or none when anonymous requests are
    /// off.
    pub async fn authenticate(
        &self,
        peer_certificates: &[CertificateDer<'static>],
        headers: &HeaderMap,
    ) -> Result<UserInfo, AuthenticationError> {
        let mut errors = Vec::new();
        if let Some(x509) = &self.x509 {
            match x509.authenticate(peer_certificates) {
                Ok(Some(user)) => return Ok(authenticated(user)),
                Ok(None) => {}
                Err(e) => errors.push(e),
            }
        }
        if let Some(token) = bearer_token(headers) {
            // A service-account JWT of an issuer this server accepts is decided by its
            // authenticator, as is a JWT of an `--authentication-config` issuer; anything else
            // may be a static token.
            let now = chrono::Utc::now().timestamp();
            let mut sa = match &self.service_accounts {
                Some(sa) => sa.authenticate(token, now).await,
                None => None,
            };
            // A JWT of a configured issuer is decided by that issuer's authenticator.
            if sa.is_none() {
                if let Some(jwt) = &self.jwt {
                    sa = jwt.load().authenticate(token, now).await;
                }
            }
            match sa {
                Some(Ok(user)) => return Ok(authenticated(user)),
                Some(Err(e)) => errors.push(e),
                None => match self.tokens.as_ref().and_then(|t| t.authenticate(token)) {
                    Some(user) => return Ok(authenticated(user.clone())),
                    None => errors.push("invalid bearer token".to_string()),
                },
            }
        }
        if !errors.is_empty() {
            return Err(AuthenticationError(errors.join(", ")));
        }
        if self.anonymous {
            return Ok(UserInfo::anonymous());
        }
        Err(AuthenticationError("no credentials".into()))
    }
}

fn authenticated(mut user: UserInfo) -> UserInfo {
    if !user.in_group(ALL_AUTHENTICATED) {
        user.groups.push(ALL_AUTHENTICATED.into());
    }
    user
}

/// The token of `Authorization: Bearer <token>` (`authentication/request/bearertoken`):
/// the scheme is case-insensitive; a header of another scheme or an empty token is no token.
fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?.trim();
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        futures::executor::block_on(f)
    }

    fn headers(auth: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, auth.parse().unwrap());
        h
    }

    #[test]
    fn token_anonymous_and_failures() {
        let a = Authenticator {
            x509: None,
            tokens: Some(TokenFile::parse(b"secret,jane,u1,dev\n", "t").unwrap()),
            anonymous: true,
            service_accounts: None,
            jwt: None,
        };
        let jane = block_on(a.authenticate(&[], &headers("Bearer secret"))).unwrap();
        assert_eq!(jane.name, "jane");
        assert_eq!(jane.groups, ["dev", ALL_AUTHENTICATED]);
        assert_eq!(
            block_on(a.authenticate(&[], &HeaderMap::new())).unwrap(),
            UserInfo::anonymous()
        );
        // A wrong token is a 401, never anonymous.
        assert!(block_on(a.authenticate(&[], &headers("bearer nope"))).is_err());
        // Another scheme carries no bearer token.
        assert!(block_on(a.authenticate(&[], &headers("Basic abc"))).is_ok());
        let closed = Authenticator {
            anonymous: false,
            ..a
        };
        assert!(block_on(closed.authenticate(&[], &HeaderMap::new())).is_err());
    }
}
