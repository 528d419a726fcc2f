//! What a running proxy says and stores when a server asks for more scope (step-up) or its
//! refresh token is refused, against the fake authorization server (`auth::fake_as`).

use std::sync::{Arc, Mutex};

use reqwest::header::{HeaderMap, HeaderValue};

use super::*;
use crate::auth::fake_as::{self, Knobs};

fn challenge(h: &str) -> HeaderMap {
    let mut m = HeaderMap::new();
    m.insert("www-authenticate", HeaderValue::from_str(h).unwrap());
    m
}

fn message(r: Result<impl Sized, WireError>) -> String {
    match r {
        Err(e) => e.to_string(),
        Ok(_) => "passed".into(),
    }
}

#[tokio::test]
async fn a_step_up_names_the_scopes_the_next_login_asks_for() {
    let dir = tempfile::tempdir().unwrap();
    let asked = Arc::new(Mutex::new(Vec::new()));
    let base = fake_as::fake(Knobs {
        scopes_asked: asked.clone(),
        ..Knobs::default()
    })
    .await;
    let url = format!("{base}/mcp");
    // The config's scopes alone cannot get out of a step-up: the demanded ones are added.
    let oauth = auth::OAuthConfig {
        scopes: Some(vec!["read".into()]),
        ..auth::OAuthConfig::default()
    };
    let t = fake_as::login_to(&url, dir.path(), &oauth, None)
        .await
        .unwrap();
    let a = Auth::new(dir.path().to_path_buf(), &url, Some(oauth.clone()), "gh");
    let h = challenge(
        r#"Bearer error="insufficient_scope", scope="repo:write", resource_metadata="x""#,
    );
    let said = message(a.after(403, &h, Some(&t.access_token)).await);
    assert_eq!(
        said,
        "needs a login: run `mws login gh` (it asks for more scope (repo:write); the next login \
         asks for read repo:write)"
    );
    let kept = store::load(dir.path(), &url).unwrap();
    assert_eq!(kept.demanded_scope.as_deref(), Some("repo:write"));
    assert_eq!(kept.access_token, t.access_token);

    // `mws login` passes what the store wants.
    fake_as::login_to(&url, dir.path(), &oauth, kept.wanted_scope())
        .await
        .unwrap();
    assert_eq!(*asked.lock().unwrap(), ["read", "read repo:write"]);
}

#[tokio::test]
async fn a_refused_refresh_fails_requests_at_once_until_a_new_login() {
    let dir = tempfile::tempdir().unwrap();
    let hits = Arc::new(Mutex::new(Vec::new()));
    let base = fake_as::fake(Knobs {
        token_status: Some(400),
        hits: hits.clone(),
        ..Knobs::default()
    })
    .await;
    let url = format!("{base}/mcp");
    store::save(dir.path(), &fake_as::stored(&base, Some(0))).unwrap();
    let a = Auth::new(dir.path().to_path_buf(), &url, None, "gh");
    let want = format!(
        "needs a login: the refresh token was refused; run `mws login gh` ({base}/token answered \
         HTTP 400: invalid_grant: refresh token expired; it is not tried again until a login \
         writes new tokens)"
    );
    for _ in 0..3 {
        assert_eq!(message(a.before().await), want);
    }
    assert_eq!(
        message(a.after(401, &HeaderMap::new(), Some("a")).await),
        want
    );
    assert_eq!(
        hits.lock().unwrap().len(),
        1,
        "the token endpoint was asked once"
    );

    // A login writes new tokens without the mark: requests go again.
    let now = crate::clock::now().unix_timestamp();
    let fresh = store::Tokens {
        access_token: "new".into(),
        issued_at: Some(now),
        expires_at: Some(now + 60),
        ..fake_as::stored(&base, None)
    };
    store::save(dir.path(), &fresh).unwrap();
    assert_eq!(message(a.before().await), "passed");
    assert_eq!(a.current().as_deref(), Some("new"));
}

/// A token living 60 s is sent as it is until 80% of its life has passed, not refreshed on every
/// request.
#[tokio::test]
async fn a_short_lived_token_is_not_refreshed_on_every_request() {
    let dir = tempfile::tempdir().unwrap();
    let hits = Arc::new(Mutex::new(Vec::new()));
    let base = fake_as::fake(Knobs {
        hits: hits.clone(),
        ..Knobs::default()
    })
    .await;
    let url = format!("{base}/mcp");
    let now = crate::clock::now().unix_timestamp();
    let young = store::Tokens {
        issued_at: Some(now - 10),
        expires_at: Some(now + 50),
        ..fake_as::stored(&base, None)
    };
    store::save(dir.path(), &young).unwrap();
    let a = Auth::new(dir.path().to_path_buf(), &url, None, "gh");
    for _ in 0..5 {
        assert_eq!(message(a.before().await), "passed");
    }
    assert!(
        hits.lock().unwrap().is_empty(),
        "{:?}",
        hits.lock().unwrap()
    );
    let old = store::Tokens {
        issued_at: Some(now - 50),
        expires_at: Some(now + 10),
        ..young
    };
    store::save(dir.path(), &old).unwrap();
    assert_eq!(message(a.before().await), "passed");
    assert_eq!(*hits.lock().unwrap(), ["/token"]);
    assert_eq!(a.current().as_deref(), Some("tok-1"));
}
