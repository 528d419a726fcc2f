//! The twelve `codesearch_*` tools over the embedded corpus (`corpus.rs`): full-text and regex
//! search, symbol definitions and references, files at any commit or branch, history, diffs and
//! blame computed from the commits. Read-only.

use std::collections::BTreeMap;

use regex::RegexBuilder;
use serde_json::{Value, json};

use super::corpus::{REPOS, Repo};
use super::vcs::{commit_view, file_diffs, lcs, repo, resolve, tree};
use super::{Args, State, ToolError, ToolOut, ToolResult, fail};

/// A grep or search stops after this many matching lines; raising it lengthens replies.
const MAX_MATCHES: usize = 200;

/// The index over the corpus: nothing to build beyond the static data, kept as a type so that the
/// state has one field per backend.
#[derive(Default)]
pub struct CodeIndex;

impl CodeIndex {
    pub fn seeded() -> CodeIndex {
        CodeIndex
    }
}

fn glob_ok(glob: Option<&str>, path: &str) -> Result<bool, ToolError> {
    match glob {
        None => Ok(true),
        Some(g) => glob::Pattern::new(g)
            .map(|p| p.matches(path) || p.matches(path.rsplit('/').next().unwrap_or(path)))
            .map_err(|e| ToolError::BadParams(format!("invalid glob {g:?}: {e}"))),
    }
}

fn repos_for(name: Option<&str>) -> Result<Vec<&'static Repo>, ToolError> {
    match name {
        Some(n) => Ok(vec![repo(n)?]),
        None => Ok(REPOS.iter().collect()),
    }
}

const DEF_KEYWORDS: &[(&str, &str)] = &[
    ("fn", "function"),
    ("function", "function"),
    ("struct", "struct"),
    ("enum", "struct"),
    ("class", "class"),
    ("const", "constant"),
    ("trait", "class"),
    ("interface", "class"),
];

/// If `line` defines a symbol, its name and kind.
fn definition(line: &str) -> Option<(&str, &'static str)> {
    let words: Vec<&str> = line
        .split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    words.windows(2).find_map(|w| {
        DEF_KEYWORDS
            .iter()
            .find(|(k, _)| *k == w[0])
            .map(|(_, kind)| (w[1], *kind))
    })
}

fn has_word(line: &str, word: &str) -> bool {
    line.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .any(|w| w == word)
}

/// (repo, path, line number, line) over the default branch of the chosen repos.
fn lines(repos: &[&'static Repo]) -> Vec<(&'static str, &'static str, usize, &'static str)> {
    let mut out = vec![];
    for r in repos {
        let head = resolve(r, None).expect("default branch exists");
        for (path, text) in tree(r, head) {
            out.extend(
                text.lines()
                    .enumerate()
                    .map(|(n, l)| (r.name, path, n + 1, l)),
            );
        }
    }
    out
}

pub fn call(_s: &mut State, op: &str, a: &Args) -> ToolResult {
    match op {
        "search_code" => {
            let q = a.req("query")?.to_lowercase();
            let mut repos = repos_for(a.str("repo"))?;
            if let Some(lang) = a.str("language") {
                repos.retain(|r| r.language.eq_ignore_ascii_case(lang));
            }
            let mut hits = vec![];
            for (repo, path, n, line) in lines(&repos) {
                if glob_ok(a.str("path_glob"), path)?
                    && q.split_whitespace()
                        .all(|w| line.to_lowercase().contains(w))
                {
                    hits.push(json!({"repo": repo, "path": path, "line": n, "text": line.trim()}));
                }
            }
            hits.truncate(a.limit(20));
            Ok(ToolOut::json(
                json!({"query": a.req("query")?, "matches": hits}),
            ))
        }
        "grep" => {
            let re = RegexBuilder::new(a.req("pattern")?)
                .case_insensitive(a.0.get("case_sensitive").and_then(Value::as_bool) == Some(false))
                .size_limit(1 << 20)
                .build()
                .map_err(|e| ToolError::BadParams(format!("invalid regular expression: {e}")))?;
            let r = repo(a.req("repo")?)?;
            let mut hits = vec![];
            for (_, path, n, line) in lines(&[r]) {
                if hits.len() < MAX_MATCHES
                    && glob_ok(a.str("path_glob"), path)?
                    && re.is_match(line)
                {
                    hits.push(json!({"path": path, "line": n, "text": line}));
                }
            }
            Ok(ToolOut::json(json!({"repo": r.name, "matches": hits})))
        }
        "find_symbol" => {
            let (sym, kind) = (a.req("symbol")?, a.str("kind").unwrap_or("any"));
            let defs: Vec<Value> = lines(&repos_for(a.str("repo"))?)
                .into_iter()
                .filter_map(|(repo, path, n, line)| {
                    let (name, k) = definition(line)?;
                    let kind_ok = kind == "any" || k == kind || (kind == "method" && k == "function");
                    (name == sym && kind_ok).then(|| json!({"repo": repo, "path": path, "line": n, "kind": k, "text": line.trim()}))
                })
                .collect();
            if defs.is_empty() {
                return fail(format!(
                    "no definition of {sym:?} found; codesearch_search_code finds text"
                ));
            }
            Ok(ToolOut::json(json!({"symbol": sym, "definitions": defs})))
        }
        "find_references" => {
            let sym = a.req("symbol")?;
            let refs: Vec<Value> = lines(&repos_for(a.str("repo"))?)
                .into_iter()
                .filter(|(_, _, _, l)| has_word(l, sym) && definition(l).is_none_or(|(n, _)| n != sym))
                .take(a.limit(100))
                .map(|(repo, path, n, line)| json!({"repo": repo, "path": path, "line": n, "text": line.trim()}))
                .collect();
            Ok(ToolOut::json(json!({"symbol": sym, "references": refs})))
        }
        "read_file" => {
            let r = repo(a.req("repo")?)?;
            let at = resolve(r, a.str("ref"))?;
            let path = a.req("path")?.trim_start_matches('/');
            let Some(text) = tree(r, at).get(path).copied() else {
                return fail(format!(
                    "no file {path:?} in {} at {}",
                    r.name, r.commits[at].sha
                ));
            };
            let all: Vec<&str> = text.lines().collect();
            let start = a.int("start_line").unwrap_or(1).max(1) as usize;
            let end = (a.int("end_line").map_or(all.len(), |n| n as usize)).min(all.len());
            if start > end.max(1) {
                return fail(format!(
                    "line range {start}..{end} is outside the file ({} lines)",
                    all.len()
                ));
            }
            let body: Vec<String> = all[start - 1..end]
                .iter()
                .enumerate()
                .map(|(i, l)| format!("{:>4}  {l}", start + i))
                .collect();
            Ok(ToolOut::json(
                json!({"repo": r.name, "path": path, "sha": r.commits[at].sha, "lines": all.len(), "content": body.join("\n")}),
            ))
        }
        "list_repositories" => {
            let list: Vec<Value> = REPOS
                .iter()
                .filter(|r| a.str("org").is_none_or(|o| r.name.split('/').next() == Some(o)))
                .take(a.limit(100))
                .map(|r| json!({"name": r.name, "language": r.language, "description": r.description, "default_branch": r.default_branch}))
                .collect();
            Ok(ToolOut::json(json!({"repositories": list})))
        }
        "list_files" => {
            let r = repo(a.req("repo")?)?;
            let at = resolve(r, a.str("ref"))?;
            let under = a.str("path").unwrap_or("").trim_matches('/');
            let mut entries = std::collections::BTreeSet::new();
            for path in tree(r, at).keys() {
                let Some(rest) = (if under.is_empty() {
                    Some(*path)
                } else {
                    path.strip_prefix(under).and_then(|p| p.strip_prefix('/'))
                }) else {
                    continue;
                };
                if !glob_ok(a.str("glob"), path)? {
                    continue;
                }
                entries.insert(match rest.split_once('/') {
                    Some((dir, _)) => format!("{dir}/"),
                    None => rest.to_string(),
                });
            }
            if entries.is_empty() && !under.is_empty() {
                return fail(format!("no directory {under:?} in {}", r.name));
            }
            Ok(ToolOut::json(
                json!({"repo": r.name, "path": under, "entries": entries}),
            ))
        }
        "list_commits" => {
            let r = repo(a.req("repo")?)?;
            let since = a.str("since").and_then(crate::clock::parse);
            let list: Vec<Value> = (0..r.commits.len())
                .rev()
                .filter(|&i| {
                    a.str("path").is_none_or(|p| {
                        r.commits[i]
                            .changes
                            .iter()
                            .any(|(c, _)| c.starts_with(p.trim_start_matches('/')))
                    })
                })
                .filter(|&i| {
                    a.str("author")
                        .is_none_or(|w| r.commits[i].author.contains(w))
                })
                .filter(|&i| {
                    since.is_none_or(|t| {
                        crate::clock::parse(r.commits[i].date).is_some_and(|d| d >= t)
                    })
                })
                .take(a.limit(30))
                .map(|i| commit_view(r, i))
                .collect();
            Ok(ToolOut::json(json!({"repo": r.name, "commits": list})))
        }
        "get_commit" => {
            let r = repo(a.req("repo")?)?;
            let i = resolve(r, Some(a.req("sha")?))?;
            let before = if i == 0 {
                BTreeMap::new()
            } else {
                tree(r, i - 1)
            };
            let mut v = commit_view(r, i);
            v["files"] = json!(file_diffs(&before, &tree(r, i)));
            Ok(ToolOut::json(v))
        }
        "compare_commits" => {
            let r = repo(a.req("repo")?)?;
            let (base, head) = (
                resolve(r, Some(a.req("base")?))?,
                resolve(r, Some(a.req("head")?))?,
            );
            let (lo, hi) = (base.min(head), base.max(head));
            Ok(ToolOut::json(json!({
                "repo": r.name, "base": r.commits[base].sha, "head": r.commits[head].sha,
                "ahead_by": head.saturating_sub(base), "behind_by": base.saturating_sub(head),
                "commits": (lo + 1..=hi).map(|i| commit_view(r, i)).collect::<Vec<_>>(),
                "files": file_diffs(&tree(r, base), &tree(r, head)),
            })))
        }
        "blame_file" => blame(a),
        "list_branches" => {
            let r = repo(a.req("repo")?)?;
            let list: Vec<Value> = r.branches.iter().map(|(b, i)| json!({"name": b, "sha": r.commits[*i].sha, "default": *b == r.default_branch})).collect();
            Ok(ToolOut::json(json!({"repo": r.name, "branches": list})))
        }
        _ => Err(ToolError::BadParams(format!(
            "unknown tool: codesearch_{op}"
        ))),
    }
}

/// For each line at the default branch, the commit that last introduced it.
fn blame(a: &Args) -> ToolResult {
    let r = repo(a.req("repo")?)?;
    let path = a.req("path")?.trim_start_matches('/');
    let head = resolve(r, None)?;
    let mut lines: Vec<(&str, usize)> = vec![];
    for (ci, c) in r.commits[..=head].iter().enumerate() {
        let Some((_, text)) = c.changes.iter().find(|(p, _)| *p == path) else {
            continue;
        };
        let new: Vec<&str> = text.map(|t| t.lines().collect()).unwrap_or_default();
        let old: Vec<&str> = lines.iter().map(|(l, _)| *l).collect();
        let mut next: Vec<(&str, usize)> = new.iter().map(|l| (*l, ci)).collect();
        for (oi, ni) in lcs(&old, &new) {
            next[ni].1 = lines[oi].1;
        }
        lines = next;
    }
    if lines.is_empty() {
        return fail(format!("no file {path:?} in {}", r.name));
    }
    let start = a.int("start_line").unwrap_or(1).max(1) as usize;
    let end = a
        .int("end_line")
        .map_or(lines.len(), |n| n as usize)
        .min(lines.len());
    let rows: Vec<Value> = (start..=end)
        .map(|n| {
            let (text, ci) = lines[n - 1];
            let c = &r.commits[ci];
            json!({"line": n, "sha": &c.sha[..8], "author": c.author, "date": c.date, "text": text})
        })
        .collect();
    Ok(ToolOut::json(
        json!({"repo": r.name, "path": path, "lines": rows}),
    ))
}
