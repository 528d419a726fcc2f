//! The redirect listener: what the browser's page says for a redirect that passes the login's
//! checks and for one that does not, what a timeout says, and which redirect URIs the config
//! accepts.

use super::*;
use crate::auth::{Failed, discover, flow};

fn discovered() -> discover::Discovered {
    discover::Discovered {
        resource: "http://127.0.0.1:1/mcp".into(),
        resource_metadata: None,
        server: serde_json::from_value(serde_json::json!({
            "issuer": "http://127.0.0.1:1",
            "authorization_endpoint": "http://127.0.0.1:1/authorize",
            "token_endpoint": "http://127.0.0.1:1/token",
        }))
        .unwrap(),
        issuer: "http://127.0.0.1:1".into(),
    }
}

/// Sends one callback with `query` to a listener expecting state `good`; returns the page the
/// browser shows and what the login got.
async fn callback(query: &str) -> (String, Result<String, AuthError>) {
    let l = bind(None).await.unwrap();
    let url = format!("{}?{query}", l.redirect_uri);
    let d = discovered();
    let check = |p: &HashMap<String, String>| flow::check_redirect(p, "good", &d, "(hint)");
    let browser = async {
        tokio::time::sleep(Duration::from_millis(20)).await;
        reqwest::get(&url).await.unwrap().text().await.unwrap()
    };
    let (got, page) = tokio::join!(l.wait(Duration::from_secs(5), "(hint)", &check), browser);
    (page, got)
}

#[tokio::test]
async fn only_a_redirect_with_this_logins_state_is_received() {
    let (page, got) = callback("code=c1&state=good").await;
    assert_eq!(page, "mws: login received. You can close this tab.");
    assert_eq!(got.unwrap(), "c1");

    let (page, got) = callback("code=c1&state=forged").await;
    assert_eq!(
        page,
        "mws: this login was NOT accepted: the authorization redirect carried a state that is \
         not this login's (a forged or stale redirect); nothing was stored.\nSee the terminal."
    );
    assert_eq!(
        Failed {
            server: "x".into(),
            why: got.unwrap_err()
        }
        .to_string(),
        "server \"x\": the authorization redirect carried a state that is not this login's (a \
         forged or stale redirect); nothing was stored"
    );

    let (page, got) = callback("error=access_denied&state=good").await;
    assert_eq!(
        page,
        "mws: this login was NOT accepted: the authorization redirect reported an error: \
         access_denied.\nSee the terminal."
    );
    assert!(got.is_err());
}

#[tokio::test]
async fn a_timeout_names_the_redirect_uri_and_its_setting() {
    let l = bind(None).await.unwrap();
    let uri = l.redirect_uri.clone();
    let h = hint(&uri, false, true);
    let e = l
        .wait(Duration::from_millis(50), &h, &|_| Ok(String::new()))
        .await
        .unwrap_err();
    assert_eq!(
        Failed {
            server: "x".into(),
            why: e
        }
        .to_string(),
        format!(
            "server \"x\": no redirect arrived within 0s: the browser was closed, or the \
             authorization server refused the redirect URI and showed an error instead (the \
             redirect URI was {uri}, on a random port; a client registered by hand whose \
             authorization server checks redirect URIs exactly needs `oauth.redirectUri` set to \
             the registered one); run `mws login` again"
        )
    );
}

#[test]
fn redirect_uris_must_be_loopback_http_with_a_port() {
    for (uri, want) in [
        ("http://127.0.0.1:8976/callback", "ok"),
        ("http://localhost:33418", "ok"),
        ("http://[::1]:8080/cb", "ok"),
        ("http://127.0.0.1:80/cb", "ok"),
        (
            "https://127.0.0.1:8976/callback",
            "\"https://127.0.0.1:8976/callback\" is not http://: mws receives the redirect itself \
             on loopback, without TLS; write the redirect URI registered with the client, as in \
             http://127.0.0.1:8976/callback",
        ),
        (
            "http://example.com:8976/callback",
            "\"http://example.com:8976/callback\" is not on loopback: mws listens for the \
             redirect on 127.0.0.1, [::1] or localhost only",
        ),
        (
            "http://127.0.0.1/callback",
            "\"http://127.0.0.1/callback\" names no port (1–65535); write the redirect URI \
             registered with the client, as in http://127.0.0.1:8976/callback",
        ),
        (
            "http://127.0.0.1:0/callback",
            "\"http://127.0.0.1:0/callback\" has port 0; the port must be 1–65535; write the \
             redirect URI registered with the client, as in http://127.0.0.1:8976/callback",
        ),
        (
            "http://127.0.0.1:70000/callback",
            "\"http://127.0.0.1:70000/callback\" has a port outside 1–65535; write the redirect \
             URI registered with the client, as in http://127.0.0.1:8976/callback",
        ),
        (
            "http://127.0.0.1:8976/cb?x=1",
            "\"http://127.0.0.1:8976/cb?x=1\" has a query or fragment; write the redirect URI \
             registered with the client, as in http://127.0.0.1:8976/callback",
        ),
    ] {
        let got = match check_redirect_uri(uri) {
            Ok(_) => "ok".to_string(),
            Err(e) => e,
        };
        assert_eq!(got, want, "{uri}");
    }
}
