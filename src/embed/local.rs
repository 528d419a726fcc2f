//! A local BERT-family sentence-embedding model (a directory with `config.json`,
//! `tokenizer.json` and `model.safetensors`) run in-process with candle, giving L2-normalised
//! mean-pooled sentence vectors. Reads the model's files and computes; stores nothing and never
//! logs a text it embeds (queries pass through here).

use std::path::Path;

use super::EmbedError;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config as BertConfig, DTYPE};
use tokenizers::{PaddingParams, Tokenizer, TruncationParams};

/// Tokens a text is cut to before embedding. all-MiniLM-L6-v2 was trained on 128 and accepts
/// 256; a tool's first 128 tokens (name and the start of its description) say what it does.
/// Raising it costs time roughly in proportion on long descriptions.
pub const MAX_TOKENS: usize = 128;

/// Texts embedded per forward pass. Raising it pads short texts to long ones more often.
const BATCH: usize = 16;

/// A sentence-embedding model loaded from a directory.
pub struct LocalModel {
    model: BertModel,
    tokenizer: Tokenizer,
    dim: usize,
    id: String,
}

impl LocalModel {
    /// Loads `dir`: each missing file, unreadable config or weights that do not fit the config
    /// is an error naming the directory and what is wrong.
    pub fn load(dir: &Path) -> Result<LocalModel, EmbedError> {
        let files = |e: String| EmbedError::Files(dir.to_path_buf(), e);
        let load = |e: String| EmbedError::Load(dir.to_path_buf(), e);
        if !dir.is_dir() {
            return Err(files("not a directory".into()));
        }
        for f in ["config.json", "tokenizer.json", "model.safetensors"] {
            if !dir.join(f).is_file() {
                return Err(files(format!(
                    "{f} is missing (a sentence-embedding model needs config.json, tokenizer.json \
                     and model.safetensors)"
                )));
            }
        }
        let text = std::fs::read_to_string(dir.join("config.json"))
            .map_err(|e| files(format!("config.json: {e}")))?;
        let config: BertConfig = serde_json::from_str(&text)
            .map_err(|e| load(format!("config.json is not a BERT config: {e}")))?;
        let mut tokenizer = Tokenizer::from_file(dir.join("tokenizer.json"))
            .map_err(|e| load(format!("tokenizer.json: {e}")))?;
        tokenizer.with_padding(Some(PaddingParams::default()));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS,
                ..TruncationParams::default()
            }))
            .map_err(|e| load(format!("tokenizer.json: {e}")))?;
        let weights = dir.join("model.safetensors");
        // SAFETY: the weights file is memory-mapped read-only; mws never writes it, and a user
        // replacing it while mws runs is the same hazard as with any mapped file.
        let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[weights], DTYPE, &Device::Cpu) }
            .map_err(|e| load(format!("model.safetensors: {e}")))?;
        let model = BertModel::load(vb, &config)
            .map_err(|e| load(format!("weights do not fit config.json: {e}")))?;
        let id = format!(
            "local:{}:{}",
            dir.file_name().and_then(|n| n.to_str()).unwrap_or("model"),
            config.hidden_size
        );
        Ok(LocalModel {
            model,
            tokenizer,
            dim: config.hidden_size,
            id,
        })
    }

    /// Vector length.
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Names the model in a vector cache key (directory name and dimension).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// One unit vector per text, in order. Texts are batched by length (a batch is padded to its
    /// longest text, so mixing a 10-token name with a 128-token description wastes most of the
    /// batch's work) and the vectors put back in the callers' order.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(BATCH) {
            let batch: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
            let vecs = self
                .embed_batch(&batch)
                .map_err(|e| EmbedError::Run(e.to_string()))?;
            for (&i, v) in chunk.iter().zip(vecs) {
                out[i] = v;
            }
        }
        Ok(out)
    }

    fn embed_batch(&self, texts: &[&str]) -> anyhow::Result<Vec<Vec<f32>>> {
        let enc = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| anyhow::anyhow!("tokenizer: {e}"))?;
        let dev = &self.model.device;
        let rows = |f: &dyn Fn(&tokenizers::Encoding) -> Vec<u32>| -> candle_core::Result<Tensor> {
            let v: Vec<Tensor> = enc
                .iter()
                .map(|e| Tensor::new(f(e).as_slice(), dev))
                .collect::<candle_core::Result<_>>()?;
            Tensor::stack(&v, 0)
        };
        let ids = rows(&|e| e.get_ids().to_vec())?;
        let types = rows(&|e| e.get_type_ids().to_vec())?;
        let mask = rows(&|e| e.get_attention_mask().to_vec())?;
        let hidden = self.model.forward(&ids, &types, Some(&mask))?;
        // Mean over the real tokens (the mask), then unit length: the model's pooling config.
        let m = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
        let sum = hidden.broadcast_mul(&m)?.sum(1)?;
        let count = m.sum(1)?.clamp(1e-9f32, f32::MAX)?;
        let mean = sum.broadcast_div(&count)?;
        let norm = mean
            .sqr()?
            .sum_keepdim(1)?
            .sqrt()?
            .clamp(1e-12f32, f32::MAX)?;
        Ok(mean.broadcast_div(&norm)?.to_vec2::<f32>()?)
    }
}
