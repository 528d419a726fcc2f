//! The ingest driver: walks the configured roots, reads each changed file from where the last run
//! stopped, pairs calls with results (across runs through `ingest_pending`) and writes one
//! transaction per file through `store/ingest.rs`. Must not hold SQL or parse lines itself.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use time::OffsetDateTime;
use walkdir::WalkDir;

use super::claude_code::ClaudeCode;
use super::codex::Codex;
use super::names::Servers;
use super::pairing::FileParse;
use super::progress::Bar;
use super::reader::{self, HEAD_BYTES};
use super::{Adapter, IngestSummary, Malformed, Names, Status};
use crate::catalog::Catalog;
use crate::clock;
use crate::config::{Config, TranscriptKind, TranscriptRoot};
use crate::store::ingest::{FileBatch, FileRow, Resolution};
use crate::store::{Store, StoreError};

/// How long a call may wait for its result line before it is recorded as `aborted`. A tool call
/// does not run for a day; its transcript was cut off (a killed client, a crash). Lowering it
/// risks recording a long call as aborted whose result then comes too late to count.
pub const PENDING_EXPIRY: time::Duration = time::Duration::hours(24);

/// The suffix of a zstd-compressed Codex rollout (`rollout-….jsonl.zst`).
const COMPRESSED: &str = ".zst";

/// How `ingest_with` runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// Show a progress bar on stderr when it is a terminal and the run takes over a second.
    pub progress: bool,
    /// Stamped on `ingest_files.ingested_at`.
    pub now: OffsetDateTime,
    /// Calls before this time (stored form) are not recorded: the `historyDays` cutoff, `None`
    /// to keep every call.
    pub keep_from: Option<String>,
}

struct Job {
    path: PathBuf,
    key: String,
    kind: TranscriptKind,
    root: usize,
    size: u64,
    mtime_ns: i64,
    /// A zstd-compressed Codex rollout (`.jsonl.zst`): read whole through a decoder.
    compressed: bool,
}

/// Ingests every configured root into `store` (see `ingest_all`).
pub fn ingest_with(
    config: &Config,
    store: &mut Store,
    options: &Options,
) -> anyhow::Result<IngestSummary> {
    let mut summary = IngestSummary::default();
    let catalog = catalog_names(config, store)?;
    let servers = Servers::from_config(&config.servers);
    let names: Vec<Names> = config
        .transcripts
        .iter()
        .map(|r| Names::new(&config.server_names(r), &catalog).with_servers(&servers))
        .collect();
    let known = store.ingest_files()?;
    let mut jobs = Vec::new();
    let mut keys = HashSet::new();
    for (i, root) in config.transcripts.iter().enumerate() {
        walk(root, i, &mut jobs, &mut keys, &mut summary);
    }
    summary.files = jobs.len() as u64;
    jobs.retain(|j| {
        known
            .get(&j.key)
            .is_none_or(|k| k.size != j.size || k.mtime_ns != j.mtime_ns)
    });
    let total: u64 = jobs
        .iter()
        .map(|j| match known.get(&j.key) {
            Some(k) if k.offset <= j.size => j.size - k.offset,
            _ => j.size,
        })
        .sum();
    let bar = Bar::new(options.progress, total);
    // Call ids awaiting a result, per adapter (Claude Code, Codex).
    let mut pending = [
        store.pending_call_ids(TranscriptKind::ClaudeCode.as_str())?,
        store.pending_call_ids(TranscriptKind::Codex.as_str())?,
    ];
    for job in &jobs {
        let set = match job.kind {
            TranscriptKind::ClaudeCode => &mut pending[0],
            TranscriptKind::Codex => &mut pending[1],
        };
        let ctx = FileCtx {
            job,
            prev: known.get(&job.key),
            names: &names[job.root],
            now: options.now,
            keep_from: options.keep_from.as_deref(),
        };
        match ingest_file(store, &ctx, set, &bar, &mut summary) {
            Ok(()) => {}
            Err(FileError::Io(e)) => summary.errors.push((job.key.clone(), e.to_string())),
            Err(FileError::Store(e)) => return Err(e.into()),
        }
    }
    bar.finish();
    summary.files_gone = store.forget_ingest_files(&gone(&known, &keys))?;
    let cutoff = clock::fmt(options.now - PENDING_EXPIRY);
    summary.expired = store.expire_pending(&cutoff, Status::Aborted)?;
    Ok(summary)
}

/// The files of `known` that this run's walk did not find (`walked`) and that are not there
/// (not found, as opposed to unreadable): their rows only grow the table. A file that comes
/// back is read again from its start, its calls then counted as duplicates.
fn gone<'a>(known: &'a HashMap<String, FileRow>, walked: &HashSet<String>) -> Vec<&'a str> {
    known
        .keys()
        .filter(|k| !walked.contains(*k))
        .filter(|k| {
            std::fs::symlink_metadata(k).is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
        })
        .map(String::as_str)
        .collect()
}

/// Upstream tool names: the `catalog` table, else the stored `catalog.json` (`probe::stored`),
/// else none. Never asks the upstream: ingest runs offline.
fn catalog_names(config: &Config, store: &Store) -> Result<Vec<String>, StoreError> {
    let names = store.catalog_names_ever_seen()?;
    if !names.is_empty() {
        return Ok(names);
    }
    match crate::probe::stored(config) {
        Ok(c) => Ok(c
            .iter()
            .flat_map(Catalog::names)
            .map(String::from)
            .collect()),
        Err(e) => {
            tracing::warn!("{e}; tool names are kept as the transcripts recorded them");
            Ok(Vec::new())
        }
    }
}

/// Whether a file under a root of this kind is a transcript.
fn is_transcript(kind: TranscriptKind, name: &str) -> bool {
    match kind {
        TranscriptKind::ClaudeCode => name.ends_with(".jsonl"),
        TranscriptKind::Codex => {
            name.starts_with("rollout-")
                && (name.ends_with(".jsonl") || name.ends_with(&format!(".jsonl{COMPRESSED}")))
        }
    }
}

fn walk(
    root: &TranscriptRoot,
    index: usize,
    jobs: &mut Vec<Job>,
    keys: &mut HashSet<String>,
    summary: &mut IngestSummary,
) {
    match std::fs::metadata(&root.root) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => {
            let path = root.root.display().to_string();
            summary.errors.push((path, "not a directory".into()));
            return;
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            summary.missing_roots.push(root.root.display().to_string());
            return;
        }
        Err(e) => {
            summary
                .errors
                .push((root.root.display().to_string(), e.to_string()));
            return;
        }
    }
    for entry in WalkDir::new(&root.root).sort_by_file_name() {
        let entry = match entry {
            Ok(e) => e,
            Err(e) => {
                let path = e.path().unwrap_or(&root.root).display().to_string();
                let msg = e
                    .io_error()
                    .map_or_else(|| e.to_string(), |io| io.to_string());
                summary.errors.push((path, msg));
                continue;
            }
        };
        if !entry.file_type().is_file() {
            continue;
        }
        let name = entry.file_name().to_string_lossy();
        if !is_transcript(root.kind, &name) {
            continue;
        }
        let compressed = name.ends_with(COMPRESSED);
        // Codex keeps one representation; while it compresses, both exist and the plain one wins.
        if compressed && entry.path().with_extension("").exists() {
            continue;
        }
        let key = entry.path().display().to_string();
        if !keys.insert(key.clone()) {
            continue;
        }
        match entry.metadata() {
            Ok(m) => jobs.push(Job {
                path: entry.path().to_path_buf(),
                key,
                kind: root.kind,
                root: index,
                size: m.len(),
                mtime_ns: m
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                    .map_or(0, |d| d.as_nanos() as i64),
                compressed,
            }),
            Err(e) => summary.errors.push((key, e.to_string())),
        }
    }
}

enum FileError {
    Io(std::io::Error),
    Store(StoreError),
}

impl From<std::io::Error> for FileError {
    fn from(e: std::io::Error) -> Self {
        FileError::Io(e)
    }
}

struct FileCtx<'a> {
    job: &'a Job,
    prev: Option<&'a FileRow>,
    names: &'a Names,
    now: OffsetDateTime,
    keep_from: Option<&'a str>,
}

fn ingest_file(
    store: &mut Store,
    ctx: &FileCtx,
    pending: &mut HashSet<String>,
    bar: &Bar,
    summary: &mut IngestSummary,
) -> Result<(), FileError> {
    let job = ctx.job;
    let mut file = File::open(&job.path)?;
    let (mut start, mut lineno, mut restart) = (0, 0, false);
    let (mut calls_before, mut skipped_before) = (0, 0);
    if job.compressed {
        // A compressed rollout is written whole (Codex replaces the plain file with it), so a
        // changed one is read again from the start; calls already recorded count as duplicates.
        restart = ctx.prev.is_some();
    } else if let Some(p) = ctx.prev {
        let same = job.size >= p.offset
            && reader::head_hash(&mut file, HEAD_BYTES.min(p.offset))? == p.head_hash;
        if same {
            (start, lineno, calls_before, skipped_before) = (p.offset, p.lines, p.calls, p.skipped);
        } else {
            restart = true;
        }
    }
    let adapter_name = job.kind.as_str();
    let fallback_ts =
        clock::fmt(OffsetDateTime::UNIX_EPOCH + time::Duration::nanoseconds(job.mtime_ns));
    let stem = stem_of(&job.path);
    let mut adapter: Box<dyn Adapter + '_> = match job.kind {
        TranscriptKind::ClaudeCode => Box::new(ClaudeCode::new(ctx.names, &stem, &fallback_ts)),
        TranscriptKind::Codex => Box::new(Codex::new(ctx.names, &stem, &fallback_ts)),
    };
    let mut malformed: Option<Malformed> = None;
    let mut bad = |lineno: u64, reason: &str| {
        let msg = format!("{}:{lineno}: {reason}", job.key);
        tracing::debug!("{msg}");
        let m = malformed.get_or_insert_with(|| Malformed {
            path: job.key.clone(),
            count: 0,
            first: msg,
        });
        m.count += 1;
    };
    let mut decoder;
    let (input, read_to): (&mut dyn Read, u64) = if job.compressed {
        decoder = zstd::stream::read::Decoder::new(&file)?;
        (&mut decoder, u64::MAX)
    } else {
        file.seek(SeekFrom::Start(start))?;
        (&mut file, job.size)
    };
    let mut parse = FileParse::new(adapter.as_mut(), pending, lineno);
    let end = parse
        .read(input, (start, read_to), &mut bad, &mut |n| {
            if !job.compressed {
                bar.inc(n);
            }
        })
        .map_err(|e| match job.compressed {
            true => std::io::Error::new(e.kind(), format!("cannot decompress (zstd): {e}")),
            false => e,
        })?;
    if job.compressed {
        bar.inc(job.size);
    }
    let lineno = parse.lineno;
    let mut pairing = std::mem::take(&mut parse.pairing);
    let skipped = malformed.as_ref().map_or(0, |m| m.count);
    let mut batch = FileBatch {
        restart,
        abort_pending: pairing.abort.then_some(Status::Aborted),
        pending: pairing.take_open(),
        calls: std::mem::take(&mut pairing.done),
        ..FileBatch::default()
    };
    if let Some(keep_from) = ctx.keep_from {
        let before = batch.calls.len() + batch.pending.len();
        batch.calls.retain(|c| c.ts.as_str() >= keep_from);
        batch.pending.retain(|c| c.ts.as_str() >= keep_from);
        summary.past_horizon += (before - batch.calls.len() - batch.pending.len()) as u64;
    }
    for c in &batch.pending {
        pending.insert(c.call_id().to_string());
    }
    batch.resolved = pairing
        .resolved
        .into_iter()
        .map(|(id, status, tool, ms)| Resolution {
            source_key: format!("{adapter_name}:{id}"),
            status,
            tool,
            ms,
        })
        .collect();
    batch.file = Some(FileRow {
        path: job.key.clone(),
        adapter: adapter_name.to_string(),
        offset: end,
        size: job.size,
        mtime_ns: job.mtime_ns,
        // Of the file as stored (compressed ones are never resumed, so any stable hash does).
        head_hash: reader::head_hash(&mut file, HEAD_BYTES.min(end))?,
        lines: lineno,
        calls: calls_before,
        skipped: skipped_before + skipped,
        ingested_at: clock::fmt(ctx.now),
    });
    let counts = store.write_ingest_batch(&batch).map_err(FileError::Store)?;
    summary.files_read += 1;
    summary.bytes += job.size - start;
    summary.new_calls += counts.new;
    summary.duplicates += counts.duplicates + pairing.repeats;
    summary.merged += counts.merged;
    summary.pending += counts.pending;
    summary.skipped_lines += skipped;
    summary.malformed.extend(malformed);
    Ok(())
}

fn stem_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy())
        .map(|n| {
            let n = n.strip_suffix(COMPRESSED).unwrap_or(&n);
            n.strip_suffix(".jsonl").unwrap_or(n).to_string()
        })
        .unwrap_or_default()
}
