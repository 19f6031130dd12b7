import http.server, json, sys, os, itertools, threading
PORT, OUT, STEPS = int(sys.argv[1]), sys.argv[2], json.load(open(sys.argv[3]))
counter = itertools.count()
lock = threading.Lock()
def sse(evs):
    out = []
    for i, e in enumerate(evs):
        e = dict(e); e["sequence_number"] = i
        out.append(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n")
    return "".join(out).encode()
def response(n, items, usage):
    rid = f"resp_{n}"
    evs = [{"type":"response.created","response":{"id":rid,"object":"response","status":"in_progress","output":[]}}]
    for i, it in enumerate(items):
        added = dict(it)
        if added["type"] == "function_call": added["arguments"] = ""; added["status"] = "in_progress"
        if added["type"] == "custom_tool_call": added["input"] = ""; added["status"] = "in_progress"
        evs.append({"type":"response.output_item.added","output_index":i,"item":added})
        evs.append({"type":"response.output_item.done","output_index":i,"item":it})
    evs.append({"type":"response.completed","response":{"id":rid,"object":"response","status":"completed","output":items,"usage":usage}})
    return sse(evs)
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def log_message(self, *a): pass
    def do_POST(self):
        with lock: n = next(counter)
        body = self.rfile.read(int(self.headers.get("content-length", 0)))
        open(os.path.join(OUT, f"req{n}.json"), "wb").write(body)
        with open(os.path.join(OUT, f"req{n}.headers"), "w") as f:
            f.write(self.path + "\n")
            for k, v in self.headers.items():
                if k.lower() == "authorization": v = "Bearer <redacted>"
                f.write(f"{k}: {v}\n")
        step = STEPS[min(n, len(STEPS)-1)]
        data = response(n, step["items"], step.get("usage", {"input_tokens":10,"output_tokens":1,"total_tokens":11}))
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
http.server.ThreadingHTTPServer(("127.0.0.1", PORT), H).serve_forever()
