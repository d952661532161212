"""Write a state.db with the reference SessionDB: sessions, messages (with tool calls),
token usage, a title and an ended session. Prints the message ids as JSON.

Usage: python write_db.py DB_PATH
"""
import json
import sys
from pathlib import Path

from hermes_state import SessionDB

db = SessionDB(db_path=Path(sys.argv[1]))
try:
    db.create_session("ref_s1", "cli", model="ref/model", model_config={"temperature": 0.2},
                      system_prompt="You are the reference.", cwd="/ref/cwd")
    ids = []
    ids.append(db.append_message("ref_s1", "user", "Please read the Telegram config 日本語です",
                                 timestamp=1000.0))
    calls = [{"id": "call_a", "type": "function",
              "function": {"name": "read_file", "arguments": json.dumps({"path": "conf.yaml"})}}]
    ids.append(db.append_message("ref_s1", "assistant", "Reading it now.", tool_calls=calls,
                                 reasoning="the user wants the file", finish_reason="tool_calls",
                                 timestamp=1001.0))
    ids.append(db.append_message("ref_s1", "tool", "token: abc", tool_name="read_file",
                                 tool_call_id="call_a", timestamp=1002.0))
    ids.append(db.append_message("ref_s1", "assistant", "The config sets a token.",
                                 finish_reason="stop", token_count=12, timestamp=1003.0))
    db.update_token_counts("ref_s1", input_tokens=120, output_tokens=30, model="ref/model",
                           cache_read_tokens=10, reasoning_tokens=4, estimated_cost_usd=0.01,
                           billing_provider="openrouter", billing_base_url="https://x/v1",
                           api_call_count=1)
    db.set_session_title("ref_s1", "Reference session")
    db.create_session("ref_s2", "telegram", model="ref/other")
    ids.append(db.append_message("ref_s2", "user", "second session about zeppelins",
                                 timestamp=2000.0))
    db.end_session("ref_s2", "user_exit")
    print(json.dumps({"ids": ids}))
finally:
    db.close()
