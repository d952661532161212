"""Open a state.db with the reference SessionDB and print what it sees, as JSON.

Usage: python read_db.py DB_PATH [SEARCH_QUERY ...]
Output: {"sessions": [...], "conversations": {id: [...]}, "search": {query: [...]},
         "sessions_raw": {id: row}, "export": {id: export}}
"""
import json
import sys
from pathlib import Path

from hermes_state import SessionDB

db = SessionDB(db_path=Path(sys.argv[1]))
try:
    listed = db.list_sessions_rich(include_children=True, limit=1000)
    out = {
        "sessions": listed,
        "conversations": {s["id"]: db.get_messages_as_conversation(s["id"]) for s in listed},
        "sessions_raw": {s["id"]: db.get_session(s["id"]) for s in listed},
        "export": {s["id"]: db.export_session(s["id"]) for s in listed},
        "search": {q: db.search_messages(q) for q in sys.argv[2:]},
        "message_count": db.message_count(),
    }
    print(json.dumps(out, default=str))
finally:
    db.close()
