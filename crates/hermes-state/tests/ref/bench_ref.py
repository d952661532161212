"""The reference's numbers for the same workload as benches/session_db.rs.

Usage: python bench_ref.py SIZE [SIZE ...]
Fills a fresh state.db with SIZE messages (synchronous=NORMAL), appends 2 000 more with the
default synchronous=FULL, then times search_messages("docker") 50 times on a new connection.
"""
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from hermes_state import SessionDB

SYL = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "qu", "dra", "sten", "mor"]


def main():
    rng = random.Random(0x5EED)
    vocab = ["".join(rng.choice(SYL) for _ in range(2 + rng.randrange(3))) for _ in range(3000)]

    def text():
        words = [vocab[min(rng.randrange(3000), rng.randrange(3000))] for _ in range(8 + rng.randrange(33))]
        if rng.randrange(20) == 0:
            words.insert(rng.randrange(len(words)), "docker")
        return " ".join(words)

    print(f"{'messages':>10} | {'appends/s NORMAL':>16} | {'appends/s FULL':>14} | {'search p50':>12} | {'search p95':>12}")
    for size in [int(a) for a in sys.argv[1:]] or [10_000]:
        path = Path(tempfile.mkdtemp()) / "state.db"
        db = SessionDB(db_path=path)
        for s in range(100):
            db.create_session(f"s{s}", "cli")

        def append(rows):
            start = time.perf_counter()
            for i in rows:
                db.append_message(f"s{i % 100}", "user" if i % 2 == 0 else "assistant", text(), timestamp=float(i))
            return len(rows) / (time.perf_counter() - start)

        db._conn.execute("PRAGMA synchronous=NORMAL")
        normal = append(range(size))
        db._conn.execute("PRAGMA synchronous=FULL")
        full = append(range(size, size + 2000))
        db.close()
        db = SessionDB(db_path=path)
        db.search_messages("docker")
        times = []
        for _ in range(50):
            t = time.perf_counter()
            db.search_messages("docker")
            times.append(time.perf_counter() - t)
        db.close()
        times.sort()
        print(f"{size + 2000:>10} | {normal:>16.0f} | {full:>14.0f} | {statistics.median(times) * 1e3:>9.3f} ms | {times[int(0.95 * (len(times) - 1))] * 1e3:>9.3f} ms")


main()
