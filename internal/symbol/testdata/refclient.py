#!/usr/bin/env python3
"""A plain LSP client, written apart from rowkit's, that the agreement tests
compare hsymbol with: it starts a language server, asks it one question at
one position, and prints the answer mapped to verified rows in the order
and form hsymbol documents (without the spans, which come from
inspect_file, not from the server).

Input (stdin, JSON): cmd (argv), env (dict), root, settings (answers to
workspace/configuration), wait ("progress", "probe" or "answer"), queries
(a list of {op, file, line (0-based), character (UTF-16)} or {op: "find",
query}). Output (stdout, JSON): a list of strings, one per query.
"""
import hashlib
import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.parse

spec = json.load(sys.stdin)
root = spec["root"]
proc = subprocess.Popen(spec["cmd"], cwd=root, env=spec["env"], stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
lock = threading.Lock()
answers = {}
cond = threading.Condition()
progress = {"begun": 0, "active": set()}
next_id = [0]


def send(msg):
    msg["jsonrpc"] = "2.0"
    body = json.dumps(msg).encode()
    with lock:
        proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        proc.stdin.flush()


def setting(section):
    cur = spec["settings"]
    if not section:
        return cur
    for part in section.split("."):
        if not isinstance(cur, dict) or part not in cur:
            return None
        cur = cur[part]
    return cur


def reader():
    f = proc.stdout
    while True:
        length = None
        while True:
            line = f.readline()
            if not line:
                with cond:
                    answers["eof"] = True
                    cond.notify_all()
                return
            line = line.strip()
            if not line:
                break
            k, _, v = line.decode().partition(":")
            if k.lower() == "content-length":
                length = int(v)
        msg = json.loads(f.read(length))
        if "method" in msg and "id" in msg:
            m = msg["method"]
            if m == "workspace/configuration":
                res = [setting(it.get("section", "")) for it in msg["params"]["items"]]
            elif m == "workspace/workspaceFolders":
                res = [{"uri": uri(root), "name": os.path.basename(root)}]
            else:
                res = None
            send({"id": msg["id"], "result": res})
        elif "method" in msg:
            if msg["method"] == "$/progress":
                tok, val = json.dumps(msg["params"]["token"]), msg["params"]["value"]
                with cond:
                    if val.get("kind") == "begin":
                        progress["begun"] += 1
                        progress["active"].add(tok)
                    elif val.get("kind") == "end":
                        progress["active"].discard(tok)
                    cond.notify_all()
        else:
            with cond:
                answers[msg["id"]] = msg
                cond.notify_all()


def call(method, params):
    next_id[0] += 1
    i = next_id[0]
    send({"id": i, "method": method, "params": params})
    with cond:
        while i not in answers:
            if answers.get("eof"):
                raise SystemExit("the server ended")
            cond.wait(60)
        m = answers.pop(i)
    if "error" in m:
        return {"error": m["error"]}
    return m.get("result")


def uri(path):
    return "file://" + urllib.parse.quote(path)


def path_of(u):
    return urllib.parse.unquote(urllib.parse.urlparse(u).path)


threading.Thread(target=reader, daemon=True).start()
call("initialize", {
    "processId": os.getpid(), "rootUri": uri(root), "rootPath": root,
    "workspaceFolders": [{"uri": uri(root), "name": os.path.basename(root)}],
    "capabilities": {
        "general": {"positionEncodings": ["utf-16"]},
        "window": {"workDoneProgress": True},
        "workspace": {"configuration": True, "workspaceFolders": True,
                      "didChangeWatchedFiles": {"dynamicRegistration": True, "relativePatternSupport": True}},
        "textDocument": {"definition": {"linkSupport": False}, "typeDefinition": {"linkSupport": False},
                         "implementation": {"linkSupport": False}, "references": {},
                         "hover": {"contentFormat": ["plaintext", "markdown"]}, "callHierarchy": {}},
    },
})
send({"method": "initialized", "params": {}})

if spec["wait"] == "progress":
    with cond:
        while not (progress["begun"] > 0 and not progress["active"]):
            cond.wait(60)

LANG = {".go": "go", ".py": "python", ".pyi": "python", ".ts": "typescript", ".tsx": "typescriptreact",
        ".js": "javascript", ".jsx": "javascriptreact", ".mts": "typescript", ".cts": "typescript"}
opened = set()


def open_doc(path):
    if path in opened:
        return
    opened.add(path)
    with open(path, encoding="utf-8", newline="") as f:
        text = f.read()
    send({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri(path), "languageId": LANG[os.path.splitext(path)[1]], "version": 1, "text": text}}})


def split_lines(data):
    """Logical lines: LF, CRLF or a lone CR end a line; a final terminator adds none."""
    lines = re.split(r"\r\n|\r|\n", data)
    if lines and lines[-1] == "" and data:
        lines.pop()
    if data == "":
        return []
    return lines


_files = {}


def lines_of(rel):
    if rel not in _files:
        with open(os.path.join(root, rel), "rb") as f:
            _files[rel] = split_lines(f.read().decode("utf-8"))
    return _files[rel]


def place(loc):
    p = path_of(loc.get("uri") or loc.get("targetUri"))
    rng = loc.get("range") or loc.get("targetSelectionRange")
    rel = os.path.relpath(p, root)
    inside = not rel.startswith("..") and "node_modules" not in rel.split(os.sep)
    return {"path": rel if inside or not rel.startswith("..") else p, "inside": inside,
            "line": rng["start"]["line"] + 1, "char": rng["start"]["character"]}


def as_list(ans):
    if ans is None:
        return []
    if isinstance(ans, dict):
        return [ans]
    return ans


def row(p):
    text = lines_of(p["path"])[p["line"] - 1]
    h = hashlib.sha256(text.encode()).hexdigest()[:4]
    return "%s:%d:%s %s\n" % (json.dumps(p["path"], ensure_ascii=False), p["line"], h, text)


def outside(ps):
    counts = {}
    for p in ps:
        if not p["inside"]:
            counts[p["path"]] = counts.get(p["path"], 0) + 1
    return ["%s (outside the workspace: %d %s)\n" % (json.dumps(k, ensure_ascii=False), n, "location" if n == 1 else "locations")
            for k, n in sorted(counts.items())]


def key(p):
    return (p["path"], p["line"], p["char"])


def rows_of(ps, seen):
    out = []
    for p in ps:
        if not p["inside"]:
            continue
        k = (p["path"], p["line"])
        if k in seen:
            continue
        seen.add(k)
        out.append(row(p))
    return out


class Refused(Exception):
    pass


def answer(method, params):
    r = call(method, params)
    if isinstance(r, dict) and "error" in r:
        raise Refused(r["error"].get("message", ""))
    return r


results = []
for q in spec["queries"]:
    try:
        op = q["op"]
        if op == "find":
            if spec["wait"] == "probe":
                call("textDocument/documentSymbol", {"textDocument": {"uri": uri(os.path.join(root, ".probe.py"))}})
            syms = answer("workspace/symbol", {"query": q["query"]}) or []
            ranked = []
            for s in syms:
                if "range" not in s["location"]:
                    continue
                p = place(s["location"])
                name = s["name"].rsplit(".", 1)[-1] if "." in s["name"][:-1] else s["name"]
                qq = q["query"]
                rank = (0 if name == qq else 1 if name.lower() == qq.lower() else
                        2 if name.lower().startswith(qq.lower()) else 3 if qq.lower() in name.lower() else 4)
                ranked.append((rank, p))
            inside = [p for _, p in sorted([rp for rp in ranked if rp[1]["inside"]], key=lambda rp: (rp[0],) + key(rp[1]))]
            ps = [p for _, p in ranked]
            results.append("".join(rows_of(inside, set()) + outside(ps)))
            continue
        path = os.path.join(root, q["file"])
        open_doc(path)
        pos = {"textDocument": {"uri": uri(path)}, "position": {"line": q["line"], "character": q["character"]}}
        if op in ("def", "impl", "typedef"):
            method = {"def": "textDocument/definition", "impl": "textDocument/implementation",
                      "typedef": "textDocument/typeDefinition"}[op]
            ps = sorted([place(l) for l in as_list(answer(method, pos))], key=key)
            results.append("".join(rows_of(ps, set()) + outside(ps)))
        elif op == "refs":
            refs = sorted([place(l) for l in as_list(answer("textDocument/references", dict(pos, context={"includeDeclaration": True})))], key=key)
            defs = sorted([place(l) for l in as_list(answer("textDocument/definition", pos))], key=key)
            seen = set()
            out = rows_of(defs, seen) + rows_of(refs, seen)
            outs = [p for p in refs if not p["inside"]]
            for d in defs:
                if not d["inside"] and not any(key(d) == key(p) for p in outs):
                    outs.append(d)
            results.append("".join(out + outside(outs)))
        elif op == "hover":
            h = answer("textDocument/hover", pos)
            text = ""
            if h:
                c = h["contents"]
                if isinstance(c, dict):
                    text = c.get("value", "")
                elif isinstance(c, str):
                    text = c
            text = text.strip()
            results.append(text + "\n" if text else "")
        else:
            # One level of the call hierarchy: each caller (callee) by where it
            # is defined, inside the workspace first; its header (a span,
            # from inspect_file, left out here) or, outside, its file with the
            # number of calls; then the rows of the calls.
            groups = []
            for it in as_list(answer("textDocument/prepareCallHierarchy", pos)):
                if op == "calls-in":
                    for c in as_list(answer("callHierarchy/incomingCalls", {"item": it})):
                        groups.append((c["from"], c["from"]["uri"], c["fromRanges"]))
                else:
                    for c in as_list(answer("callHierarchy/outgoingCalls", {"item": it})):
                        groups.append((c["to"], it["uri"], c["fromRanges"]))
            def head(g):
                return place({"uri": g[0]["uri"], "range": g[0]["selectionRange"]})
            groups.sort(key=lambda g: (not head(g)["inside"], key(head(g))))
            seen, out = set(), []
            for g in groups:
                h = head(g)
                sites = sorted([place({"uri": g[1], "range": r}) for r in g[2]], key=key)
                if not h["inside"]:
                    out.append("%s (outside the workspace: %d %s)\n" % (json.dumps(h["path"], ensure_ascii=False), len(sites), "location" if len(sites) == 1 else "locations"))
                out += rows_of(sites, seen)
            results.append("".join(out))
    except Refused as e:
        results.append("error: " + str(e))
proc.kill()
json.dump(results, sys.stdout)
