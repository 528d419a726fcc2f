//! Who mws is to an authorization server: a pre-registered client from the config, a client ID
//! metadata document URL (when the server supports them and one is configured), or a dynamic
//! registration (RFC 7591); and how the client authenticates at the token endpoint. Must not log
//! the secret.

use serde::{Deserialize, Serialize};
use serde_json::json;

use super::discover::ServerMetadata;
use super::{AuthError, OAuthConfig};

/// The name mws registers under.
const CLIENT_NAME: &str = "mws (MCP working set)";

/// The client mws acts as with one authorization server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Client {
    pub client_id: String,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub client_secret: Option<String>,
    /// `none`, `client_secret_basic` or `client_secret_post`.
    pub auth_method: String,
}

/// The token endpoint auth method mws uses given what the server supports (RFC 8414's default is
/// `client_secret_basic`): a public client where it may be one, else basic, else post.
pub fn auth_method(md: &ServerMetadata, has_secret: bool) -> String {
    let supported = md
        .token_endpoint_auth_methods_supported
        .clone()
        .unwrap_or_else(|| vec!["client_secret_basic".into()]);
    let order: &[&str] = if has_secret {
        &["client_secret_basic", "client_secret_post", "none"]
    } else {
        &["none", "client_secret_basic", "client_secret_post"]
    };
    order
        .iter()
        .find(|m| supported.iter().any(|s| s == *m))
        .unwrap_or(&order[0])
        .to_string()
}

/// The client to use: configured, metadata document, or registered now for `redirect_uri`.
pub async fn client(
    http: &reqwest::Client,
    md: &ServerMetadata,
    cfg: &OAuthConfig,
    redirect_uri: &str,
    scope: Option<&str>,
) -> Result<Client, AuthError> {
    if let Some(id) = &cfg.client_id {
        return Ok(Client {
            client_id: id.clone(),
            client_secret: cfg.client_secret.clone(),
            auth_method: auth_method(md, cfg.client_secret.is_some()),
        });
    }
    if md.client_id_metadata_document_supported
        && let Some(url) = &cfg.client_metadata_url
    {
        return Ok(Client {
            client_id: url.clone(),
            client_secret: None,
            auth_method: "none".into(),
        });
    }
    let Some(endpoint) = &md.registration_endpoint else {
        let cimd = if md.client_id_metadata_document_supported {
            " (it accepts client ID metadata documents: publish one and set `oauth.clientMetadataUrl`)"
        } else {
            ""
        };
        return Err(AuthError::Registration(format!(
            "the authorization server {} offers no dynamic client registration; register mws \
             there by hand and set `oauth.clientId` (and `oauth.clientSecret`){cimd}",
            md.issuer
        )));
    };
    let method = auth_method(md, false);
    let mut body = json!({
        "client_name": CLIENT_NAME,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": method,
        "application_type": "native",
    });
    if let Some(s) = scope {
        body["scope"] = json!(s);
    }
    super::require_secure(endpoint, "registration endpoint")?;
    let resp =
        http.post(endpoint).json(&body).send().await.map_err(|e| {
            AuthError::Registration(format!("{endpoint} {}", super::unanswered(&e)))
        })?;
    let status = resp.status();
    let text = resp.text().await.unwrap_or_default();
    if !status.is_success() {
        let why = super::error_text(&text);
        // RFC 7591's `invalid_redirect_uri`, or a description naming the redirect URI.
        let about = if super::loopback::about_redirect(&why) {
            format!(
                "; the redirect URI was {redirect_uri}: set `oauth.redirectUri` to a loopback \
                 URI it accepts, or register a client by hand (`oauth.clientId`)"
            )
        } else {
            String::new()
        };
        return Err(AuthError::Registration(format!(
            "{endpoint} answered HTTP {}: {why}{about}",
            status.as_u16(),
        )));
    }
    #[derive(Deserialize)]
    struct Registered {
        client_id: String,
        client_secret: Option<String>,
        token_endpoint_auth_method: Option<String>,
    }
    let r: Registered = serde_json::from_str(&text)
        .map_err(|e| AuthError::Registration(format!("{endpoint} answered no client_id: {e}")))?;
    let auth_method = r.token_endpoint_auth_method.unwrap_or_else(|| {
        if r.client_secret.is_some() && method == "none" {
            auth_method(md, true)
        } else {
            method
        }
    });
    Ok(Client {
        client_id: r.client_id,
        client_secret: r.client_secret,
        auth_method,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn md(methods: Option<&[&str]>) -> ServerMetadata {
        serde_json::from_value(json!({
            "issuer": "https://as.example",
            "authorization_endpoint": "https://as.example/a",
            "token_endpoint": "https://as.example/t",
            "token_endpoint_auth_methods_supported": methods,
        }))
        .unwrap()
    }

    #[test]
    fn the_auth_method_follows_what_the_server_supports() {
        for (methods, secret, want) in [
            (Some(&["none"][..]), false, "none"),
            (
                Some(&["client_secret_basic"][..]),
                false,
                "client_secret_basic",
            ),
            (
                Some(&["client_secret_post"][..]),
                false,
                "client_secret_post",
            ),
            (
                Some(&["none", "client_secret_post"][..]),
                true,
                "client_secret_post",
            ),
            (None, true, "client_secret_basic"),
        ] {
            assert_eq!(
                auth_method(&md(methods), secret),
                want,
                "{methods:?} {secret}"
            );
        }
    }
}
