//! Held listings as data: what a session lists after promotions, new tools, vanished tools,
//! changed definitions, idling and eviction.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::*;
use crate::config::{Config, Listing};
use crate::server::proxy::tools_list::listed_tools;

fn tool(name: &str, description: &str) -> Value {
    json!({"name": name, "description": description, "inputSchema": {"type": "object"},
           "annotations": {"readOnlyHint": true}})
}

fn catalog(tools: &[Value]) -> Catalog {
    Catalog::new(tools.to_vec())
}

fn config() -> Config {
    Config {
        listing: Listing::WorkingSet,
        ..Config::default()
    }
}

/// The listing a new session gets of `catalog` with `working_set`.
fn fresh(catalog: &Catalog, working_set: &[&str], config: &Config) -> Arc<Value> {
    let ws: Vec<String> = working_set.iter().map(|s| s.to_string()).collect();
    Arc::new(json!({"tools": listed_tools(catalog, &ws, config)}))
}

fn names(listing: &Value) -> Vec<String> {
    listing["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

fn key(id: &str) -> SessionKey {
    SessionKey::of(Some(id), None)
}

#[test]
fn a_listed_session_keeps_its_listing_through_a_promotion_and_new_tools() {
    let config = config();
    let held = HeldListings::default();
    let now = Instant::now();
    let v1 = catalog(&[tool("a", "A."), tool("b", "B.")]);
    let first = fresh(&v1, &["a"], &config);
    let got = held.listing(&key("s1"), &v1, 1, &first, &config, now);
    assert_eq!(
        names(&got),
        [
            "search_tools",
            "call_tool",
            "call_read_only_tool",
            "run_script",
            "a"
        ]
    );

    // A promotion and a new server's tool: a new session sees both, the first one neither.
    let v2 = catalog(&[tool("a", "A."), tool("b", "B."), tool("c", "C.")]);
    let promoted = fresh(&v2, &["b", "a", "c"], &config);
    assert!(!held.announces(&key("s1"), &v2, 2, &config, now));
    let again = held.listing(&key("s1"), &v2, 2, &promoted, &config, now);
    assert_eq!(*again, *first, "same names, definitions and order");
    let new = held.listing(&key("s2"), &v2, 2, &promoted, &config, now);
    assert_eq!(names(&new)[4..], ["b", "a", "c"]);
    // Listing many times changes nothing.
    for _ in 0..100 {
        assert_eq!(
            *held.listing(&key("s1"), &v2, 2, &promoted, &config, now),
            *first
        );
    }
    assert_eq!(held.len(), 2);
}

#[test]
fn a_held_tool_that_vanishes_is_dropped_and_announced_once() {
    let config = config();
    let held = HeldListings::default();
    let now = Instant::now();
    let v1 = catalog(&[tool("a", "A."), tool("b", "B.")]);
    let first = fresh(&v1, &["a", "b"], &config);
    held.listing(&key("s"), &v1, 1, &first, &config, now);

    let v2 = catalog(&[tool("b", "B.")]);
    assert!(held.announces(&key("s"), &v2, 2, &config, now));
    assert!(
        !held.announces(&key("s"), &v2, 2, &config, now),
        "told once"
    );
    let got = held.listing(
        &key("s"),
        &v2,
        2,
        &fresh(&v2, &["b"], &config),
        &config,
        now,
    );
    assert_eq!(names(&got)[4..], ["b"]);
    // The meta-tools stay as first listed, though their description counts the catalog.
    assert_eq!(got["tools"][0], first["tools"][0]);

    // Back (its server restarted with it): listed again in its place, and announced.
    let v3 = catalog(&[tool("a", "A."), tool("b", "B.")]);
    assert!(held.announces(&key("s"), &v3, 3, &config, now));
    let got = held.listing(&key("s"), &v3, 3, &fresh(&v3, &[], &config), &config, now);
    assert_eq!(*got, *first);
}

#[test]
fn a_definition_the_check_let_through_is_shown_in_place() {
    let config = config();
    let held = HeldListings::default();
    let now = Instant::now();
    let v1 = catalog(&[tool("a", "A."), tool("b", "B.")]);
    let first = fresh(&v1, &["a", "b"], &config);
    held.listing(&key("s"), &v1, 1, &first, &config, now);
    let v2 = catalog(&[tool("a", "A, now better."), tool("b", "B.")]);
    assert!(held.announces(&key("s"), &v2, 2, &config, now));
    let got = held.listing(&key("s"), &v2, 2, &first, &config, now);
    assert_eq!(names(&got)[4..], ["a", "b"]);
    assert_eq!(got["tools"][4]["description"], "A, now better.");
}

#[test]
fn a_tool_the_policy_now_denies_is_dropped() {
    let mut config = config();
    config.policy.read_only = crate::config::ReadOnly::All(true);
    let held = HeldListings::default();
    let now = Instant::now();
    let v1 = catalog(&[tool("a", "A."), tool("b", "B.")]);
    let first = fresh(&v1, &["a", "b"], &config);
    held.listing(&key("s"), &v1, 1, &first, &config, now);
    let writes = json!({"name": "a", "description": "A.", "inputSchema": {"type": "object"}});
    let v2 = catalog(&[writes, tool("b", "B.")]);
    assert!(held.announces(&key("s"), &v2, 2, &config, now));
    let got = held.listing(&key("s"), &v2, 2, &first, &config, now);
    assert_eq!(names(&got)[2..], ["call_read_only_tool", "run_script", "b"]);
}

#[test]
fn a_session_that_has_not_listed_is_told_and_a_listing_without_catalog_is_not_held() {
    let config = config();
    let held = HeldListings::default();
    let now = Instant::now();
    let empty = catalog(&[]);
    assert!(held.announces(&key("s"), &empty, 1, &config, now));
    let down = fresh(&empty, &["a"], &config);
    held.listing(&key("s"), &empty, 1, &down, &config, now);
    assert!(
        held.is_empty(),
        "the upstream was not there yet: nothing to hold"
    );
    let v2 = catalog(&[tool("a", "A.")]);
    let got = held.listing(
        &key("s"),
        &v2,
        2,
        &fresh(&v2, &["a"], &config),
        &config,
        now,
    );
    assert_eq!(names(&got)[4..], ["a"]);
}

#[test]
fn a_stateless_session_idles_out_unless_it_calls() {
    let config = config();
    let held = HeldListings::default();
    let start = Instant::now();
    let stateless = SessionKey::of(None, Some("claude-code"));
    let v1 = catalog(&[tool("a", "A."), tool("b", "B.")]);
    let first = fresh(&v1, &["a"], &config);
    held.listing(&stateless, &v1, 1, &first, &config, start);
    let promoted = fresh(&v1, &["b"], &config);
    // Calls keep it: each is well within the gap of the one before.
    let step = STATELESS_SESSION_GAP / 2;
    let mut now = start;
    for _ in 0..4 {
        now += step;
        held.touch(&stateless, now);
    }
    assert_eq!(
        *held.listing(&stateless, &v1, 1, &promoted, &config, now),
        *first
    );
    // Silent for longer than the gap: a new session, with the new listing.
    let later = now + STATELESS_SESSION_GAP + Duration::from_secs(1);
    assert!(held.announces(&stateless, &v1, 1, &config, later));
    assert_eq!(
        *held.listing(&stateless, &v1, 1, &promoted, &config, later),
        *promoted
    );
}

#[test]
fn thousands_of_sessions_keep_at_most_the_cap_and_the_oldest_goes_first() {
    let config = config();
    let held = HeldListings::default();
    let start = Instant::now();
    let v1 = catalog(&[tool("a", "A."), tool("b", "B.")]);
    let first = fresh(&v1, &["a"], &config);
    for i in 0..MAX_HELD_LISTINGS + 10 {
        let at = start + Duration::from_millis(i as u64);
        held.listing(&key(&format!("s{i}")), &v1, 1, &first, &config, at);
    }
    assert_eq!(held.len(), MAX_HELD_LISTINGS);
    // The ten oldest were evicted: such a session lists as a new one.
    let promoted = fresh(&v1, &["b"], &config);
    let later = start + Duration::from_secs(60);
    assert_eq!(
        *held.listing(&key("s0"), &v1, 1, &promoted, &config, later),
        *promoted
    );
    let kept = format!("s{}", MAX_HELD_LISTINGS + 9);
    assert_eq!(
        *held.listing(&key(&kept), &v1, 1, &promoted, &config, later),
        *first
    );
    assert_eq!(held.len(), MAX_HELD_LISTINGS);
    // Ended sessions free their entry.
    held.forget(&key(&kept));
    assert_eq!(held.len(), MAX_HELD_LISTINGS - 1);
}

#[test]
fn sessions_that_listed_the_same_listing_share_it() {
    let config = config();
    let held = HeldListings::default();
    let now = Instant::now();
    let v1 = catalog(&[tool("a", "A."), tool("b", "B.")]);
    let first = fresh(&v1, &["a", "b"], &config);
    held.listing(&key("s1"), &v1, 1, &first, &config, now);
    held.listing(&key("s2"), &v1, 1, &first, &config, now);
    let v2 = catalog(&[tool("b", "B.")]);
    let one = held.listing(&key("s1"), &v2, 2, &first, &config, now);
    let two = held.listing(&key("s2"), &v2, 2, &first, &config, now);
    assert!(Arc::ptr_eq(&one, &two));
}
