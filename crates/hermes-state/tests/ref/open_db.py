"""Open (and thereby create or upgrade) a state.db with the reference SessionDB, then close.

Usage: python open_db.py DB_PATH
"""
import sys
from pathlib import Path

from hermes_state import SessionDB

SessionDB(db_path=Path(sys.argv[1])).close()
print("{}")
