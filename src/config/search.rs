//! The `search` object of the config (docs/configuration.md, "Search"): the optional semantic
//! layer, a local model directory or an OpenAI-compatible embeddings endpoint. Only the values
//! and their shape; loading a model or calling the endpoint lives in `crate::embed`. Must not do
//! I/O and must never print a header value.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Deserialize;

/// Default wait for an embeddings endpoint's answer, in milliseconds.
pub const DEFAULT_EMBED_TIMEOUT_MS: u64 = 5_000;

/// `search`: how `search_tools` and `mws search` rank.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct Search {
    /// Ranking by meaning beside keywords; `None` ranks by keywords only.
    pub semantic: Option<Semantic>,
}

/// `search.semantic`: where sentence vectors come from.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(try_from = "RawSemantic")]
pub enum Semantic {
    /// A local BERT-family model directory (config.json, tokenizer.json, model.safetensors).
    Local { dir: PathBuf },
    /// An OpenAI-compatible `/v1/embeddings` endpoint.
    Endpoint(Endpoint),
}

/// An embeddings endpoint: `url`, the `model` name sent in each request, headers (`${VAR}`
/// expanded when the request is made) and how long one request may take.
#[derive(Debug, Clone, PartialEq)]
pub struct Endpoint {
    pub url: String,
    pub model: String,
    pub headers: BTreeMap<String, String>,
    pub timeout_ms: u64,
}

/// Both shapes in one, so that an unknown field gets a did-you-mean over all of them.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct RawSemantic {
    model: Option<String>,
    #[serde(default, deserialize_with = "super::checked::http_url")]
    url: Option<String>,
    #[serde(default, deserialize_with = "super::checked::headers")]
    headers: Option<BTreeMap<String, String>>,
    #[serde(default, deserialize_with = "timeout")]
    timeout_ms: Option<u64>,
}

fn timeout<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    super::checked::timeout_ms(d).map(Some)
}

impl TryFrom<RawSemantic> for Semantic {
    type Error = String;
    fn try_from(r: RawSemantic) -> Result<Semantic, String> {
        let Some(model) = r.model.filter(|m| !m.is_empty()) else {
            return Err(
                "expected `model`: a local model directory, or with `url` the model \
                        name the endpoint serves"
                    .into(),
            );
        };
        match r.url {
            Some(url) => Ok(Semantic::Endpoint(Endpoint {
                url,
                model,
                headers: r.headers.unwrap_or_default(),
                timeout_ms: r.timeout_ms.unwrap_or(DEFAULT_EMBED_TIMEOUT_MS),
            })),
            None => {
                if r.headers.is_some() || r.timeout_ms.is_some() {
                    return Err(
                        "`headers` and `timeoutMs` belong to an endpoint (`url`), not \
                                to a local model directory"
                            .into(),
                    );
                }
                Ok(Semantic::Local {
                    dir: super::expand_tilde(std::path::Path::new(&model)),
                })
            }
        }
    }
}
