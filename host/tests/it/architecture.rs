//! ARCHITECTURE.md's rules, checked on the code so they cannot decay unnoticed:
//!
//! - no import circle among `host/src` files: the file-level graph of `crate::`, `super::`,
//!   `self::` paths and `mod` declarations (a folder's `mod.rs` → its children), with
//!   re-exports followed to the file that defines the name, has no strongly connected
//!   component of more than one file;
//! - in `host/storage/src`, a circle stays inside one concept's folder (`store/`, `cacher/`, …);
//! - no upward import: an import from one of `host/src`'s top-level modules to another is one
//!   that ARCHITECTURE.md's "Layers" table allows;
//! - no source file over the size bound, except ported case tables (listed below).
//!
//! The reader is textual (comments, strings and `#[cfg(test)]` modules are skipped), so paths
//! inside macros count as imports too, as they are for the compiler.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

/// A crate's files as modules: module path (`["server", "filters", "audit"]`) → file.
pub struct CrateGraph {
    root: PathBuf,
    files: BTreeMap<Vec<String>, PathBuf>,
    /// `pub use` names per module: name → absolute path it stands for.
    reexports: HashMap<Vec<String>, HashMap<String, Vec<String>>>,
    /// Import edges, file → files.
    pub edges: BTreeMap<PathBuf, BTreeSet<PathBuf>>,
}

/// The tokens the reader needs.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Ident(String),
    PathSep,
    Open,
    Close,
    Comma,
    Semi,
    Star,
    Other,
}

/// Source text without comments, string or char literals, and without `#[cfg(test)]` items.
fn tokens(src: &str) -> Vec<Tok> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            let mut depth = 0;
            while i < b.len() {
                if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
                    depth += 1;
                    i += 2;
                } else if b[i] == b'*' && b.get(i + 1) == Some(&b'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if c == b'r' && (b.get(i + 1) == Some(&b'#') || b.get(i + 1) == Some(&b'"')) {
            // Raw string: r"…", r#"…"#.
            let mut j = i + 1;
            let mut hashes = 0;
            while b.get(j) == Some(&b'#') {
                hashes += 1;
                j += 1;
            }
            if b.get(j) != Some(&b'"') {
                out.push(Tok::Ident("r".into()));
                i += 1;
                continue;
            }
            j += 1;
            loop {
                if j >= b.len() {
                    break;
                }
                if b[j] == b'"' && (0..hashes).all(|k| b.get(j + 1 + k) == Some(&b'#')) {
                    j += 1 + hashes;
                    break;
                }
                j += 1;
            }
            out.push(Tok::Other);
            i = j;
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                if b[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            out.push(Tok::Other);
        } else if c == b'\'' {
            // A char literal ('a', '\n', '\u{..}') or a lifetime ('a).
            if b.get(i + 2) == Some(&b'\'') {
                i += 3;
            } else if b.get(i + 1) == Some(&b'\\') {
                i += 2;
                while i < b.len() && b[i] != b'\'' {
                    i += 1;
                }
                i += 1;
            } else {
                i += 1;
            }
            out.push(Tok::Other);
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let s = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push(Tok::Ident(src[s..i].to_string()));
        } else if c.is_ascii_digit() {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                i += 1;
            }
            out.push(Tok::Other);
        } else if c == b':' && b.get(i + 1) == Some(&b':') {
            out.push(Tok::PathSep);
            i += 2;
        } else {
            out.push(match c {
                b'{' => Tok::Open,
                b'}' => Tok::Close,
                b',' => Tok::Comma,
                b';' => Tok::Semi,
                b'*' => Tok::Star,
                _ => Tok::Other,
            });
            i += 1;
        }
    }
    strip_test_modules(out)
}

/// Drops `# [ cfg ( test ) ] mod name { … }` (and `#[cfg(test)]` items ending in `;`).
fn strip_test_modules(toks: Vec<Tok>) -> Vec<Tok> {
    let mut out = Vec::with_capacity(toks.len());
    let mut i = 0;
    let is = |t: &Tok, s: &str| matches!(t, Tok::Ident(x) if x == s);
    while i < toks.len() {
        // `#`, `[`, cfg, `(`, test, `)`, `]` — the brackets and parens are Tok::Other.
        if i + 6 < toks.len()
            && toks[i] == Tok::Other
            && is(&toks[i + 2], "cfg")
            && is(&toks[i + 4], "test")
            && toks[i + 5] == Tok::Other
        {
            let mut j = i + 7;
            while j < toks.len() && toks[j] != Tok::Open && toks[j] != Tok::Semi {
                j += 1;
            }
            if j < toks.len() && toks[j] == Tok::Open {
                let mut depth = 0;
                while j < toks.len() {
                    match toks[j] {
                        Tok::Open => depth += 1,
                        Tok::Close => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
            }
            i = j + 1;
            continue;
        }
        out.push(toks[i].clone());
        i += 1;
    }
    out
}

/// One path as written: its segments, and whether a `pub use` re-exports it under a name.
struct Written {
    segments: Vec<String>,
    alias: Option<String>,
}

/// Reads a path starting at `toks[i]` (an identifier) and, inside `use`, its `{…}` groups.
fn read_paths(toks: &[Tok], mut i: usize, prefix: Vec<String>, out: &mut Vec<Written>) -> usize {
    let mut segs = prefix;
    loop {
        match toks.get(i) {
            Some(Tok::Ident(s)) => {
                segs.push(s.clone());
                i += 1;
            }
            Some(Tok::Star) => {
                i += 1;
                out.push(Written {
                    segments: segs.clone(),
                    alias: None,
                });
                return i;
            }
            Some(Tok::Open) => {
                i += 1;
                loop {
                    match toks.get(i) {
                        Some(Tok::Close) => return i + 1,
                        Some(Tok::Comma) => i += 1,
                        None => return i,
                        _ => {
                            let after = read_paths(toks, i, segs.clone(), out);
                            i = after.max(i + 1);
                        }
                    }
                }
            }
            _ => break,
        }
        if toks.get(i) == Some(&Tok::PathSep) {
            i += 1;
        } else {
            break;
        }
    }
    let mut alias = segs.last().cloned();
    if matches!(toks.get(i), Some(Tok::Ident(a)) if a == "as") {
        if let Some(Tok::Ident(a)) = toks.get(i + 1) {
            alias = Some(a.clone());
            i += 2;
        }
    }
    out.push(Written {
        segments: segs,
        alias,
    });
    i
}

impl CrateGraph {
    /// Reads every `.rs` file under `root` (a crate's `src/`), skipping `main.rs` (another crate).
    pub fn read(root: &Path) -> CrateGraph {
        let mut files = BTreeMap::new();
        let mut stack = vec![root.to_path_buf()];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    let rel = p.strip_prefix(root).unwrap();
                    let mut m: Vec<String> = rel
                        .with_extension("")
                        .components()
                        .map(|c| c.as_os_str().to_string_lossy().into_owned())
                        .collect();
                    match m.last().map(String::as_str) {
                        Some("main") if m.len() == 1 => continue,
                        Some("lib") if m.len() == 1 => m.clear(),
                        Some("mod") => {
                            m.pop();
                        }
                        _ => {}
                    }
                    files.insert(m, p);
                }
            }
        }
        let mut g = CrateGraph {
            root: root.to_path_buf(),
            files,
            reexports: HashMap::new(),
            edges: BTreeMap::new(),
        };
        // Pass 1: every file's paths, made absolute; `pub use` names remembered.
        let mut written: Vec<(PathBuf, Vec<Vec<String>>)> = Vec::new();
        let modules: Vec<(Vec<String>, PathBuf)> = g
            .files
            .iter()
            .map(|(m, f)| (m.clone(), f.clone()))
            .collect();
        for (module, file) in modules {
            let toks = tokens(&std::fs::read_to_string(&file).unwrap());
            let mut paths = Vec::new();
            let mut inline: Vec<String> = Vec::new();
            let mut depths: Vec<usize> = Vec::new();
            let mut depth = 0usize;
            let mut i = 0;
            while i < toks.len() {
                let here: Vec<String> = module.iter().chain(inline.iter()).cloned().collect();
                match &toks[i] {
                    Tok::Open => {
                        depth += 1;
                        i += 1;
                    }
                    Tok::Close => {
                        depth = depth.saturating_sub(1);
                        if depths.last() == Some(&depth) {
                            depths.pop();
                            inline.pop();
                        }
                        i += 1;
                    }
                    Tok::Ident(k) if k == "mod" => {
                        if let Some(Tok::Ident(name)) = toks.get(i + 1) {
                            match toks.get(i + 2) {
                                Some(Tok::Semi) => {
                                    let mut child = here.clone();
                                    child.push(name.clone());
                                    paths.push(child);
                                }
                                Some(Tok::Open) => {
                                    inline.push(name.clone());
                                    depths.push(depth);
                                    depth += 1;
                                    i += 3;
                                    continue;
                                }
                                _ => {}
                            }
                        }
                        i += 2;
                    }
                    Tok::Ident(k) if k == "use" => {
                        let public = i > 0 && matches!(&toks[i - 1], Tok::Ident(p) if p == "pub")
                            || i > 3 && matches!(&toks[i - 4], Tok::Ident(p) if p == "pub");
                        let mut ws = Vec::new();
                        i = read_paths(&toks, i + 1, Vec::new(), &mut ws);
                        for w in ws {
                            let Some(abs) = absolute(&here, &w.segments) else {
                                continue;
                            };
                            if public {
                                if let Some(a) = &w.alias {
                                    g.reexports
                                        .entry(here.clone())
                                        .or_default()
                                        .insert(a.clone(), abs.clone());
                                }
                            }
                            paths.push(abs);
                        }
                    }
                    Tok::Ident(k)
                        if (k == "crate" || k == "super" || k == "self")
                            && toks.get(i + 1) == Some(&Tok::PathSep)
                            && !(i > 0 && toks[i - 1] == Tok::PathSep) =>
                    {
                        let mut ws = Vec::new();
                        i = read_paths(&toks, i, Vec::new(), &mut ws);
                        for w in ws {
                            if let Some(abs) = absolute(&here, &w.segments) {
                                paths.push(abs);
                            }
                        }
                    }
                    _ => i += 1,
                }
            }
            written.push((file, paths));
        }
        // Pass 2: each path to the file that defines what it names.
        for (file, paths) in written {
            let mut to = BTreeSet::new();
            for p in paths {
                if let Some(target) = g.resolve(&p, 0) {
                    if target != file {
                        to.insert(target);
                    }
                }
            }
            g.edges.insert(file, to);
        }
        g
    }

    /// The file defining what `path` (absolute) names: the longest prefix that is a file,
    /// through `pub use` re-exports of the next segment.
    fn resolve(&self, path: &[String], hops: usize) -> Option<PathBuf> {
        for n in (0..=path.len()).rev() {
            let Some(file) = self.files.get(&path[..n]) else {
                continue;
            };
            if hops < 8 {
                if let Some(next) = path.get(n) {
                    if let Some(target) = self.reexports.get(&path[..n]).and_then(|r| r.get(next)) {
                        let mut full = target.clone();
                        full.extend_from_slice(&path[n + 1..]);
                        if let Some(f) = self.resolve(&full, hops + 1) {
                            return Some(f);
                        }
                    }
                }
            }
            return Some(file.clone());
        }
        None
    }

    /// The file's path relative to the crate's `src/`.
    pub fn name(&self, f: &Path) -> String {
        f.strip_prefix(&self.root)
            .unwrap()
            .to_string_lossy()
            .into_owned()
    }

    /// Strongly connected components of more than one file (Tarjan), as relative names.
    pub fn circles(&self) -> Vec<Vec<String>> {
        let nodes: Vec<&PathBuf> = self.edges.keys().collect();
        let index_of: HashMap<&PathBuf, usize> =
            nodes.iter().enumerate().map(|(i, n)| (*n, i)).collect();
        let adj: Vec<Vec<usize>> = nodes
            .iter()
            .map(|n| {
                self.edges[*n]
                    .iter()
                    .filter_map(|t| index_of.get(t).copied())
                    .collect()
            })
            .collect();
        let n = nodes.len();
        let (mut index, mut low, mut on) = (vec![usize::MAX; n], vec![0; n], vec![false; n]);
        let (mut stack, mut next, mut out) = (Vec::new(), 0, Vec::new());
        // Iterative Tarjan: (node, next child position).
        for start in 0..n {
            if index[start] != usize::MAX {
                continue;
            }
            let mut work = vec![(start, 0usize)];
            while let Some(&mut (v, ref mut pos)) = work.last_mut() {
                if *pos == 0 && index[v] == usize::MAX {
                    index[v] = next;
                    low[v] = next;
                    next += 1;
                    stack.push(v);
                    on[v] = true;
                }
                if let Some(&w) = adj[v].get(*pos) {
                    *pos += 1;
                    if index[w] == usize::MAX {
                        work.push((w, 0));
                    } else if on[w] {
                        low[v] = low[v].min(index[w]);
                    }
                    continue;
                }
                work.pop();
                if let Some(&(u, _)) = work.last() {
                    low[u] = low[u].min(low[v]);
                }
                if low[v] == index[v] {
                    let mut comp = Vec::new();
                    while let Some(w) = stack.pop() {
                        on[w] = false;
                        comp.push(self.name(nodes[w]));
                        if w == v {
                            break;
                        }
                    }
                    if comp.len() > 1 {
                        comp.sort();
                        out.push(comp);
                    }
                }
            }
        }
        out
    }

    /// Module-level imports: (importing top-level module, imported top-level module, the
    /// file-level arrow that makes it) for every arrow between two different top-level modules.
    pub fn top_level_imports(&self) -> Vec<(String, String, String)> {
        let top = |f: &Path| -> String {
            let rel = self.name(f);
            let first = rel.split('/').next().unwrap_or("");
            first.trim_end_matches(".rs").to_string()
        };
        let mut out = Vec::new();
        for (from, tos) in &self.edges {
            for to in tos {
                let (a, b) = (top(from), top(to));
                if a != b && a != "lib" {
                    out.push((a, b, format!("{} -> {}", self.name(from), self.name(to))));
                }
            }
        }
        out
    }
}

/// `segments` as written in module `here`, made absolute (`crate::…`, `super::…`, `self::…`);
/// `None` for paths into other crates.
fn absolute(here: &[String], segments: &[String]) -> Option<Vec<String>> {
    let first = segments.first()?;
    let mut base: Vec<String> = here.to_vec();
    let mut rest = segments;
    match first.as_str() {
        "crate" => {
            base.clear();
            rest = &segments[1..];
        }
        "self" => rest = &segments[1..],
        "super" => {
            while rest.first().map(String::as_str) == Some("super") {
                base.pop()?;
                rest = &rest[1..];
            }
        }
        _ => return None,
    }
    base.extend(rest.iter().filter(|s| *s != "self").cloned());
    Some(base)
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The "Layers" table of ARCHITECTURE.md: module → the modules it may import.
fn layers() -> BTreeMap<String, BTreeSet<String>> {
    let text = std::fs::read_to_string(repo().join("ARCHITECTURE.md")).unwrap();
    let start = text
        .find("<!-- layers -->")
        .expect("ARCHITECTURE.md has a layers table");
    let mut out = BTreeMap::new();
    for line in text[start..].lines().skip(1) {
        let line = line.trim();
        if !line.starts_with('|') {
            if out.is_empty() {
                continue;
            }
            break;
        }
        let cells: Vec<&str> = line.trim_matches('|').split('|').map(str::trim).collect();
        if cells.len() < 2 || cells[0].starts_with('-') || cells[0] == "module" {
            continue;
        }
        let name = cells[0].trim_matches('`').to_string();
        let may: BTreeSet<String> = cells[1]
            .split(',')
            .map(|s| s.trim().trim_matches('`').to_string())
            .filter(|s| !s.is_empty() && s != "—")
            .collect();
        out.insert(name, may);
    }
    out
}

#[test]
fn no_import_circle_among_host_files() {
    let g = CrateGraph::read(&repo().join("host/src"));
    assert!(g.edges.len() > 100, "the reader found the files");
    let circles = g.circles();
    assert!(
        circles.is_empty(),
        "import circles in host/src (ARCHITECTURE.md: no file imports one that imports it back): {circles:#?}"
    );
}

#[test]
fn storage_circles_stay_inside_one_concept_folder() {
    let g = CrateGraph::read(&repo().join("host/storage/src"));
    for c in g.circles() {
        let dirs: BTreeSet<&str> = c
            .iter()
            .map(|f| f.rsplit_once('/').map_or("", |d| d.0))
            .collect();
        assert!(
            dirs.len() == 1 && !dirs.contains(""),
            "an import circle in host/storage/src crosses folders: {c:?}"
        );
    }
}

#[test]
fn imports_follow_the_layers_table() {
    let g = CrateGraph::read(&repo().join("host/src"));
    let layers = layers();
    let mut wrong = Vec::new();
    for (from, to, arrow) in g.top_level_imports() {
        match layers.get(&from) {
            None => wrong.push(format!("{from} is not in the layers table ({arrow})")),
            Some(may) if !may.contains(&to) && !may.contains("*") => {
                wrong.push(format!("{from} may not import {to}: {arrow}"))
            }
            _ => {}
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against ARCHITECTURE.md's layers table:\n{}",
        wrong.join("\n")
    );
}

/// Files allowed past the size bound, each with why. A file's size is its lines before its
/// `#[cfg(test)]` module (unit tests beside the code are not what the bound is about).
const OVERSIZED: &[(&str, &str)] = &[];

/// The bound, in lines of non-test source.
const MAX_LINES: usize = 850;

#[test]
fn no_source_file_over_the_size_bound() {
    let mut over = Vec::new();
    for root in ["host/src", "host/storage/src", "plugins"] {
        let mut stack = vec![repo().join(root)];
        while let Some(dir) = stack.pop() {
            for e in std::fs::read_dir(&dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    if !p.ends_with("target") && !p.ends_with("node_modules") {
                        stack.push(p);
                    }
                    continue;
                }
                if p.extension().is_none_or(|x| x != "rs") {
                    continue;
                }
                let rel = p
                    .strip_prefix(repo())
                    .unwrap()
                    .to_string_lossy()
                    .into_owned();
                if rel.contains("/testing/")
                    || rel.contains("/tests/")
                    || rel.ends_with("/tests.rs")
                    || OVERSIZED.iter().any(|(f, _)| *f == rel)
                {
                    continue;
                }
                let lines = std::fs::read_to_string(&p)
                    .unwrap()
                    .lines()
                    .take_while(|l| l.trim() != "#[cfg(test)]")
                    .count();
                if lines > MAX_LINES {
                    over.push(format!("{rel}: {lines} lines"));
                }
            }
        }
    }
    assert!(
        over.is_empty(),
        "files past the ~800-line bound:\n{}",
        over.join("\n")
    );
}
