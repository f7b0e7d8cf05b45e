//! The authenticated identity of a request (`k8s.io/apiserver/pkg/authentication/user`
//! `user.Info`, `DefaultInfo`) and the well-known names (`user/user.go`).

use std::collections::BTreeMap;

/// The group every authenticated user is in.
pub const ALL_AUTHENTICATED: &str = "system:authenticated";
/// The group of anonymous requests.
pub const ALL_UNAUTHENTICATED: &str = "system:unauthenticated";
/// The user name of anonymous requests.
pub const ANONYMOUS: &str = "system:anonymous";
/// The group allowed everything, whatever the authorizer's data says
/// (`user.SystemPrivilegedGroup`).
pub const SYSTEM_PRIVILEGED_GROUP: &str = "system:masters";

/// Who made a request.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UserInfo {
    /// User name (`CN` of a client certificate, the token file's second column, …).
    pub name: String,
    /// Unique id, when the authenticator knows one (token file's third column).
    pub uid: String,
    /// Groups, in the order the authenticator gave them.
    pub groups: Vec<String>,
    /// Extra attributes (`Impersonate-Extra-*`), key → values.
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// The anonymous user (`anonymous.NewAuthenticator`).
    pub fn anonymous() -> UserInfo {
        UserInfo {
            name: ANONYMOUS.into(),
            groups: vec![ALL_UNAUTHENTICATED.into()],
            ..Default::default()
        }
    }

    /// Whether the user is in `group`.
    pub fn in_group(&self, group: &str) -> bool {
        self.groups.iter().any(|g| g == group)
    }

    /// The user as `authentication.k8s.io/v1` `UserInfo` JSON.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// `authentication.k8s.io/v1` `UserInfo`: `username`, then `uid`, `groups`, `extra` when set.
impl serde::Serialize for UserInfo {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("username", &self.name)?;
        if !self.uid.is_empty() {
            m.serialize_entry("uid", &self.uid)?;
        }
        if !self.groups.is_empty() {
            m.serialize_entry("groups", &self.groups)?;
        }
        if !self.extra.is_empty() {
            m.serialize_entry("extra", &self.extra)?;
        }
        m.end()
    }
}
