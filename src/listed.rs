//! What is listed: the one rule for which upstream tools a client sees beside the meta-tools, and
//! where the working set it starts from is kept (the store's `working_set` table; `mws promote`
//! writes it, `working-set.json` is only an export of it). `mws serve` (through
//! `server::tools_list`), `mws report`, `mws search` and `mws doctor` all ask here. A tool the
//! config's `policy` excludes (`crate::policy`) is never listed nor searched. The rule is pure;
//! `stored_working_set` (and `stored_prior`, the usage counts search ranks with) read the
//! database and must not create, migrate or write it.

use std::borrow::Cow;
use std::collections::HashSet;
use std::sync::Arc;

use crate::catalog::Catalog;
use crate::catalog::exposed;
use crate::config::{Config, Listing, Promote};
use crate::policy;
pub use crate::promote::projects::{SetTool, WorkingSets};
use crate::store::{self, StoreError};

/// One listed upstream tool.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The upstream's own name: what the catalog holds, what a call is sent and logged under.
    pub upstream: String,
    /// The name clients see (`upstream__search_tools` for an upstream `search_tools`).
    pub shown: String,
}

impl Entry {
    /// Whether clients see the tool under another name than the upstream's.
    pub fn renamed(&self) -> bool {
        self.upstream != self.shown
    }
}

/// The listed upstream tools in listing order: each working-set tool present in `catalog`, in
/// working-set order, then config `pins` not already listed. Working-set and pin names are any
/// name of a tool (`exposed::catalog_name`): the upstream's, the one clients see (an
/// `upstream__search_tools` is taken for the upstream's `search_tools`), or the full
/// `<server>__<tool>` of a name mws shortened; a meta-named tool that cannot be shown (the upstream also has its
/// `upstream__` name) and a tool the policy excludes are left out.
pub fn entries(catalog: &Catalog, working_set: &[String], config: &Config) -> Vec<Entry> {
    let mut seen = HashSet::new();
    let rule = policy::Rule::new(&config.policy);
    working_set
        .iter()
        .chain(config.pins.iter())
        .map(|n| exposed::catalog_name(catalog, n))
        .filter(|n| catalog.contains(n))
        .filter(|n| rule.allows(catalog, n))
        .filter(|n| seen.insert(*n))
        .filter_map(|n| {
            let shown = match exposed::exposed_name(catalog, n)? {
                Cow::Borrowed(b) => b.to_string(),
                Cow::Owned(alias) => alias,
            };
            Some(Entry {
                upstream: n.to_string(),
                shown,
            })
        })
        .collect()
}

/// The listed upstream tools (no meta-tools) in listing order, by the names clients see.
pub fn names(catalog: &Catalog, working_set: &[String], config: &Config) -> Vec<String> {
    entries(catalog, working_set, config)
        .into_iter()
        .map(|e| e.shown)
        .collect()
}

/// Whether every upstream tool is listed directly (no meta-tools), and why, in words for the
/// report and the server instructions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mode {
    pub all: bool,
    pub why: String,
}

/// The listing mode (`config.listing`): `working-set` and `all` are what they say; `auto` lists
/// everything when the whole catalog costs fewer tokens than the meta-tools plus the working
/// set, or is under `listAllBelowTokens`. Token figures are of the `tools/list` result each way;
/// `None` where they were not counted (`server::tools_list::choose` says when). An empty catalog is
/// never "all": the meta-tools say the upstream is down.
pub fn mode(
    config: &Config,
    catalog_tools: usize,
    all_tokens: Option<usize>,
    working_set_tokens: Option<usize>,
) -> Mode {
    let m = |all: bool, why: String| Mode { all, why };
    let below = config.list_all_below_tokens as usize;
    match (config.listing, all_tokens, working_set_tokens) {
        (_, _, _) if catalog_tools == 0 => m(false, "no upstream catalog".into()),
        (Listing::WorkingSet, ..) => m(false, "listing is \"working-set\" in the config".into()),
        (Listing::All, ..) => m(true, "listing is \"all\" in the config".into()),
        (Listing::Auto, Some(a), _) if a < below => m(
            true,
            format!("the whole catalog is {a} tokens, under listAllBelowTokens ({below})"),
        ),
        (Listing::Auto, Some(a), Some(w)) if a < w => m(
            true,
            format!(
                "the whole catalog is {a} tokens, fewer than the meta-tools and the working set ({w})"
            ),
        ),
        (Listing::Auto, Some(a), Some(w)) => m(
            false,
            format!(
                "the meta-tools and the working set are {w} tokens, fewer than the whole catalog ({a})"
            ),
        ),
        (Listing::Auto, ..) => m(
            false,
            "the whole catalog is far larger than the meta-tools and the working set".into(),
        ),
    }
}

/// The tools search may find and `call_tool` may suggest: the catalog less what the policy
/// excludes.
pub fn searchable(catalog: &Arc<Catalog>, config: &Config) -> Arc<Catalog> {
    policy::allowed(catalog, &config.policy)
}

/// `searchable` for a borrowed catalog: what the meta-tools' descriptions and the server
/// instructions count and name.
pub fn searchable_view<'a>(catalog: &'a Catalog, config: &Config) -> Cow<'a, Catalog> {
    match policy::filtered(catalog, &config.policy) {
        Some(c) => Cow::Owned(c),
        None => Cow::Borrowed(catalog),
    }
}

/// How many of the catalog's tools the policy hides (`mws report`).
pub fn hidden_by_policy(catalog: &Catalog, config: &Config) -> usize {
    policy::hidden(catalog, &config.policy)
}

/// The working set a session of `project` lists: `WorkingSets::for_project`, the rule
/// (docs/working-set.md#per-project).
pub fn for_project(sets: &WorkingSets, project: Option<&str>, rules: &Promote) -> Vec<String> {
    sets.for_project(project, rules)
}

/// The working set as `mws promote` last wrote it: the `working_set` table of `stateDir/state.db`
/// in listing order, read-only. Empty when there is no database yet (nothing was promoted).
pub fn stored_working_set(config: &Config) -> Result<Vec<String>, StoreError> {
    let path = config.db_path();
    if !path.exists() {
        return Ok(Vec::new());
    }
    store::serve::read_working_set(&path).map_err(|error| StoreError::Sqlite { path, error })
}

/// The usage prior of search as the database holds it now: sessions with a successful call per
/// tool within the promotion window (`promote.windowDays`). Read-only; nothing is stored for it.
pub fn stored_prior(config: &Config) -> Result<crate::search::Prior, StoreError> {
    let path = config.db_path();
    let since = crate::promote::cutoff(crate::clock::now(), config.promote.window_days);
    store::serve::read_prior(&path, &since).map_err(|error| StoreError::Sqlite { path, error })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::promote::Why;
    use crate::store::Store;

    fn catalog(names: &[&str]) -> Catalog {
        Catalog::new(names.iter().map(|n| json!({"name": n})).collect())
    }

    fn check(catalog_names: &[&str], working_set: &[&str], pins: &[&str], want: &[&str]) {
        let config = Config {
            pins: pins.iter().map(|p| p.to_string()).collect(),
            ..Config::default()
        };
        let ws: Vec<String> = working_set.iter().map(|w| w.to_string()).collect();
        let got = names(&catalog(catalog_names), &ws, &config);
        assert_eq!(
            got, want,
            "catalog {catalog_names:?}, set {working_set:?}, pins {pins:?}"
        );
    }

    #[test]
    fn the_rule_as_data() {
        // Working-set order, then pins not yet listed; tools the upstream lacks are not listed.
        check(
            &["a", "b", "c"],
            &["b", "gone", "a"],
            &["c", "b"],
            &["b", "a", "c"],
        );
        // No catalog: nothing but the meta-tools.
        check(&[], &["a"], &["a"], &[]);
        // An upstream `search_tools` is shown (and may be named) as `upstream__search_tools`.
        check(
            &["search_tools", "x"],
            &["search_tools"],
            &[],
            &["upstream__search_tools"],
        );
        check(
            &["call_tool"],
            &["upstream__call_tool"],
            &[],
            &["upstream__call_tool"],
        );
        // The upstream also has that `upstream__` name: it keeps it; the meta-named one is hidden.
        check(
            &["search_tools", "upstream__search_tools"],
            &["search_tools", "upstream__search_tools"],
            &[],
            &["upstream__search_tools"],
        );
    }

    #[test]
    fn the_mode_rule_as_data() {
        let cfg = |listing, below| Config {
            listing,
            list_all_below_tokens: below,
            ..Config::default()
        };
        // (config, catalog tools, all tokens, working-set tokens, all?)
        let cases = [
            (cfg(Listing::Auto, 0), 22, Some(635), Some(706), true),
            (cfg(Listing::Auto, 0), 60, Some(6897), Some(332), false),
            (cfg(Listing::Auto, 0), 60, None, Some(332), false),
            (cfg(Listing::Auto, 8000), 60, Some(6897), Some(332), true),
            (cfg(Listing::Auto, 0), 0, Some(0), Some(332), false),
            (cfg(Listing::WorkingSet, 0), 22, Some(635), Some(706), false),
            (cfg(Listing::All, 0), 60, None, None, true),
            (cfg(Listing::All, 0), 0, None, None, false),
        ];
        for (c, n, a, w, want) in cases {
            let got = mode(&c, n, a, w);
            assert_eq!(
                got.all, want,
                "{:?} {n} {a:?} {w:?}: {}",
                c.listing, got.why
            );
        }
        assert_eq!(
            mode(&cfg(Listing::Auto, 0), 22, Some(635), Some(706)).why,
            "the whole catalog is 635 tokens, fewer than the meta-tools and the working set (706)"
        );
    }

    /// A pin (or a working-set name from a transcript) naming a shortened tool by its full
    /// `<server>__<tool>` lists it under its short name.
    #[test]
    fn a_full_name_lists_its_shortened_tool() {
        let long = "a_tool_with_a_name_long_enough_to_pass_the_clients_limit";
        let web = catalog(&[long, "b"]);
        let (naming, tools) = exposed::Naming::build(&[("web", &web)], 40);
        let c = Catalog::new(tools).with_real_names(naming.real_names());
        let config = Config {
            pins: vec![format!("web__{long}")],
            ..Config::default()
        };
        let short = c.by_real_name(&format!("web__{long}")).unwrap();
        assert_eq!(names(&c, &["web__b".into()], &config), ["web__b", short]);
    }

    #[test]
    fn entries_keep_the_upstream_name() {
        let e = entries(
            &catalog(&["search_tools", "a"]),
            &["a".into(), "search_tools".into()],
            &Config::default(),
        );
        assert!(!e[0].renamed());
        assert_eq!(
            (e[1].upstream.as_str(), e[1].renamed()),
            ("search_tools", true)
        );
    }

    /// Per project: the tools used everywhere, then the project's own; unknown projects and
    /// `perProject: false` get the user-wide set.
    #[test]
    fn a_project_lists_what_is_used_everywhere_and_its_own() {
        let t = |tool: &str, why, projects| SetTool {
            tool: tool.into(),
            why,
            projects,
        };
        let sets = WorkingSets {
            user: vec![
                t("sentry", Why::Promoted, Some(1)),
                t("git", Why::Promoted, Some(3)),
                t("pinned", Why::Pin, Some(0)),
                t("unattributed", Why::Promoted, Some(0)),
                t("browser", Why::Promoted, Some(1)),
                t("old_row", Why::Promoted, None),
                t("team_tool", Why::Team, Some(1)),
                // Used in one project, which does not list it (one session there, one where the
                // project is unknown): no project claims it, so it stays everywhere.
                t("unclaimed", Why::Promoted, Some(1)),
            ],
            projects: [
                (
                    "/w/api".to_string(),
                    vec!["sentry".to_string(), "git".into()],
                ),
                ("/w/web".to_string(), vec!["browser".to_string()]),
            ]
            .into(),
        };
        let rules = Promote::default();
        let everywhere = [
            "git",
            "pinned",
            "unattributed",
            "old_row",
            "team_tool",
            "unclaimed",
        ];
        let with = |extra: &[&str]| -> Vec<String> {
            everywhere
                .iter()
                .chain(extra)
                .map(|s| s.to_string())
                .collect()
        };
        assert_eq!(
            for_project(&sets, Some("/w/api"), &rules),
            with(&["sentry"])
        );
        assert_eq!(
            for_project(&sets, Some("/w/web"), &rules),
            with(&["browser"])
        );
        assert_eq!(for_project(&sets, Some("/w/notes"), &rules), with(&[]));
        let user: Vec<String> = sets.user.iter().map(|t| t.tool.clone()).collect();
        assert_eq!(for_project(&sets, None, &rules), user);
        let off = Promote {
            per_project: false,
            ..Promote::default()
        };
        assert_eq!(for_project(&sets, Some("/w/api"), &off), user);
        // everywhereProjects 1 (or 0): every promoted tool everywhere.
        let one = Promote {
            everywhere_projects: 0,
            ..Promote::default()
        };
        assert_eq!(for_project(&sets, Some("/w/notes"), &one), user);
    }

    #[test]
    fn the_stored_working_set_is_the_table_and_nothing_is_created() {
        let dir = tempfile::tempdir().unwrap();
        let config = Config {
            state_dir: dir.path().join("state"),
            ..Config::default()
        };
        assert!(stored_working_set(&config).unwrap().is_empty());
        assert!(
            !config.db_path().exists(),
            "a read must not create the database"
        );
        let store = Store::open(&config.db_path()).unwrap();
        store
            .conn()
            .execute_batch(
                "INSERT INTO working_set (tool, position, reason, since) VALUES
                 ('second', 2, 'promoted', 't'), ('first', 1, 'pin', 't')",
            )
            .unwrap();
        assert_eq!(stored_working_set(&config).unwrap(), ["first", "second"]);
    }
}
