// Preloaded (`node --require`) into test peers that listen on every interface by default, such as
// server-everything's Streamable HTTP mode (`app.listen(PORT)`): any listen(port) call without a
// host is made on 127.0.0.1, so the tests never open a port beyond loopback.
"use strict";
const net = require("net");
const listen = net.Server.prototype.listen;
const LOOPBACK = "127.0.0.1";
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  const isPort = typeof first === "number" || (typeof first === "string" && /^\d+$/.test(first));
  if (isPort && typeof args[1] !== "string") {
    args.splice(1, 0, LOOPBACK);
  } else if (first && typeof first === "object" && first.path === undefined && !first.host) {
    args[0] = { ...first, host: LOOPBACK };
  }
  return listen.apply(this, args);
};
