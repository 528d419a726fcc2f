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
use crate::upstream::CallContext;

impl Proxy {
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
        let prefixed = !self.config.servers.is_empty();
        let searchable = listed::searchable(&snap.catalog, &self.config);
        let held = match meta_tools::resolve(&searchable, name, prefixed) {
            Ok(Resolved::Tool(held)) => held,
            Ok(Resolved::Search) => return Ok(self.search_tools(Some(&arguments), caller).await),
            Ok(Resolved::Runner(r)) => {
                return Ok(text_result(
                    format!("{runner}: 'name' must be the tool to run, not {r} itself"),
                    true,
                ));
            }
            // A tool the policy hides is named only in the refusal `forward_call` gives.
            Err(unknown) => match meta_tools::resolve(&snap.catalog, name, prefixed) {
                Ok(Resolved::Tool(held)) if snap.catalog.contains(&held) => held,
                _ => {
                    let bare = meta_tools::strip_client_prefix(name.trim());
                    return Ok(match snap.catalog.held_tool(bare) {
                        Some(h) => text_result(h.message(), true),
                        None => text_result(unknown.message(), true),
                    });
                }
            },
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
        self.forward_call(&held, params, ctx, "call_tool", caller)
            .await
    }
}
