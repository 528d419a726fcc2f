//! An OpenAI-compatible embeddings endpoint (`POST {"model", "input": [texts]}` answered with
//! `{"data": [{"index", "embedding": [floats]}]}`), as Ollama and llama.cpp serve it. Blocking
//! (reqwest's blocking client): callers inside the runtime use a blocking thread. Messages never
//! repeat the URL (it may hold a password), a header value or a text sent.

use std::collections::BTreeMap;
use std::time::Duration;

use serde::Deserialize;
use serde_json::json;

use super::EmbedError;
use crate::config::checked::check_url;
use crate::config::search::Endpoint;
use crate::config::servers::{expand_text, insecure_headers};

/// Texts sent per request. Raising it makes fewer, bigger requests while a catalog is embedded.
const BATCH: usize = 64;

/// Longest dimension accepted from an endpoint; a longer vector is taken for garbage.
const MAX_DIM: usize = 16_384;

/// An embeddings endpoint, its headers expanded and checked.
pub struct EndpointModel {
    client: reqwest::blocking::Client,
    url: reqwest::Url,
    model: String,
    headers: BTreeMap<String, String>,
    id: String,
    timeout: Duration,
}

#[derive(Deserialize)]
struct Answer {
    data: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    #[serde(default)]
    index: Option<usize>,
    embedding: Vec<f32>,
}

impl EndpointModel {
    /// The endpoint of `config` with `${VAR}` in its headers read through `lookup`; an unset
    /// variable, or headers over plain http to a host that is not loopback, is an error.
    pub fn new(
        config: &Endpoint,
        lookup: &dyn Fn(&str) -> Option<String>,
    ) -> Result<EndpointModel, EmbedError> {
        let fail = |e: String| EmbedError::Endpoint(e);
        let url = check_url(&config.url).map_err(|e| fail(format!("`url`: {e}")))?;
        let mut headers = BTreeMap::new();
        for (k, v) in &config.headers {
            let v = expand_text(v, lookup).map_err(|e| fail(format!("{e} (in `headers.{k}`)")))?;
            headers.insert(k.clone(), v);
        }
        if !headers.is_empty() {
            insecure_headers(&url, None).map_err(fail)?;
        }
        let timeout = Duration::from_millis(config.timeout_ms);
        let client = reqwest::blocking::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(|e| fail(format!("cannot build an HTTP client: {e}")))?;
        Ok(EndpointModel {
            client,
            url,
            model: config.model.clone(),
            headers,
            id: format!("endpoint:{}", config.model),
            timeout,
        })
    }

    pub fn id(&self) -> &str {
        &self.id
    }

    pub fn model(&self) -> &str {
        &self.model
    }

    /// One unit vector per text, in order; every batch must agree on the length.
    pub fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out: Vec<Vec<f32>> = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(BATCH) {
            for v in self.request(chunk)? {
                if let Some(first) = out.first()
                    && first.len() != v.len()
                {
                    return Err(EmbedError::Endpoint(format!(
                        "answered vectors of {} and of {} dimensions",
                        first.len(),
                        v.len()
                    )));
                }
                out.push(v);
            }
        }
        Ok(out)
    }

    fn request(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let fail = |e: String| EmbedError::Endpoint(e);
        let mut req = self
            .client
            .post(self.url.clone())
            .json(&json!({"model": self.model, "input": texts}));
        for (k, v) in &self.headers {
            req = req.header(k, v);
        }
        let resp = req.send().map_err(|e| {
            if e.is_timeout() {
                fail(format!("no answer within {} ms", self.timeout.as_millis()))
            } else if e.is_connect() {
                fail("cannot connect (is the server running?)".into())
            } else {
                fail(format!("request failed: {}", e.without_url()))
            }
        })?;
        let status = resp.status();
        if !status.is_success() {
            return Err(fail(format!("answered HTTP {status}")));
        }
        let body = resp.bytes().map_err(|e| {
            if e.is_timeout() {
                fail(format!("no answer within {} ms", self.timeout.as_millis()))
            } else {
                fail(format!("reading the answer failed: {}", e.without_url()))
            }
        })?;
        let answer: Answer = serde_json::from_slice(&body).map_err(|e| {
            fail(format!(
                "the answer is not the embeddings shape ({{\"data\": [{{\"embedding\": \
                 [numbers]}}]}}): {e}"
            ))
        })?;
        if answer.data.len() != texts.len() {
            return Err(fail(format!(
                "answered {} vectors for {} texts",
                answer.data.len(),
                texts.len()
            )));
        }
        let mut data = answer.data;
        if data.iter().all(|d| d.index.is_some()) {
            data.sort_by_key(|d| d.index);
        }
        data.into_iter().map(|d| unit(d.embedding)).collect()
    }
}

/// `v` scaled to unit length; empty, too long, non-finite or all-zero is refused.
fn unit(mut v: Vec<f32>) -> Result<Vec<f32>, EmbedError> {
    if v.is_empty() || v.len() > MAX_DIM {
        return Err(EmbedError::Endpoint(format!(
            "answered a vector of {} dimensions (expected 1 to {MAX_DIM})",
            v.len()
        )));
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if !norm.is_finite() || norm == 0.0 {
        return Err(EmbedError::Endpoint(
            "answered a vector that is all zeros or not finite".into(),
        ));
    }
    for x in &mut v {
        *x /= norm;
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoint(url: &str, headers: &[(&str, &str)]) -> Endpoint {
        Endpoint {
            url: url.into(),
            model: "m".into(),
            headers: headers
                .iter()
                .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
                .collect(),
            timeout_ms: 1000,
        }
    }

    fn err(e: &Endpoint) -> String {
        match EndpointModel::new(e, &|v| (v == "TOKEN").then(|| "secret".to_string())) {
            Ok(_) => "ok".into(),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn secret_headers_need_https_off_loopback() {
        let auth = [("Authorization", "Bearer ${TOKEN}")];
        assert_eq!(
            err(&endpoint("http://127.0.0.1:9/v1/embeddings", &auth)),
            "ok"
        );
        assert_eq!(
            err(&endpoint("https://example.org/v1/embeddings", &auth)),
            "ok"
        );
        assert_eq!(
            err(&endpoint("http://example.org/v1/embeddings", &[])),
            "ok"
        );
        let e = err(&endpoint("http://example.org/v1/embeddings", &auth));
        assert!(
            e.starts_with("embeddings endpoint: refusing to send `headers` over plain http://"),
            "{e}"
        );
        assert!(!e.contains("secret"), "{e}");
        let e = err(&endpoint("http://127.0.0.1:9/v1", &[("X-Key", "${NOPE}")]));
        assert_eq!(
            e,
            "embeddings endpoint: environment variable NOPE is not set (in `headers.X-Key`)"
        );
    }

    #[test]
    fn vectors_are_unit_and_garbage_is_refused() {
        let v = unit(vec![3.0, 4.0]).unwrap();
        assert!(
            (v[0] - 0.6).abs() < 1e-6 && (v[1] - 0.8).abs() < 1e-6,
            "{v:?}"
        );
        for bad in [vec![], vec![0.0, 0.0], vec![f32::NAN, 1.0]] {
            assert!(unit(bad).is_err());
        }
    }
}
