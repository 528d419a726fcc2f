//! A fake authorization server and protected resource on loopback (axum), with knobs for each
//! fault; each test runs a headless login against it and checks the message a user sees.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::json;

use crate::auth::*;

#[derive(Clone, Default)]
struct Knobs {
    /// Issuer in the metadata instead of the real one.
    issuer: Option<String>,
    /// `resource` in the protected-resource metadata instead of the server URL.
    resource: Option<String>,
    /// The protected-resource metadata body as is.
    prm_body: Option<String>,
    refuse_registration: bool,
    /// `iss` in the redirect: None = correct, Some("") = omitted.
    iss: Option<String>,
    /// `state` in the redirect instead of the request's.
    state: Option<String>,
    token_status: Option<u16>,
    /// The authorization endpoint never redirects (a user who never approves).
    never_approve: bool,
    /// One URL of the login (`resource_metadata` in the challenge, or an endpoint of the
    /// metadata by its key) on plain http to a host that is not loopback.
    plain: Option<&'static str>,
    /// The paths of the registration, authorization and token requests that arrived.
    hits: Arc<Mutex<Vec<&'static str>>>,
}

/// A plain-http URL off loopback: never contacted (nothing resolves `.test`).
const PLAIN: &str = "http://auth.example.test/x";

type S = Arc<(String, Knobs, Mutex<Vec<String>>)>;

async fn fake(knobs: Knobs) -> String {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://127.0.0.1:{}", l.local_addr().unwrap().port());
    let st: S = Arc::new((base.clone(), knobs, Mutex::new(Vec::new())));
    let app = axum::Router::new()
        .route("/mcp", post(|State(s): State<S>| async move {
            let prm = match s.1.plain {
                Some("resource_metadata") => PLAIN.to_string(),
                _ => format!("{}/.well-known/oauth-protected-resource/mcp", s.0),
            };
            let h = format!("Bearer resource_metadata=\"{prm}\", scope=\"read\"");
            (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, h)]).into_response()
        }))
        .route("/.well-known/oauth-protected-resource/mcp", get(|State(s): State<S>| async move {
            if let Some(b) = &s.1.prm_body {
                return ([(header::CONTENT_TYPE, "application/json")], b.clone()).into_response();
            }
            let r = s.1.resource.clone().unwrap_or(format!("{}/mcp", s.0));
            axum::Json(json!({"resource": r, "authorization_servers": [s.0]})).into_response()
        }))
        .route("/.well-known/oauth-authorization-server", get(|State(s): State<S>| async move {
            let mut md = json!({
                "issuer": s.1.issuer.clone().unwrap_or(s.0.clone()),
                "authorization_endpoint": format!("{}/authorize", s.0),
                "token_endpoint": format!("{}/token", s.0),
                "registration_endpoint": format!("{}/register", s.0),
                "code_challenge_methods_supported": ["S256"],
                "authorization_response_iss_parameter_supported": true,
                "token_endpoint_auth_methods_supported": ["none"],
            });
            if let Some(key) = s.1.plain.filter(|k| k.ends_with("_endpoint")) {
                md[key] = json!(PLAIN);
            }
            axum::Json(md)
        }))
        .route("/register", post(|State(s): State<S>| async move {
            s.1.hits.lock().unwrap().push("/register");
            if s.1.refuse_registration {
                return (StatusCode::FORBIDDEN, axum::Json(json!({"error": "access_denied", "error_description": "registration is closed"}))).into_response();
            }
            (StatusCode::CREATED, axum::Json(json!({"client_id": "cid"}))).into_response()
        }))
        .route("/authorize", get(|State(s): State<S>, Query(q): Query<HashMap<String, String>>| async move {
            s.1.hits.lock().unwrap().push("/authorize");
            if s.1.never_approve {
                return (StatusCode::OK, "log in here").into_response();
            }
            s.2.lock().unwrap().push(q["code_challenge"].clone());
            let mut to = url::Url::parse(&q["redirect_uri"]).unwrap();
            to.query_pairs_mut().append_pair("code", "the-code")
                .append_pair("state", s.1.state.as_deref().unwrap_or(&q["state"]));
            match s.1.iss.as_deref() {
                None => { to.query_pairs_mut().append_pair("iss", &s.0); }
                Some("") => {}
                Some(i) => { to.query_pairs_mut().append_pair("iss", i); }
            }
            (StatusCode::FOUND, [(header::LOCATION, to.to_string())]).into_response()
        }))
        .route("/token", post(|State(s): State<S>, _h: HeaderMap, body: String| async move {
            s.1.hits.lock().unwrap().push("/token");
            if let Some(code) = s.1.token_status {
                return Response::builder().status(code).body(axum::body::Body::from(r#"{"error":"invalid_grant","error_description":"refresh token expired"}"#)).unwrap();
            }
            let form: HashMap<String, String> = url::form_urlencoded::parse(body.as_bytes()).into_owned().collect();
            if form["grant_type"] == "authorization_code" {
                let want = s.2.lock().unwrap().last().cloned().unwrap_or_default();
                assert_eq!(flow::challenge_s256(&form["code_verifier"]), want);
                assert!(form["resource"].ends_with("/mcp"));
            }
            let n = s.1.hits.lock().unwrap().iter().filter(|h| **h == "/token").count();
            axum::Json(json!({"access_token": format!("tok-{n}"), "token_type": "Bearer", "expires_in": 60, "refresh_token": "ref-1"})).into_response()
        }))
        .with_state(st);
    tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
    base
}

async fn login_with(knobs: Knobs, dir: &std::path::Path) -> Result<store::Tokens, AuthError> {
    let base = fake(knobs).await;
    let url = format!("{base}/mcp");
    let l = flow::Login {
        url: &url,
        oauth: &OAuthConfig::default(),
        dir,
        challenge: None,
        previous_scope: None,
        wait: std::time::Duration::from_secs(2),
        headless: true,
    };
    flow::login(l, &|_| {}).await
}

/// Runs a login that must fail; returns its message and checks nothing was written.
async fn fails(knobs: Knobs) -> String {
    let dir = tempfile::tempdir().unwrap();
    let e = login_with(knobs, dir.path()).await.unwrap_err();
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "{e}");
    Failed {
        server: "x".into(),
        why: e,
    }
    .to_string()
}

#[tokio::test]
async fn a_headless_login_stores_private_tokens_and_refreshes() {
    let dir = tempfile::tempdir().unwrap();
    let t = login_with(Knobs::default(), dir.path()).await.unwrap();
    assert_eq!(t.access_token, "tok-1");
    assert_eq!(t.scope.as_deref(), Some("read"));
    let loaded = store::load(dir.path(), &t.resource).unwrap();
    let again = flow::refresh(dir.path(), &loaded).await.unwrap();
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
    let stored = store::Tokens {
        resource: url.clone(),
        issuer: "i".into(),
        token_endpoint: format!("http://127.0.0.1:{port}/token"),
        client: register::Client {
            client_id: "c".into(),
            client_secret: None,
            auth_method: "none".into(),
        },
        access_token: "a".into(),
        refresh_token: Some("r".into()),
        expires_at: None,
        scope: None,
    };
    let e = flow::refresh(dir.path(), &stored)
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
    let stored = store::Tokens {
        resource: format!("{base}/mcp"),
        issuer: base.clone(),
        token_endpoint: format!("{base}/token"),
        client: register::Client {
            client_id: "c".into(),
            client_secret: None,
            auth_method: "none".into(),
        },
        access_token: "a".into(),
        refresh_token: Some("r".into()),
        expires_at: Some(0),
        scope: None,
    };
    let e = Failed {
        server: "x".into(),
        why: flow::refresh(dir.path(), &stored).await.unwrap_err(),
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

#[tokio::test]
async fn the_redirect_listener_times_out() {
    let l = loopback::bind().await.unwrap();
    let e = l
        .wait(std::time::Duration::from_millis(50))
        .await
        .unwrap_err();
    assert_eq!(
        Failed {
            server: "x".into(),
            why: e
        }
        .to_string(),
        "server \"x\": no redirect arrived within 0s (was the browser closed?); run `mws login` again"
    );
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
    let (a, b) = tokio::join!(flow::refresh(dir.path(), &t), flow::refresh(dir.path(), &t));
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
