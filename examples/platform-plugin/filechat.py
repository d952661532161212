#!/usr/bin/env python3
"""An example platform plugin for the Hermes gateway (protocol hermes-platform/1).

People "write" by appending JSON lines to DIR/inbox.jsonl:
    {"from": "ann", "text": "hello"}                       a message
    {"from": "ann", "text": "...", "file": "/path/x.pdf"}  with a file
    {"from": "ann", "press": "<button data>"}              a button pressed
The bot's side appears as JSON lines in DIR/outbox.jsonl ({"op": "send" | "edit" |
"file" | "mark" | "press_answered", ...}).

The protocol is newline-delimited JSON-RPC 2.0 on stdin/stdout. Hermes calls
initialize, ping, start {cursor}, send, edit, typing, send_file, answer_press
and mark; the plugin reports what people do with `message` notifications
carrying the message and the cursor to resume from (here: the inbox line
number), which the gateway saves with it, so a restart resumes exactly there.
"""
import json
import os
import sys
import threading
import time

out_lock = threading.Lock()
folder = None
sent = 0


def emit(obj):
    with out_lock:
        sys.stdout.write(json.dumps(obj) + "\n")
        sys.stdout.flush()


def outbox(record):
    with open(os.path.join(folder, "outbox.jsonl"), "a") as f:
        f.write(json.dumps(record) + "\n")


def message_of(line_no, entry):
    """One inbox line as the gateway's message shape."""
    sender = str(entry.get("from", "someone"))
    message = {
        "key": f"line-{line_no}",
        "chat": {"id": sender, "kind": "dm"},
        "sender": {"id": sender, "name": sender},
        "text": entry.get("text", ""),
        "addressed": True,
    }
    if "press" in entry:
        message["text"] = entry["press"]
        message["button_press"] = f"press-{line_no}"
    if entry.get("file"):
        message["attachments"] = [{"kind": "document", "path": entry["file"]}]
    return message


def tail(cursor):
    """Reports inbox lines after `cursor` as they are appended."""
    path = os.path.join(folder, "inbox.jsonl")
    done = int(cursor or 0)
    while True:
        try:
            with open(path) as f:
                lines = f.read().splitlines()
        except FileNotFoundError:
            lines = []
        for line_no in range(done, len(lines)):
            if lines[line_no].strip():
                entry = json.loads(lines[line_no])
                emit({"jsonrpc": "2.0", "method": "message",
                      "params": {"message": message_of(line_no, entry), "cursor": str(line_no + 1)}})
        done = max(done, len(lines))
        time.sleep(0.1)


def handle(method, params):
    global folder, sent
    if method == "initialize":
        folder = (params.get("settings") or {}).get("dir") or os.getcwd()
        return {"capabilities": {"max_len": 4000, "buttons": True, "edit_interval_ms": 300},
                "identity": {"id": "filechat-bot", "username": "filechat"}}
    if method == "start":
        threading.Thread(target=tail, args=(params.get("cursor"),), daemon=True).start()
        return {}
    if method == "send":
        sent += 1
        msg = params["message"]
        outbox({"op": "send", "id": str(sent), "chat": params["chat"]["id"],
                "text": msg["text"], "buttons": msg.get("buttons", [])})
        return {"message_id": str(sent)}
    if method == "edit":
        outbox({"op": "edit", "id": params["message_id"], "text": params["message"]["text"]})
        return {}
    if method == "send_file":
        sent += 1
        outbox({"op": "file", "id": str(sent), "chat": params["chat"]["id"],
                "path": params["path"], "caption": params.get("caption", "")})
        return {"message_id": str(sent)}
    if method == "answer_press":
        outbox({"op": "press_answered", "press": params["press_id"], "note": params.get("note", "")})
        return {}
    if method == "mark":
        outbox({"op": "mark", "key": params["message"]["key"], "progress": params["progress"]})
        return {}
    if method in ("ping", "typing"):
        return {}
    raise LookupError(method)


for raw in sys.stdin:
    if not raw.strip():
        continue
    request = json.loads(raw)
    try:
        result = handle(request["method"], request.get("params") or {})
        emit({"jsonrpc": "2.0", "id": request["id"], "result": result})
    except LookupError as e:
        emit({"jsonrpc": "2.0", "id": request["id"],
              "error": {"code": -32601, "message": f"no method {e}", "data": {"kind": "unsupported"}}})
    except Exception as e:  # noqa: BLE001 - the gateway decides what to do
        emit({"jsonrpc": "2.0", "id": request["id"],
              "error": {"code": -32000, "message": str(e), "data": {"kind": "transient"}}})
