//! Table tests for `guard_call`: each kind of bad argument and bad schema, and the text a model
//! is shown.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{Guard, MAX_SCHEMA_BYTES, slim};
use crate::catalog::Catalog;
use crate::config::Validation;
use crate::upstream::{CatalogSnapshot, CatalogSource};

fn snap(version: u64, schema: Value) -> CatalogSnapshot {
    CatalogSnapshot {
        catalog: Arc::new(Catalog::new(vec![
            json!({"name": "t", "inputSchema": schema}),
        ])),
        source: CatalogSource::Live,
        version,
    }
}

fn sum_schema() -> Value {
    json!({
        "type": "object",
        "description": "prose the refusal leaves out",
        "properties": {
            "a": {"type": "integer", "description": "first"},
            "description": {"type": "string"},
            "opts": {"type": "object", "properties": {"deep": {"type": "boolean"}}},
        },
        "required": ["a"],
        "additionalProperties": false,
    })
}

/// The refusal text for `args`, or `None` when the call may go.
fn check(mode: Validation, schema: Value, args: Value) -> Option<String> {
    let guard = Guard::new(&crate::config::Config::default());
    let r = guard.check(
        mode,
        &snap(1, schema),
        "t",
        &json!({"name": "t", "arguments": args}),
    )?;
    assert_eq!(r["isError"], json!(true));
    Some(r["content"][0]["text"].as_str().unwrap().to_string())
}

#[test]
fn each_wrong_kind_of_argument_is_named_with_its_place() {
    let cases = [
        (
            json!({"a": "1"}),
            "- at /a: the value is not of type \"integer\" (found string \"1\")",
        ),
        (
            json!({}),
            "- at (arguments): \"a\" is a required property (found missing)",
        ),
        (
            json!({"a": 1, "b": 2}),
            "- at (arguments): Additional properties are not allowed ('b' was unexpected) \
             (found properties the schema does not allow)",
        ),
        (
            json!("a=1"),
            "- at (arguments): the value is not of type \"object\" (found string",
        ),
        (
            json!({"a": 1, "opts": {"deep": "yes"}}),
            "- at /opts/deep: the value is not of type \"boolean\"",
        ),
        (
            json!({"a": "x".repeat(5_000_000)}),
            "- at /a: the value is not of type \"integer\" (found a long string)",
        ),
    ];
    for (args, want) in cases {
        let text = check(Validation::Enforce, sum_schema(), args).expect("refused");
        assert!(text.starts_with("invalid arguments for t: "), "{text}");
        assert!(text.contains(want), "want {want:?} in:\n{text}");
        assert!(
            text.len() < 2_000,
            "the refusal stays short: {} bytes",
            text.len()
        );
        let schema = text.split_once("the input schema:\n").unwrap().1;
        let shown: Value = serde_json::from_str(schema).unwrap();
        assert_eq!(shown, slim(&sum_schema(), false));
    }
}

#[test]
fn a_valid_call_or_a_missing_arguments_object_passes() {
    assert_eq!(
        check(Validation::Enforce, sum_schema(), json!({"a": 2})),
        None
    );
    let open = json!({"type": "object", "properties": {"q": {"type": "string"}}});
    let guard = Guard::new(&crate::config::Config::default());
    assert!(
        guard
            .check(
                Validation::Enforce,
                &snap(1, open),
                "t",
                &json!({"name": "t"})
            )
            .is_none()
    );
}

#[test]
fn warn_and_off_send_an_invalid_call() {
    assert_eq!(
        check(Validation::Warn, sum_schema(), json!({"a": "1"})),
        None
    );
    assert_eq!(
        check(Validation::Off, sum_schema(), json!({"a": "1"})),
        None
    );
}

#[test]
fn slim_drops_prose_but_keeps_a_property_named_description() {
    let s = slim(&sum_schema(), false);
    assert_eq!(s.get("description"), None);
    assert_eq!(s["properties"]["a"], json!({"type": "integer"}));
    assert_eq!(s["properties"]["description"], json!({"type": "string"}));
}

#[test]
fn a_huge_schema_is_shown_as_its_outline() {
    let mut props = serde_json::Map::new();
    for i in 0..400 {
        props.insert(
            format!("p{i}"),
            json!({"type": "string", "enum": ["one", "two", "three"]}),
        );
    }
    let schema = json!({"type": "object", "properties": props, "required": ["p0"]});
    let text = check(Validation::Enforce, schema, json!({})).unwrap();
    assert!(text.contains("outline"), "{text}");
    assert!(text.len() < MAX_SCHEMA_BYTES * 3, "{} bytes", text.len());
    assert!(text.contains(r#""p399":{"type":"string"}"#), "{text}");
}

#[test]
fn a_schema_that_cannot_be_compiled_never_blocks_its_tool() {
    let bad = [
        json!({"type": "no-such-type"}),
        json!({"$schema": "https://example.invalid/unknown-dialect", "type": "object"}),
        json!({"$ref": "https://example.invalid/elsewhere.json"}),
        json!({"type": "object", "properties": {"a": {"pattern": "(unclosed"}}}),
    ];
    for schema in bad {
        assert!(super::compile(&schema).is_err(), "{schema}");
        assert_eq!(check(Validation::Enforce, schema, json!({"a": 1})), None);
    }
}

#[test]
fn a_recursive_schema_checks_nested_values() {
    let schema = json!({
        "$defs": {"node": {"type": "object", "properties": {"kids": {
            "type": "array", "items": {"$ref": "#/$defs/node"}}, "v": {"type": "integer"}}}},
        "$ref": "#/$defs/node",
    });
    let text = check(
        Validation::Enforce,
        schema.clone(),
        json!({"kids": [{"kids": [{"v": "x"}]}]}),
    )
    .unwrap();
    assert!(text.contains("- at /kids/0/kids/0/v: "), "{text}");
    assert_eq!(
        check(Validation::Enforce, schema, json!({"kids": [{"v": 1}]})),
        None
    );
    let cycle = json!({"$ref": "#"});
    let _ = check(Validation::Enforce, cycle, json!({"a": 1}));
}

#[test]
fn validators_follow_the_catalog_version() {
    let guard = Guard::new(&crate::config::Config::default());
    let call = json!({"name": "t", "arguments": {"a": "1"}});
    assert!(
        guard
            .check(Validation::Enforce, &snap(1, sum_schema()), "t", &call)
            .is_some()
    );
    let loose = json!({"type": "object"});
    assert!(
        guard
            .check(Validation::Enforce, &snap(2, loose), "t", &call)
            .is_none()
    );
}

#[test]
fn deeply_nested_arguments_are_checked_without_trouble() {
    let schema = json!({
        "$defs": {"node": {"type": "object", "properties": {"kids": {
            "type": "array", "items": {"$ref": "#/$defs/node"}}, "v": {"type": "integer"}}}},
        "$ref": "#/$defs/node",
    });
    let mut deep = json!({"v": "x"});
    for _ in 0..120 {
        deep = json!({"kids": [deep]});
    }
    let text = check(Validation::Enforce, schema, deep).unwrap();
    let place = format!("- at {}/v: ", "/kids/0".repeat(120));
    assert!(text.contains(&place), "{text}");
}

#[test]
fn many_problems_are_counted_not_listed() {
    let schema = json!({"type": "object", "properties": {"xs": {"type": "array", "items": {"type": "integer"}}}});
    let xs: Vec<String> = (0..100_000).map(|i| i.to_string()).collect();
    let text = check(Validation::Enforce, schema, json!({"xs": xs})).unwrap();
    assert_eq!(
        text.matches("\n- at /xs/").count(),
        super::MAX_PROBLEMS,
        "{text}"
    );
    assert!(text.contains("- and 99992 more problem(s)"), "{text}");
}

/// A null argument the schema does not require counts as omitted (sent as is); a required one
/// that is null is still refused.
#[test]
fn an_optional_null_argument_is_an_omitted_one() {
    let e = Validation::Enforce;
    assert_eq!(
        check(e, sum_schema(), json!({"a": 1, "description": null})),
        None
    );
    assert_eq!(check(e, sum_schema(), json!({"a": 1, "opts": null})), None);
    let msg = check(e, sum_schema(), json!({"a": null})).expect("a required null is refused");
    assert!(msg.contains("/a") || msg.contains("\"a\""), "{msg}");
}
