//! Headless logins against the fake authorization server (`fake_as`), one fault each, with the
//! message a user sees; and the refresh of stored tokens.

use std::sync::{Arc, Mutex};

use crate::auth::fake_as::*;
use crate::auth::*;

#[tokio::test]
async fn a_headless_login_stores_private_tokens_and_refreshes() {
    let dir = tempfile::tempdir().unwrap();
    let t = login_with(Knobs::default(), dir.path()).await.unwrap();
    assert_eq!(t.access_token, "tok-1");
    assert_eq!(t.scope.as_deref(), Some("read"));
    let loaded = store::load(dir.path(), &t.resource).unwrap();
    let again = refresh::refresh(dir.path(), &loaded).await.unwrap();
    assert_eq!(again.refresh_token.as_deref(), Some("ref-1"));
}

#[tokio::test]
async fn bad_metadata_and_redirects_are_refused_with_a_message() {
    let m = fails(Knobs {
        issuer: Some("https://evil.example".into()),
        ..Default::default()
    })
    .await;
    assert!(m.starts_with("server \"x\": authorization server metadata says issuer https://evil.example but was found for http://127.0.0.1:"), "{m}");
    let m = fails(Knobs {
        resource: Some("https://elsewhere.example/mcp".into()),
        ..Default::default()
    })
    .await;
    assert!(m.starts_with("server \"x\": protected-resource metadata names resource https://elsewhere.example/mcp for server URL http://127.0.0.1:"), "{m}");
    let m = fails(Knobs {
        prm_body: Some("{not json".into()),
        ..Default::default()
    })
    .await;
    assert!(
        m.contains("protected-resource metadata at http://127.0.0.1:")
            && m.contains("is malformed"),
        "{m}"
    );
    let m = fails(Knobs {
        refuse_registration: true,
        ..Default::default()
    })
    .await;
    assert!(
        m.starts_with("server \"x\": registration refused: http://127.0.0.1:")
            && m.ends_with("answered HTTP 403: access_denied: registration is closed"),
        "{m}"
    );
    let m = fails(Knobs {
        state: Some("forged".into()),
        ..Default::default()
    })
    .await;
    assert_eq!(
        m,
        "server \"x\": the authorization redirect carried a state that is not this login's (a forged or stale redirect); nothing was stored"
    );
    let m = fails(Knobs {
        iss: Some("https://evil.example".into()),
        ..Default::default()
    })
    .await;
    assert!(m.starts_with("server \"x\": the authorization redirect came from issuer https://evil.example, not http://127.0.0.1:"), "{m}");
    let m = fails(Knobs {
        iss: Some(String::new()),
        ..Default::default()
    })
    .await;
    assert!(m.contains("carried no `iss` although"), "{m}");
    let m = fails(Knobs {
        token_status: Some(500),
        ..Default::default()
    })
    .await;
    assert!(
        m.starts_with("server \"x\": the token endpoint http://127.0.0.1:")
            && m.contains("/token answered HTTP 500"),
        "{m}"
    );
    let m = fails(Knobs {
        never_approve: true,
        ..Default::default()
    })
    .await;
    assert!(
        m.contains("the authorization endpoint answered HTTP 200 without approving"),
        "{m}"
    );
}

#[tokio::test]
async fn missing_metadata_and_a_down_token_endpoint_are_named() {
    let dir = tempfile::tempdir().unwrap();
    // Nothing listens on the reserved port of a closed listener.
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let e = flow::login(
        flow::Login {
            url: &url,
            oauth: &OAuthConfig::default(),
            dir: dir.path(),
            challenge: None,
            previous_scope: None,
            wait: std::time::Duration::from_secs(1),
            headless: true,
        },
        &|_| {},
    )
    .await
    .unwrap_err()
    .to_string();
    assert!(
        e.starts_with("protected-resource metadata at http://127.0.0.1:")
            && e.contains("is unreachable"),
        "{e}"
    );
    let stored = stored(&format!("http://127.0.0.1:{port}"), None);
    let e = refresh::refresh(dir.path(), &stored)
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.starts_with(&format!(
            "the token endpoint http://127.0.0.1:{port}/token is unreachable"
        )),
        "{e}"
    );
}

#[tokio::test]
async fn an_expired_refresh_token_asks_for_a_new_login() {
    let dir = tempfile::tempdir().unwrap();
    let base = fake(Knobs {
        token_status: Some(400),
        ..Default::default()
    })
    .await;
    let stored = stored(&base, Some(0));
    let e = Failed {
        server: "x".into(),
        why: refresh::refresh(dir.path(), &stored).await.unwrap_err(),
    }
    .to_string();
    assert_eq!(
        e,
        format!(
            "server \"x\": the refresh token was refused ({base}/token answered HTTP 400: invalid_grant: refresh token expired); run `mws login` again"
        )
    );
    assert!(!store::path(dir.path()).exists(), "no tokens were written");
}

#[test]
fn pkce_s256_is_the_unpadded_base64url_of_sha256() {
    // Computed independently with Python: base64url(hashlib.sha256(v)) without padding.
    assert_eq!(
        flow::challenge_s256("dBjftJeZ4CVP-mJ92K9qXrIQlk6M7OnrYO9FrKj4Y0Q"),
        "N4zMLKMITgOHYl1BKxQGwdhw5pN9oS255MgREXBCGxA"
    );
}

/// Each URL a login contacts, on plain http off loopback, is refused by name before the login
/// sends anything to any of the later endpoints.
#[tokio::test]
async fn every_login_url_on_plain_http_off_loopback_is_refused_before_any_secret_moves() {
    for (key, role) in [
        ("resource_metadata", "protected-resource metadata"),
        ("registration_endpoint", "registration endpoint"),
        ("authorization_endpoint", "authorization endpoint"),
        ("token_endpoint", "token endpoint"),
    ] {
        let hits = Arc::new(Mutex::new(Vec::new()));
        let m = fails(Knobs {
            plain: Some(key),
            hits: hits.clone(),
            ..Default::default()
        })
        .await;
        assert_eq!(
            m,
            format!(
                "server \"x\": refusing the {role} {PLAIN}: it is plain http to a host that is \
                 not loopback, and a login would send a secret (a code, a verifier, a client \
                 secret or a token) there in clear; the server must use https"
            )
        );
        assert!(
            hits.lock().unwrap().is_empty(),
            "{key}: {:?}",
            hits.lock().unwrap()
        );
    }
}

/// A token endpoint that accepts the connection and never answers: "did not answer".
#[tokio::test]
async fn a_token_endpoint_that_never_answers_did_not_answer() {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://127.0.0.1:{}/token", l.local_addr().unwrap().port());
    let held = tokio::spawn(async move {
        let mut open = Vec::new();
        while let Ok((c, _)) = l.accept().await {
            open.push(c);
        }
    });
    let http = reqwest::Client::builder()
        .timeout(std::time::Duration::from_millis(300))
        .build()
        .unwrap();
    let client = register::Client {
        client_id: "cid".into(),
        client_secret: None,
        auth_method: "none".into(),
    };
    let (_, e) = token::request(&http, &url, &client, vec![("grant_type", "x".into())])
        .await
        .unwrap_err();
    held.abort();
    let m = e.to_string();
    assert!(
        m.starts_with(&format!("the token endpoint {url} did not answer within ")),
        "{m}"
    );
}

/// Two refreshes of the same tokens at once (two mws processes): one asks the token endpoint,
/// the other takes what it stored.
#[tokio::test]
async fn concurrent_refreshes_ask_the_token_endpoint_once() {
    let dir = tempfile::tempdir().unwrap();
    let hits = Arc::new(Mutex::new(Vec::new()));
    let t = login_with(
        Knobs {
            hits: hits.clone(),
            ..Default::default()
        },
        dir.path(),
    )
    .await
    .unwrap();
    let (a, b) = tokio::join!(
        refresh::refresh(dir.path(), &t),
        refresh::refresh(dir.path(), &t)
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.access_token, "tok-2");
    assert_eq!(b.access_token, "tok-2");
    let tokens = hits
        .lock()
        .unwrap()
        .iter()
        .filter(|h| **h == "/token")
        .count();
    assert_eq!(tokens, 2, "the login's exchange and one refresh");
}
