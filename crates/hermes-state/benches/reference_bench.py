"""The reference's SessionDB doing the same work as benches/session_db.rs, and a driver that
runs both alternately and prints medians.

  python reference_bench.py run N        # one reference run on a copy of base-N.db, one JSON line
  python reference_bench.py compare [--reps R] [--floor] N [N ...]
                                         # R interleaved rounds of ours / reference (/ floors),
                                         # median of each figure, as a Markdown table

Needs hermes-agent 0.19.0 importable (python3 -m venv .venv-ref &&
.venv-ref/bin/pip install --no-deps hermes-agent==0.19.0) and, for `run`, the base file that
`cargo bench -p hermes-state --bench session_db -- --build N` writes to $HERMES_BENCH_DIR
(default /dev/shm/hermes-bench). `compare` builds the Rust bench itself.

The text generator is a port of the Rust one (xorshift64 seeded per message with splitmix64),
so both implementations append byte-identical messages to byte-identical base files.
"""
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

M64 = (1 << 64) - 1
SESSIONS = 100
SEARCH_RUNS = 30
QUERIES = [
    ("common", "docker"),
    ("rare", "zanzibar"),
    ("phrase", '"docker compose"'),
    ("prefix", "dock*"),
    ("trigram", "容器服"),
]
SYL = ["ka", "lo", "mi", "ne", "ru", "sa", "to", "vi", "ze", "po", "qu", "dra", "sten", "mor"]


class Rng:
    def __init__(self, state):
        self.s = state & M64

    @classmethod
    def seeded(cls, i):
        z = (i + 0x9E3779B97F4A7C15) & M64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        z ^= z >> 31
        return cls(z | 1)

    def next(self):
        s = self.s
        s ^= (s << 13) & M64
        s ^= s >> 7
        s ^= (s << 17) & M64
        self.s = s
        return s

    def below(self, n):
        return self.next() % n


def vocabulary():
    rng = Rng(0x5EED)
    out = []
    for _ in range(3000):
        n = 2 + rng.below(3)
        out.append("".join(SYL[rng.below(len(SYL))] for _ in range(n)))
    return out


def message_text(i, vocab):
    rng = Rng.seeded(i)
    words = 8 + rng.below(33)
    out = []
    for _ in range(words):
        a = rng.below(len(vocab))
        b = rng.below(len(vocab))
        out.append(vocab[min(a, b)])
    if rng.below(20) == 0:
        at = rng.below(len(out))
        out.insert(at, "docker compose" if rng.below(2) == 0 else "docker")
    if rng.below(100) == 0:
        at = rng.below(len(out))
        out.insert(at, "部署容器服务")
    if i % 10_007 == 0:
        out.append("zanzibar")
    return " ".join(out)


def bench_dir():
    return Path(os.environ.get("HERMES_BENCH_DIR", "/dev/shm/hermes-bench"))


def appends():
    return int(os.environ.get("HERMES_BENCH_APPENDS", "3000"))


def remove_db(path):
    for suffix in ("", "-wal", "-shm"):
        try:
            os.unlink(str(path) + suffix)
        except FileNotFoundError:
            pass


def pct(sorted_s, p):
    return sorted_s[round((len(sorted_s) - 1) * p)] * 1e3


def run(size):
    from hermes_state import SessionDB

    base = bench_dir() / f"base-{size}.db"
    if not base.exists():
        sys.exit(f"{base} missing: run `cargo bench -p hermes-state --bench session_db -- --build {size}`")
    path = bench_dir() / f"run-ref-{os.getpid()}.db"
    remove_db(path)
    shutil.copyfile(base, path)
    vocab = vocabulary()
    n = appends()
    texts = [message_text(i, vocab) for i in range(size, size + n)]

    db = SessionDB(db_path=path)
    lat = []
    cpu = time.thread_time()
    start = time.perf_counter()
    for k, text in enumerate(texts):
        i = size + k
        t = time.perf_counter()
        db.append_message(f"s{i % SESSIONS}", "user" if i % 2 == 0 else "assistant", text, timestamp=float(i))
        lat.append(time.perf_counter() - t)
    total = time.perf_counter() - start
    cpu = time.thread_time() - cpu
    db.close()
    lat.sort()

    db = SessionDB(db_path=path)
    def timed(label, **kw):
        hits = len(db.search_messages(**kw))
        times = []
        cpu = time.thread_time()
        for _ in range(SEARCH_RUNS):
            t = time.perf_counter()
            db.search_messages(**kw)
            times.append(time.perf_counter() - t)
        cpu = (time.thread_time() - cpu) * 1e3 / SEARCH_RUNS
        times.sort()
        search[label] = {"p50_ms": pct(times, 0.5), "cpu_ms": cpu, "hits": hits}

    search = {}
    for label, query in QUERIES:
        timed(label, query=query)
    timed("common_newest", query="docker", sort="newest")
    db.close()
    remove_db(path)
    print(json.dumps({
        "impl": "reference",
        "size": size,
        "appends": n,
        "appends_per_s": n / total,
        "appends_per_cpu_s": n / cpu,
        "append_p50_ms": pct(lat, 0.5),
        "append_p99_ms": pct(lat, 0.99),
        "append_max_ms": pct(lat, 1.0),
        "search": search,
    }, ensure_ascii=False), flush=True)


def rust_bench_exe(repo):
    out = subprocess.run(
        ["cargo", "bench", "-p", "hermes-state", "--bench", "session_db", "--no-run",
         "--message-format=json"],
        cwd=repo, check=True, capture_output=True, text=True,
    ).stdout
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg.get("target", {}).get("name") == "session_db" \
                and msg.get("executable"):
            return msg["executable"]
    sys.exit("could not find the session_db bench executable")


def compare(argv):
    reps = 3
    floors = False
    sizes = []
    it = iter(argv)
    for a in it:
        if a == "--reps":
            reps = int(next(it))
        elif a == "--floor":
            floors = True
        else:
            sizes.append(int(a.replace("_", "")))
    repo = Path(__file__).resolve().parents[3]
    exe = rust_bench_exe(repo)
    subprocess.run([exe, "--build", *map(str, sizes)], check=True)
    variants = [("ours", [exe, "--json"]), ("reference", [sys.executable, __file__, "run"])]
    if floors:
        variants += [("floor", [exe, "--json", "--floor"]), ("floor_nofts", [exe, "--json", "--floor-nofts"])]
    results = {}
    for size in sizes:
        for r in range(reps):
            # Alternate the order each round so neither side always runs first.
            order = variants if r % 2 == 0 else list(reversed(variants))
            for name, cmd in order:
                line = subprocess.run(cmd + [str(size)], check=True, capture_output=True, text=True).stdout
                row = json.loads(line.strip().splitlines()[-1])
                results.setdefault((size, name), []).append(row)
                print(f"# N={size} round {r + 1} {name}: {row['appends_per_s']:.0f} appends/s", file=sys.stderr, flush=True)
    labels = [q for q, _ in QUERIES] + ["substring", "common_newest"]
    print(f"\nmedians of {reps} interleaved runs; {appends()} appends per run; search p50 in ms\n")
    print("| messages | impl | appends/s | appends/CPU-s | append p50 ms | append p99 ms | append max ms | "
          + " | ".join(labels) + " | common CPU ms |")
    print("|---|---|---|---|---|---|---|" + "---|" * (len(labels) + 1))
    for size in sizes:
        for name, _ in variants:
            rows = results[(size, name)]
            med = lambda key: statistics.median(row[key] for row in rows)  # noqa: E731
            cells = []
            for label in labels:
                vals = [row["search"][label]["p50_ms"] for row in rows if label in row["search"]]
                cells.append(f"{statistics.median(vals):.2f}" if vals else "–")
            cpu = [row["search"]["common"]["cpu_ms"] for row in rows if "common" in row["search"]]
            cells.append(f"{statistics.median(cpu):.2f}" if cpu else "–")
            print(f"| {size:,} | {name} | {med('appends_per_s'):,.0f} | {med('appends_per_cpu_s'):,.0f} | "
                  f"{med('append_p50_ms'):.3f} | {med('append_p99_ms'):.3f} | {med('append_max_ms'):.0f} | "
                  + " | ".join(cells) + " |")
    hits = {label: results[(sizes[-1], "ours")][0]["search"].get(label, {}).get("hits") for label in labels}
    print(f"\nhits (ours, N={sizes[-1]}): {hits}")


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "run":
        for size in sys.argv[2:]:
            run(int(size.replace("_", "")))
    elif len(sys.argv) >= 2 and sys.argv[1] == "compare":
        compare(sys.argv[2:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
