//! Version-control views over the embedded corpus: repositories by name, refs to commits, the
//! file tree at a commit, line diffs (longest common subsequence) and commit summaries. Pure.

use std::collections::BTreeMap;

use serde_json::{Value, json};

use super::corpus::{REPOS, Repo};
use super::{ToolError, fail};

pub(super) fn repo(name: &str) -> Result<&'static Repo, ToolError> {
    REPOS.iter().find(|r| r.name == name).ok_or_else(|| {
        let names: Vec<&str> = REPOS.iter().map(|r| r.name).collect();
        ToolError::Failed(format!(
            "no repository {name:?}; indexed: {}",
            names.join(", ")
        ))
    })
}

/// The commit index a ref (branch, full or short sha, `HEAD`) names.
pub(super) fn resolve(r: &Repo, rf: Option<&str>) -> Result<usize, ToolError> {
    let rf = rf.unwrap_or(r.default_branch);
    if rf == "HEAD" {
        return resolve(r, Some(r.default_branch));
    }
    if let Some((_, i)) = r.branches.iter().find(|(b, _)| *b == rf) {
        return Ok(*i);
    }
    if rf.len() >= 4
        && let Some(i) = r.commits.iter().position(|c| c.sha.starts_with(rf))
    {
        return Ok(i);
    }
    fail(format!("no branch or commit {rf:?} in {}", r.name))
}

/// Every file's text after commit `upto`.
pub(super) fn tree(r: &Repo, upto: usize) -> BTreeMap<&'static str, &'static str> {
    let mut t = BTreeMap::new();
    for c in &r.commits[..=upto] {
        for (path, text) in c.changes {
            match text {
                Some(s) => t.insert(*path, *s),
                None => t.remove(path),
            };
        }
    }
    t
}

/// Lines of `a` and `b` that match, as index pairs in order (longest common subsequence).
pub(super) fn lcs(a: &[&str], b: &[&str]) -> Vec<(usize, usize)> {
    let mut dp = vec![vec![0u32; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            dp[i][j] = if a[i] == b[j] {
                dp[i + 1][j + 1] + 1
            } else {
                dp[i + 1][j].max(dp[i][j + 1])
            };
        }
    }
    let (mut i, mut j, mut out) = (0, 0, vec![]);
    while i < a.len() && j < b.len() {
        if a[i] == b[j] {
            out.push((i, j));
            (i, j) = (i + 1, j + 1);
        } else if dp[i + 1][j] >= dp[i][j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    out
}

/// A line diff of two texts: ` ` kept, `-` removed, `+` added.
pub fn diff(old: &str, new: &str) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    let (mut i, mut j, mut out) = (0, 0, String::new());
    for (mi, mj) in lcs(&a, &b)
        .into_iter()
        .chain(std::iter::once((a.len(), b.len())))
    {
        a[i..mi]
            .iter()
            .for_each(|l| out.push_str(&format!("-{l}\n")));
        b[j..mj]
            .iter()
            .for_each(|l| out.push_str(&format!("+{l}\n")));
        if mi < a.len() {
            out.push_str(&format!(" {}\n", a[mi]));
        }
        (i, j) = (mi + 1, mj + 1);
    }
    out
}

pub(super) fn file_diffs(old: &BTreeMap<&str, &str>, new: &BTreeMap<&str, &str>) -> Vec<Value> {
    let paths: std::collections::BTreeSet<&str> = old.keys().chain(new.keys()).copied().collect();
    paths
        .into_iter()
        .filter(|p| old.get(p) != new.get(p))
        .map(|p| {
            let status = match (old.contains_key(p), new.contains_key(p)) {
                (false, _) => "added",
                (_, false) => "deleted",
                _ => "modified",
            };
            json!({"path": p, "status": status, "diff": diff(old.get(p).unwrap_or(&""), new.get(p).unwrap_or(&""))})
        })
        .collect()
}

pub(super) fn commit_view(r: &Repo, i: usize) -> Value {
    let c = &r.commits[i];
    let parents: Vec<&str> = if i == 0 {
        vec![]
    } else {
        vec![r.commits[i - 1].sha]
    };
    json!({"sha": c.sha, "author": c.author, "date": c.date, "message": c.message, "parents": parents})
}
