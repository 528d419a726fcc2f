// Code mode's prelude (src/script/mod.rs): hides the host's two functions behind `tools` and
// `console`, before the script runs. Must not give the script anything but tool calls and logs.
(() => {
  "use strict";
  const call = globalThis.__mws_call;
  const log = globalThis.__mws_log;
  delete globalThis.__mws_call;
  delete globalThis.__mws_log;
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  const made = new Map();
  const tool = (name) => async (args) => {
    const text = args === undefined ? "{}" : stringify(args);
    if (typeof text !== "string") {
      throw new TypeError(`tools.${name}: the arguments must be an object`);
    }
    const reply = parse(call(name, text));
    if ("e" in reply) {
      throw new Error(reply.e);
    }
    return reply.v;
  };
  const tools = new Proxy(Object.freeze(Object.create(null)), {
    get(_, name) {
      if (typeof name !== "string" || name === "then") {
        return undefined;
      }
      let f = made.get(name);
      if (f === undefined) {
        f = tool(name);
        made.set(name, f);
      }
      return f;
    },
  });
  const show = (v) => {
    if (typeof v === "string") return v;
    try {
      const s = stringify(v);
      return s === undefined ? String(v) : s;
    } catch (_) {
      return String(v);
    }
  };
  const console = Object.freeze({
    log: (...args) => log(args.map(show).join(" ")),
  });
  for (const [name, value] of [["tools", tools], ["console", console]]) {
    Object.defineProperty(globalThis, name, { value, writable: false, configurable: false });
  }
})();
