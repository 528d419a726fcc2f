//! Where sentence vectors come from (`search.semantic`, docs/search.md "Semantic ranking"): a
//! local model directory run in-process (`local.rs`) or an OpenAI-compatible embeddings endpoint
//! (`endpoint.rs`), behind one `Embedder`. Blocking calls: async callers run them on a blocking
//! thread. Never logs or stores a text it embeds (queries pass through here).

mod endpoint;
mod local;

use std::path::PathBuf;

pub use endpoint::EndpointModel;
pub use local::{LocalModel, MAX_TOKENS};

use crate::config::search::Semantic;

/// Why a model cannot be used or a text cannot be embedded. The message names what failed and
/// never holds the embedded text or a header value.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error("model directory {0}: {1}")]
    Files(PathBuf, String),
    #[error("model in {0}: {1}")]
    Load(PathBuf, String),
    #[error("embedding failed: {0}")]
    Run(String),
    #[error("embeddings endpoint: {0}")]
    Endpoint(String),
}

/// A configured source of sentence vectors.
pub enum Embedder {
    /// Boxed: the model is large and lives as long as the process.
    Local(Box<LocalModel>),
    Endpoint(EndpointModel),
}

impl Embedder {
    /// Loads the local model, or checks the endpoint's config (`${VAR}` expanded from the
    /// environment; headers over plain http off loopback refused). An endpoint is not called here.
    pub fn open(config: &Semantic) -> Result<Embedder, EmbedError> {
        match config {
            Semantic::Local { dir } => LocalModel::load(dir).map(|m| Embedder::Local(Box::new(m))),
            Semantic::Endpoint(e) => {
                EndpointModel::new(e, &|v| std::env::var(v).ok()).map(Embedder::Endpoint)
            }
        }
    }

    /// Names the model in the vector cache's key: vectors of one id are comparable.
    pub fn id(&self) -> &str {
        match self {
            Embedder::Local(m) => m.id(),
            Embedder::Endpoint(m) => m.id(),
        }
    }

    /// One unit vector per text, in order, all of one length.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        match self {
            Embedder::Local(m) => m.embed(texts),
            Embedder::Endpoint(m) => m.embed(texts),
        }
    }

    /// What `mws doctor` says the model is.
    pub fn describe(&self) -> String {
        match self {
            Embedder::Local(m) => format!("local model {} ({} dimensions)", m.id(), m.dim()),
            Embedder::Endpoint(m) => format!("embeddings endpoint, model {}", m.model()),
        }
    }
}
