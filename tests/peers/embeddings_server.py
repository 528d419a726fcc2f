"""An OpenAI-compatible embeddings server for tests (stdlib only): POST /v1/embeddings with
{"model", "input": [texts]} answers {"object": "list", "data": [{"index", "embedding"}], "model"}.
Vectors are deterministic hashed bags of words (each lowercase word adds +-1 to one of DIM
buckets), not a quality model: the server proves the wire shape, headers and error handling.

With `--vectors FILE` (a JSON object: text -> vector, computed beforehand by a real model) it
answers each text with that model's vector instead, and HTTP 400 for a text the file lacks: a test
can then compare the endpoint path with the same model run in-process.

Usage: embeddings_server.py PORT_FILE [--mode ok|500|slow|wrong-dim|garbage] [--require-header
NAME:VALUE] [--vectors FILE]. Binds 127.0.0.1 on a free port and writes it to PORT_FILE. Each
request's input count is appended to PORT_FILE + ".log" (never the texts).
"""
import hashlib
import json
import re
import sys
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

DIM = 64
args = sys.argv[1:]
port_file = args[0]
mode = args[args.index("--mode") + 1] if "--mode" in args else "ok"
need = args[args.index("--require-header") + 1].split(":", 1) if "--require-header" in args else None
table = json.load(open(args[args.index("--vectors") + 1])) if "--vectors" in args else None


def vector(text, dim=DIM):
    v = [0.0] * dim
    for word in re.findall(r"[a-z0-9]+", text.lower()):
        h = hashlib.sha256(word.encode()).digest()
        v[h[0] % dim] += 1.0 if h[1] % 2 else -1.0
    if not any(v):
        v[0] = 1.0
    return v


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *a):
        pass

    def answer(self, code, body):
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        req = json.loads(self.rfile.read(length) or b"{}")
        texts = req.get("input", [])
        if isinstance(texts, str):
            texts = [texts]
        with open(port_file + ".log", "a") as log:
            log.write(f"{len(texts)}\n")
        if need and self.headers.get(need[0]) != need[1]:
            return self.answer(401, {"error": {"message": "missing or wrong credentials"}})
        if mode == "500":
            return self.answer(500, {"error": {"message": "model crashed"}})
        if mode == "slow":
            time.sleep(3)
        if mode == "garbage":
            return self.answer(200, b"<html>not json</html>")
        if table is not None:
            if any(t not in table for t in texts):
                return self.answer(400, {"error": {"message": "a text has no precomputed vector"}})
            data = [{"object": "embedding", "index": i, "embedding": table[t]}
                    for i, t in enumerate(texts)]
            return self.answer(200, {"object": "list", "data": data, "model": req.get("model")})
        data = []
        for i, t in enumerate(texts):
            dim = DIM + (i % 2 if mode == "wrong-dim" else 0)
            data.append({"object": "embedding", "index": i, "embedding": vector(t, dim)})
        self.answer(200, {"object": "list", "data": data, "model": req.get("model")})


server = HTTPServer(("127.0.0.1", 0), Handler)
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os  # noqa: E402

os.replace(port_file + ".tmp", port_file)
server.serve_forever()
