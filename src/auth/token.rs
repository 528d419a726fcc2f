//! Token endpoint requests: the authorization-code exchange (with the PKCE verifier and the
//! `resource` parameter) and refresh, with the client authenticated as registered (basic, post or
//! none). Must not put a token or secret in an error message.

use base64::Engine;
use serde::Deserialize;

use super::AuthError;
use super::register::Client;

/// What a token endpoint granted.
#[derive(Debug, Clone, Deserialize)]
pub struct Granted {
    pub access_token: String,
    #[serde(default)]
    pub token_type: String,
    pub expires_in: Option<u64>,
    pub refresh_token: Option<String>,
    pub scope: Option<String>,
}

/// `application/x-www-form-urlencoded` of one value (RFC 6749 §2.3.1 encodes basic credentials
/// this way before base64).
fn form(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// Posts `params` to the token endpoint with the client's authentication.
pub async fn request(
    http: &reqwest::Client,
    endpoint: &str,
    client: &Client,
    mut params: Vec<(&str, String)>,
) -> Result<Granted, (Option<u16>, AuthError)> {
    super::require_secure(endpoint, "token endpoint").map_err(|e| (None, e))?;
    let mut req = http.post(endpoint).header("Accept", "application/json");
    match client.auth_method.as_str() {
        "client_secret_basic" => {
            let secret = client.client_secret.as_deref().unwrap_or("");
            let pair = format!("{}:{}", form(&client.client_id), form(secret));
            let b64 = base64::engine::general_purpose::STANDARD.encode(pair);
            req = req.header("Authorization", format!("Basic {b64}"));
            // Not required with basic (RFC 6749 §3.2.1), but some servers (the Python SDK's) look
            // the client up by it.
            params.push(("client_id", client.client_id.clone()));
        }
        "client_secret_post" => {
            params.push(("client_id", client.client_id.clone()));
            params.push((
                "client_secret",
                client.client_secret.clone().unwrap_or_default(),
            ));
        }
        _ => params.push(("client_id", client.client_id.clone())),
    }
    let body: String = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(params.iter().map(|(k, v)| (*k, v.as_str())))
        .finish();
    let resp = req
        .header("Content-Type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .map_err(|e| {
            (
                None,
                AuthError::Token(format!("{endpoint} {}", super::unanswered(&e))),
            )
        })?;
    let status = resp.status().as_u16();
    let text = resp.text().await.unwrap_or_default();
    if !(200..300).contains(&status) {
        return Err((
            Some(status),
            AuthError::Token(format!(
                "{endpoint} answered HTTP {status}: {}",
                super::error_text(&text)
            )),
        ));
    }
    let g: Granted = serde_json::from_str(&text).map_err(|_| {
        (
            Some(status),
            AuthError::Token(format!("{endpoint} answered without an access_token")),
        )
    })?;
    if !g.token_type.is_empty() && !g.token_type.eq_ignore_ascii_case("bearer") {
        return Err((
            Some(status),
            AuthError::Token(format!(
                "{endpoint} issued a {:?} token; mws sends Bearer tokens only",
                g.token_type
            )),
        ));
    }
    Ok(g)
}

/// Exchanges `code` for tokens.
pub async fn exchange(
    http: &reqwest::Client,
    endpoint: &str,
    client: &Client,
    code: &str,
    verifier: &str,
    redirect_uri: &str,
    resource: &str,
) -> Result<Granted, AuthError> {
    let params = vec![
        ("grant_type", "authorization_code".to_string()),
        ("code", code.to_string()),
        ("code_verifier", verifier.to_string()),
        ("redirect_uri", redirect_uri.to_string()),
        ("resource", resource.to_string()),
    ];
    request(http, endpoint, client, params)
        .await
        .map_err(|(_, e)| e)
}

/// Trades a refresh token for new tokens; a 400/401 answer means the refresh token is no good.
pub async fn refresh(
    http: &reqwest::Client,
    endpoint: &str,
    client: &Client,
    refresh_token: &str,
    resource: &str,
) -> Result<Granted, AuthError> {
    let params = vec![
        ("grant_type", "refresh_token".to_string()),
        ("refresh_token", refresh_token.to_string()),
        ("resource", resource.to_string()),
    ];
    match request(http, endpoint, client, params).await {
        Ok(g) => Ok(g),
        Err((Some(400 | 401), AuthError::Token(why))) => Err(AuthError::RefreshRefused(why)),
        Err((_, e)) => Err(e),
    }
}
