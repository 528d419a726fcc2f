//! Tests only: a fake authorization server and protected resource on loopback (axum), with knobs
//! for each fault, and helpers that run a headless login against it. Must not listen on anything
//! but loopback.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::json;

use crate::auth::*;

#[derive(Clone, Default)]
pub struct Knobs {
    /// Issuer in the metadata instead of the real one.
    pub issuer: Option<String>,
    /// `resource` in the protected-resource metadata instead of the server URL.
    pub resource: Option<String>,
    /// The protected-resource metadata body as is.
    pub prm_body: Option<String>,
    pub refuse_registration: bool,
    /// Registration refuses the redirect URI (RFC 7591 `invalid_redirect_uri`).
    pub refuse_redirect_registration: bool,
    /// `iss` in the redirect: None = correct, Some("") = omitted.
    pub iss: Option<String>,
    /// `state` in the redirect instead of the request's.
    pub state: Option<String>,
    pub token_status: Option<u16>,
    /// The authorization endpoint never redirects (a user who never approves).
    pub never_approve: bool,
    /// The only redirect URI registered for the client: the authorization (and token) endpoint
    /// refuses any other, with an error page (or, with `redirect_errors`, a redirect carrying
    /// `error=invalid_request`).
    pub registered_redirect: Option<String>,
    pub redirect_errors: bool,
    /// One URL of the login (`resource_metadata` in the challenge, or an endpoint of the
    /// metadata by its key) on plain http to a host that is not loopback.
    pub plain: Option<&'static str>,
    /// The paths of the registration, authorization and token requests that arrived.
    pub hits: Arc<Mutex<Vec<&'static str>>>,
    /// The `scope` of each authorization request.
    pub scopes_asked: Arc<Mutex<Vec<String>>>,
}

/// A plain-http URL off loopback: never contacted (nothing resolves `.test`).
pub const PLAIN: &str = "http://auth.example.test/x";

type S = Arc<(String, Knobs, Mutex<Vec<String>>)>;

/// The error body of a refused redirect URI.
const MISMATCH: &str = "redirect_uri does not match the registered redirect URIs";

/// Starts the fake; returns its base URL (the MCP endpoint is `<base>/mcp`).
pub async fn fake(knobs: Knobs) -> String {
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
            if s.1.refuse_redirect_registration {
                return (StatusCode::BAD_REQUEST, axum::Json(json!({"error": "invalid_redirect_uri", "error_description": "only https redirect URIs are accepted"}))).into_response();
            }
            (StatusCode::CREATED, axum::Json(json!({"client_id": "cid"}))).into_response()
        }))
        .route("/authorize", get(|State(s): State<S>, Query(q): Query<HashMap<String, String>>| async move {
            s.1.hits.lock().unwrap().push("/authorize");
            s.1.scopes_asked.lock().unwrap().push(q.get("scope").cloned().unwrap_or_default());
            if s.1.never_approve {
                return (StatusCode::OK, "log in here").into_response();
            }
            let mut to = url::Url::parse(&q["redirect_uri"]).unwrap();
            if s.1.registered_redirect.as_ref().is_some_and(|r| *r != q["redirect_uri"]) {
                if !s.1.redirect_errors {
                    let body = json!({"error": "invalid_request", "error_description": MISMATCH});
                    return (StatusCode::BAD_REQUEST, axum::Json(body)).into_response();
                }
                to.query_pairs_mut().append_pair("error", "invalid_request")
                    .append_pair("error_description", MISMATCH).append_pair("state", &q["state"]);
                return (StatusCode::FOUND, [(header::LOCATION, to.to_string())]).into_response();
            }
            s.2.lock().unwrap().push(q["code_challenge"].clone());
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
                if let Some(r) = &s.1.registered_redirect {
                    assert_eq!(&form["redirect_uri"], r);
                }
            }
            let n = s.1.hits.lock().unwrap().iter().filter(|h| **h == "/token").count();
            axum::Json(json!({"access_token": format!("tok-{n}"), "token_type": "Bearer", "expires_in": 60, "refresh_token": "ref-1"})).into_response()
        }))
        .with_state(st);
    tokio::spawn(async move { axum::serve(l, app).await.unwrap() });
    base
}

/// A headless login to a new fake with `oauth` and `previous_scope`.
pub async fn login_as(
    knobs: Knobs,
    dir: &std::path::Path,
    oauth: &OAuthConfig,
    previous_scope: Option<String>,
) -> Result<store::Tokens, AuthError> {
    let base = fake(knobs).await;
    let url = format!("{base}/mcp");
    login_to(&url, dir, oauth, previous_scope).await
}

/// A headless login to the server at `url`.
pub async fn login_to(
    url: &str,
    dir: &std::path::Path,
    oauth: &OAuthConfig,
    previous_scope: Option<String>,
) -> Result<store::Tokens, AuthError> {
    let l = flow::Login {
        url,
        oauth,
        dir,
        challenge: None,
        previous_scope,
        wait: std::time::Duration::from_secs(2),
        headless: true,
    };
    flow::login(l, &|_| {}).await
}

pub async fn login_with(knobs: Knobs, dir: &std::path::Path) -> Result<store::Tokens, AuthError> {
    login_as(knobs, dir, &OAuthConfig::default(), None).await
}

/// A login that must fail, as the user sees it (`server "x": ...`); checks nothing was written.
pub async fn fails_as(knobs: Knobs, oauth: &OAuthConfig) -> String {
    let dir = tempfile::tempdir().unwrap();
    let e = login_as(knobs, dir.path(), oauth, None).await.unwrap_err();
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0, "{e}");
    Failed {
        server: "x".into(),
        why: e,
    }
    .to_string()
}

pub async fn fails(knobs: Knobs) -> String {
    fails_as(knobs, &OAuthConfig::default()).await
}

/// Stored tokens for `base`'s fake, as a test writes them.
pub fn stored(base: &str, expires_at: Option<i64>) -> store::Tokens {
    store::Tokens {
        resource: format!("{base}/mcp"),
        issuer: base.to_string(),
        token_endpoint: format!("{base}/token"),
        client: register::Client {
            client_id: "c".into(),
            client_secret: None,
            auth_method: "none".into(),
        },
        access_token: "a".into(),
        refresh_token: Some("r".into()),
        expires_at,
        scope: None,
        issued_at: None,
        demanded_scope: None,
        refresh_refused: None,
    }
}
