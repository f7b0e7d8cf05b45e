//! Static bearer tokens (`k8s.io/apiserver/pkg/authentication/token/tokenfile/tokenfile.go`):
//! `--token-auth-file` is CSV, one user per record: `token,user,uid[,"group1,group2"]`.
//! Records with an empty token are skipped with a warning; a later duplicate token replaces
//! an earlier one (also warned), as kube does.

use super::user::UserInfo;
use std::collections::HashMap;
use std::path::Path;

/// The tokens of one file.
#[derive(Clone, Debug, Default)]
pub struct TokenFile {
    tokens: HashMap<String, UserInfo>,
}

impl TokenFile {
    /// Read `path`. Errors: the file cannot be read, a record is not valid CSV, or has fewer
    /// than 3 columns — each naming the line, so the server refuses to start with it.
    pub fn load(path: &Path) -> anyhow::Result<TokenFile> {
        let data = std::fs::read(path)
            .map_err(|e| anyhow::anyhow!("token file '{}': {e}", path.display()))?;
        TokenFile::parse(&data, &path.display().to_string())
    }

    /// Parse the content of a token file named `name` (for messages).
    pub fn parse(data: &[u8], name: &str) -> anyhow::Result<TokenFile> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(data);
        let mut tokens = HashMap::new();
        for record in reader.records() {
            let record = record.map_err(|e| {
                let line = e.position().map(|p| p.line()).unwrap_or(0);
                anyhow::anyhow!("token file '{name}' line {line}: {e}")
            })?;
            let line = record.position().map(|p| p.line()).unwrap_or(0);
            if record.len() < 3 {
                anyhow::bail!(
                    "token file '{name}' line {line}: must have at least 3 columns (token, user name, user uid), found {}",
                    record.len()
                );
            }
            if record[0].is_empty() {
                tracing::warn!(file = name, line, "empty token in token file; skipped");
                continue;
            }
            let groups = match record.get(3) {
                Some(g) if !g.is_empty() => g.split(',').map(str::to_string).collect(),
                _ => Vec::new(),
            };
            let user = UserInfo {
                name: record[1].to_string(),
                uid: record[2].to_string(),
                groups,
                ..Default::default()
            };
            if tokens.insert(record[0].to_string(), user).is_some() {
                tracing::warn!(file = name, line, "duplicate token in token file");
            }
        }
        Ok(TokenFile { tokens })
    }

    /// The user a token belongs to.
    pub fn authenticate(&self, token: &str) -> Option<&UserInfo> {
        self.tokens.get(token)
    }

    /// How many tokens the file holds.
    pub fn len(&self) -> usize {
        self.tokens.len()
    }

    /// Whether the file holds no token.
    pub fn is_empty(&self) -> bool {
        self.tokens.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kube_csv_format() {
        let f = TokenFile::parse(
            b"t1,jane,u1,\"dev,ops\"\nt2,joe,u2\n,skipped,u3\n",
            "tokens.csv",
        )
        .unwrap();
        let jane = f.authenticate("t1").unwrap();
        assert_eq!(jane.name, "jane");
        assert_eq!(jane.uid, "u1");
        assert_eq!(jane.groups, ["dev", "ops"]);
        assert!(f.authenticate("t2").unwrap().groups.is_empty());
        assert_eq!(f.len(), 2);
        assert!(f.authenticate("").is_none());
    }

    #[test]
    fn short_record_names_its_line() {
        let e = TokenFile::parse(b"t1,jane,u1\nt2,joe\n", "tokens.csv").unwrap_err();
        assert!(e.to_string().contains("line 2"), "{e}");
        assert!(e.to_string().contains("at least 3 columns"), "{e}");
        let e = TokenFile::parse(b"t1,jane,u1\nt2,\"joe,u2\n", "tokens.csv").unwrap_err();
        assert!(e.to_string().contains("line"), "{e}");
    }
}
