//! How a request's answer is read off the wire: the response as a tree, or a `tools/call`'s
//! result as the wire keeps it; and a response's `result` or its JSON-RPC error. Must not send
//! anything (`mod.rs` does).

use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::mcp::code;
use crate::mcp::raw::Answer;
use crate::upstream::UpstreamError;
use crate::upstream::wire::{Outgoing, Wire, WireError};

/// What a request's answer is read into (`Conn::request_inner`).
pub(super) trait Reading {
    type Out;
    fn read<'a>(wire: &'a dyn Wire, out: Outgoing<'a>) -> BoxFuture<'a, WireAnswer<Self::Out>>;
}

pub(super) type WireAnswer<T> = Result<(u16, T), WireError>;

/// The response, as a tree (`Wire::request`).
pub(super) struct Tree;
impl Reading for Tree {
    type Out = Value;
    fn read<'a>(wire: &'a dyn Wire, out: Outgoing<'a>) -> BoxFuture<'a, WireAnswer<Value>> {
        wire.request(out)
    }
}

/// A `tools/call`'s result as the wire keeps it, or the response as a tree where it does not
/// (`Wire::request_result`).
pub(super) struct Kept;
impl Reading for Kept {
    type Out = Answer;
    fn read<'a>(wire: &'a dyn Wire, out: Outgoing<'a>) -> BoxFuture<'a, WireAnswer<Answer>> {
        wire.request_result(out)
    }
}

/// The `result` of a response, or its JSON-RPC error.
pub(super) fn rpc_result(mut resp: Value) -> Result<Value, UpstreamError> {
    if let Some(r) = resp.get_mut("result") {
        return Ok(r.take());
    }
    let e = resp.get("error").cloned().unwrap_or(Value::Null);
    Err(UpstreamError::Rpc {
        code: e
            .get("code")
            .and_then(Value::as_i64)
            .unwrap_or(code::INTERNAL_ERROR),
        message: e
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        data: e.get("data").cloned(),
    })
}
