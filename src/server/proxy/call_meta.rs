//! The proxy's side of `call_tool` and `call_read_only_tool`: the name resolved exactly over the
//! tools the policy allows (`meta_tools::resolve`; a hidden tool is named only in the policy's
//! refusal), the read-only check of `call_read_only_tool`, then the call forwarded as a direct one
//! is. Must not log or store arguments, and must not run anything for a name that is not exact.

use serde_json::{Map, Value, json};

use crate::listed;
use crate::mcp::{Caller, RpcError};
use crate::results::PAGE_TOOL;
use crate::server::proxy::Proxy;
use crate::server::proxy::calls::text_result;
use crate::server::proxy::meta_tools::{self, CALL_READ_ONLY_TOOL, Resolved};
use crate::upstream::{CallContext, CatalogSnapshot};

/// What a name given to a runner (`call_tool`, `call_read_only_tool`, a script's `tools.<name>`)
/// runs.
pub(crate) enum Target {
    /// An upstream tool, by the name the catalog holds it under; the policy may still refuse it.
    Tool(String),
    /// mws's own `search_tools`.
    Search,
    /// Nothing runs: the `isError` answer the model reads (an unknown name, a held tool, a
    /// runner named through itself).
    Answer(Value),
}

impl Proxy {
    /// Resolves `name` exactly over the tools the policy allows (`meta_tools::resolve`); a tool
    /// the policy hides resolves too, so that the call's refusal is the policy's.
    pub(crate) fn target(&self, snap: &CatalogSnapshot, runner: &str, name: &str) -> Target {
        let prefixed = !self.config.servers.is_empty();
        let searchable = listed::searchable(&snap.catalog, &self.config);
        match meta_tools::resolve(&searchable, name, prefixed) {
            Ok(Resolved::Tool(held)) => Target::Tool(held),
            Ok(Resolved::Search) => Target::Search,
            Ok(Resolved::Runner(r)) => Target::Answer(text_result(
                format!("{runner}: 'name' must be the tool to run, not {r} itself"),
                true,
            )),
            // A tool the policy hides is named only in the refusal `forward_call` gives.
            Err(unknown) => match meta_tools::resolve(&snap.catalog, name, prefixed) {
                Ok(Resolved::Tool(held)) if snap.catalog.contains(&held) => Target::Tool(held),
                _ => {
                    let bare = meta_tools::strip_client_prefix(name.trim());
                    Target::Answer(match snap.catalog.held_tool(bare) {
                        Some(h) => text_result(h.message(), true),
                        None => text_result(unknown.message(), true),
                    })
                }
            },
        }
    }

    /// `runner` (`call_tool` or `call_read_only_tool`) with its `args`; `input` holds the
    /// `tools/call` params an input round carries. A call through either is logged with `via`
    /// `call_tool`.
    pub(crate) async fn call_tool(
        &self,
        runner: &'static str,
        args: Option<&Value>,
        input: Map<String, Value>,
        ctx: CallContext,
        caller: &Caller,
    ) -> Result<Value, RpcError> {
        let args = match meta_tools::parse_arguments(runner, args) {
            Ok(a) => a,
            Err(e) => return Ok(text_result(e, true)),
        };
        let Some(name) = args.get("name").and_then(Value::as_str) else {
            return Ok(text_result(
                format!(
                    "{runner} needs 'name' (a tool name; find one with search_tools) and \
                     'arguments' (an object)"
                ),
                true,
            ));
        };
        let arguments = match meta_tools::parse_arguments(runner, args.get("arguments")) {
            Ok(a) => a,
            Err(e) => return Ok(text_result(e, true)),
        };
        if name == PAGE_TOOL {
            return Ok(self.page(Some(arguments), caller).await);
        }
        let snap = self.upstream.catalog().await;
        let held = match self.target(&snap, runner, name) {
            Target::Tool(held) => held,
            Target::Search => return Ok(self.search_tools(Some(&arguments), caller).await),
            Target::Answer(refusal) => return Ok(refusal),
        };
        if runner == CALL_READ_ONLY_TOOL
            && !self.guard.excludes(&snap.catalog, &held)
            && let Some(why) = meta_tools::not_read_only(name, snap.catalog.get(&held))
        {
            return Ok(text_result(why, true));
        }
        let mut params = json!({"name": held, "arguments": arguments});
        if let Some(p) = params.as_object_mut() {
            p.extend(input);
        }
        self.forward_call(&held, params, ctx, "call_tool", caller, true)
            .await
    }
}
