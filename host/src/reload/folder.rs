//! The plugin folder (`--plugin-dir`): its `*.wasm` files, and reading one only once it is
//! no longer being written.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// The `*.wasm` files of a plugin directory, sorted. Errors: the directory cannot be read.
pub fn plugin_files(dir: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "wasm"))
        .collect();
    files.sort();
    Ok(files)
}

/// Read a file twice, 10 ms apart; `None` unless both reads give the same bytes (a file still
/// being written is left for a later rescan).
pub async fn stable_read(path: &Path) -> Option<Vec<u8>> {
    let first = tokio::fs::read(path).await.ok()?;
    tokio::time::sleep(Duration::from_millis(10)).await;
    let second = tokio::fs::read(path).await.ok()?;
    (first == second && !first.is_empty()).then_some(first)
}

/// The last component of a path (`widgets.wasm`), for messages.
pub fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}
