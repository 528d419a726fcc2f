//! Logins that finish: a pre-registered client with an exact redirect URI (and the messages when
//! the authorization server refuses one), the scopes a step-up demanded asked for again, and a
//! refused refresh remembered instead of retried. Against the fake authorization server.

use std::os::unix::fs::PermissionsExt;

use crate::auth::fake_as::*;
use crate::auth::*;

/// A loopback port nothing listens on now (bound, then released).
fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

fn pre_registered(redirect_uri: Option<String>) -> OAuthConfig {
    OAuthConfig {
        client_id: Some("pre-registered".into()),
        redirect_uri,
        ..OAuthConfig::default()
    }
}

#[tokio::test]
async fn a_pre_registered_client_with_an_exact_redirect_uri_logs_in() {
    let registered = format!("http://127.0.0.1:{}/oauth/done", free_port());
    let knobs = || Knobs {
        registered_redirect: Some(registered.clone()),
        ..Knobs::default()
    };
    let dir = tempfile::tempdir().unwrap();
    let t = login_as(
        knobs(),
        dir.path(),
        &pre_registered(Some(registered.clone())),
        None,
    )
    .await
    .unwrap();
    assert_eq!(t.client.client_id, "pre-registered");
    assert_eq!(t.access_token, "tok-1");

    // Without the setting the port is random: the error page's text, the URI and the setting.
    let m = fails_as(knobs(), &pre_registered(None)).await;
    assert!(
        m.starts_with(
            "server \"x\": the authorization redirect never came: the authorization endpoint \
             answered HTTP 400 without approving: invalid_request: redirect_uri does not match \
             the registered redirect URIs; the redirect URI was http://127.0.0.1:"
        ) && m.ends_with(
            "/callback, on a random port; a client registered by hand whose authorization \
             server checks redirect URIs exactly needs `oauth.redirectUri` set to the registered \
             one"
        ),
        "{m}"
    );

    // A server that redirects back with the error instead.
    let other = format!("http://127.0.0.1:{}/callback", free_port());
    let m = fails_as(
        Knobs {
            redirect_errors: true,
            ..knobs()
        },
        &pre_registered(Some(other.clone())),
    )
    .await;
    assert_eq!(
        m,
        format!(
            "server \"x\": the authorization redirect reported an error: invalid_request: \
             redirect_uri does not match the registered redirect URIs; the redirect URI was \
             {other} (`oauth.redirectUri`); it must be registered for the client exactly as \
             written"
        )
    );
}

#[tokio::test]
async fn a_registration_that_refuses_the_redirect_uri_names_it() {
    let m = fails(Knobs {
        refuse_redirect_registration: true,
        ..Knobs::default()
    })
    .await;
    assert!(
        m.starts_with("server \"x\": registration refused: http://127.0.0.1:")
            && m.contains(
                "/register answered HTTP 400: invalid_redirect_uri: only https redirect URIs are \
                 accepted; the redirect URI was http://127.0.0.1:"
            )
            && m.ends_with(
                "/callback: set `oauth.redirectUri` to a loopback URI it accepts, or register a \
                 client by hand (`oauth.clientId`)"
            ),
        "{m}"
    );
}

/// What a step-up demanded is remembered beside the tokens (0600) and asked for by the next
/// login, with the scopes held and the configured ones.
#[tokio::test]
async fn a_step_up_is_remembered_and_asked_for_by_the_next_login() {
    let dir = tempfile::tempdir().unwrap();
    let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let base = fake(Knobs {
        scopes_asked: asked.clone(),
        ..Knobs::default()
    })
    .await;
    let url = format!("{base}/mcp");
    let oauth = OAuthConfig {
        scopes: Some(vec!["read".into()]),
        ..OAuthConfig::default()
    };
    login_to(&url, dir.path(), &oauth, None).await.unwrap();
    let all = refresh::remember_demanded(dir.path(), &url, "write")
        .await
        .unwrap();
    assert_eq!(all.as_deref(), Some("write"));
    let all = refresh::remember_demanded(dir.path(), &url, "admin write")
        .await
        .unwrap();
    assert_eq!(all.as_deref(), Some("write admin"));
    let mode = std::fs::metadata(store::path(dir.path()))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    let t = store::load(dir.path(), &url).unwrap();
    assert_eq!(t.wanted_scope().as_deref(), Some("read write admin"));

    let t = login_to(&url, dir.path(), &oauth, t.wanted_scope())
        .await
        .unwrap();
    assert_eq!(t.demanded_scope, None, "a new login starts with no demands");
    assert_eq!(*asked.lock().unwrap(), ["read", "read write admin"]);
}

/// A refused refresh is written beside the tokens; the next refresh of the same tokens fails at
/// once without asking the token endpoint, until a login writes new tokens.
#[tokio::test]
async fn a_refused_refresh_is_not_retried_until_a_new_login() {
    let dir = tempfile::tempdir().unwrap();
    let hits = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let base = fake(Knobs {
        token_status: Some(400),
        hits: hits.clone(),
        ..Knobs::default()
    })
    .await;
    let t = stored(&base, Some(0));
    store::save(dir.path(), &t).unwrap();
    let first = refresh::refresh(dir.path(), &t).await.unwrap_err();
    let again = refresh::refresh(dir.path(), &t).await.unwrap_err();
    assert_eq!(first, again);
    assert_eq!(
        again.to_string(),
        format!(
            "the refresh token was refused ({base}/token answered HTTP 400: invalid_grant: \
             refresh token expired); run `mws login` again"
        )
    );
    assert_eq!(hits.lock().unwrap().len(), 1, "asked once");
    let marked = store::load(dir.path(), &t.resource).unwrap();
    assert!(marked.refresh_refused.is_some());
    assert_eq!(
        marked.access_token, t.access_token,
        "the tokens are unchanged"
    );
}
