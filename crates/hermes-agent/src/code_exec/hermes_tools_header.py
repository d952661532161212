"""hermes_tools: call the agent's tools from an execute_code script.

Generated for each run by hermes-rs. Every tool function sends one request to
the agent over the Unix socket named in HERMES_RPC_SOCKET and returns the
tool's JSON result as Python values.
"""
import json as _json
import os as _os
import shlex as _shlex
import socket as _socket
import threading as _threading
import time as _time

_conn = None
# Replies carry no request id, so only one request may be in flight at a time
# (scripts that call tools from several threads would otherwise swap answers).
_lock = _threading.Lock()


def json_parse(text: str):
    """Parse JSON that may hold raw control characters inside strings, as
    terminal() and web_extract() output often does."""
    return _json.loads(text, strict=False)


def shell_quote(s: str) -> str:
    """Quote a value for use inside a terminal() command line:
        terminal(f"grep -n {shell_quote(word)} notes.txt")
    """
    return _shlex.quote(s)


def retry(fn, max_attempts=3, delay=2):
    """Call fn() until it returns, trying at most max_attempts times and
    waiting delay, 2*delay, 4*delay ... seconds between tries; the last
    error is raised again. For flaky network calls:
        retry(lambda: terminal("curl -fsS https://example.com"))
    """
    tries = 0
    while True:
        try:
            return fn()
        except Exception:
            tries += 1
            if tries >= max_attempts:
                raise
            _time.sleep(delay * (2 ** (tries - 1)))


def _agent_socket():
    global _conn
    if _conn is None:
        conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
        conn.connect(_os.environ["HERMES_RPC_SOCKET"])
        conn.settimeout(300)
        _conn = conn
    return _conn


def _read_reply(conn):
    parts = []
    while True:
        data = conn.recv(65536)
        if not data:
            raise RuntimeError("the agent closed the tool connection")
        parts.append(data)
        if data.endswith(b"\n"):
            return b"".join(parts)


def _call(tool_name, args):
    """Run one tool in the agent and return its result as Python values."""
    request = {
        "tool": tool_name,
        "args": args,
        "token": _os.environ.get("HERMES_RPC_TOKEN", ""),
    }
    with _lock:
        conn = _agent_socket()
        conn.sendall((_json.dumps(request) + "\n").encode("utf-8"))
        reply = _read_reply(conn)
    value = _json.loads(reply.decode("utf-8"))
    # A result that is itself JSON text is decoded once more.
    if isinstance(value, str):
        try:
            return _json.loads(value)
        except ValueError:
            return value
    return value

