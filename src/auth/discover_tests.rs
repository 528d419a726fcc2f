//! Parsing of challenges and the well-known URL lists, as tables.

use super::*;

#[test]
fn challenges_are_read() {
    let c = challenge(
        r#"Bearer error="insufficient_scope", scope="a b", resource_metadata="https://x/.well-known/oauth-protected-resource/mcp""#,
    );
    assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
    assert_eq!(c.scope.as_deref(), Some("a b"));
    assert_eq!(
        c.resource_metadata.as_deref(),
        Some("https://x/.well-known/oauth-protected-resource/mcp")
    );
    assert_eq!(challenge("Basic realm=x"), Challenge::default());
    assert_eq!(challenge("Bearer"), Challenge::default());
    assert_eq!(
        challenge("Bearer scope=read").scope.as_deref(),
        Some("read")
    );
}

#[test]
fn well_known_urls_in_spec_order() {
    let u = |s: &str| Url::parse(s).unwrap();
    let s = |v: Vec<Url>| v.into_iter().map(String::from).collect::<Vec<_>>();
    assert_eq!(
        s(resource_metadata_urls(&u(
            "https://a.example/public/mcp?x=1"
        ))),
        [
            "https://a.example/.well-known/oauth-protected-resource/public/mcp",
            "https://a.example/.well-known/oauth-protected-resource"
        ]
    );
    assert_eq!(
        s(server_metadata_urls(&u("https://auth.example/tenant1"))),
        [
            "https://auth.example/.well-known/oauth-authorization-server/tenant1",
            "https://auth.example/.well-known/openid-configuration/tenant1",
            "https://auth.example/tenant1/.well-known/openid-configuration",
        ]
    );
    assert_eq!(
        s(server_metadata_urls(&u("https://auth.example"))),
        [
            "https://auth.example/.well-known/oauth-authorization-server",
            "https://auth.example/.well-known/openid-configuration"
        ]
    );
}

#[test]
fn resources_match_by_origin_and_path_prefix() {
    let server = Url::parse("https://a.example/mcp").unwrap();
    for (resource, ok) in [
        ("https://a.example/mcp", true),
        ("https://a.example/", true),
        ("https://a.example", true),
        ("https://a.example/other", false),
        ("https://a.example/mc", false),
        ("https://b.example/mcp", false),
        ("not a url", false),
    ] {
        assert_eq!(resource_matches(resource, &server), ok, "{resource}");
    }
}
