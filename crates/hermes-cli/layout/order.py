#!/usr/bin/env python3
"""Writes the start-up section order for the `hermes` binary.

The functions a start-up runs are scattered over 35 MB of code, and the
kernel maps code 64 KiB at a time around each page fault, so a one-shot
answer used to keep half the binary's code resident. Placing the functions
start-up runs next to each other cuts that. This script finds them:

  order.py MAP OUT version=CG oneshot=CG tool=CG gateway=CG chat=CG

MAP is the linker map of a non-PIE `hermes` (`-Wl,-Map=…`; rustc links
with lld), each CG a `valgrind --tool=callgrind --dump-instr=yes
--compress-pos=no --compress-strings=no` profile of that same binary:
`hermes --version`, a one-shot answer, a one-shot with a tool call, the API
server from exec to its first `/health`, and that server answering chats.
OUT gets the symbols of the `.text.*` sections they executed, for lld's
--symbol-ordering-file, grouped by which runs use them so that every run's
code is one contiguous stretch:

  tool only | one-shot only | version (not the server) | version and the
  server | one-shot and the server | server start only | server chats only

(`--version` and a one-shot answer then touch only their own stretch, and
so does an API server that has not answered a chat yet.) Names carry the
symbol hashes of this build: a toolchain or dependency change alters some,
and a name that no longer exists is skipped, so a stale file costs
locality, never correctness — run this again after such a change.
"""
import bisect
import re
import sys

RUNS = ("version", "oneshot", "tool", "gateway", "chat")


def sections(map_path):
    """(start, end, symbol) of every `.text.SYMBOL` input section in an
    lld map (`VMA LMA Size Align Out In Symbol` columns)."""
    pattern = re.compile(r"^\s*([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)\s+\d+\s+\S.*:\(\.text\.([^)]+)\)$")
    out = []
    with open(map_path, errors="replace") as f:
        for line in f:
            m = pattern.match(line)
            if m:
                start, size = int(m.group(1), 16), int(m.group(2), 16)
                # `.text.unlikely.SYM`, `.text.hot.SYM`, …: the symbol is SYM.
                symbol = re.sub(r"^(unlikely|hot|startup|exit|split)\.", "", m.group(3))
                if size:
                    out.append((start, start + size, symbol))
    out.sort()
    return out


def executed(callgrind_path):
    """Instruction addresses with a cost in a callgrind file."""
    with open(callgrind_path, errors="replace") as f:
        for line in f:
            if line.startswith("0x"):
                yield int(line.split()[0], 16)


def functions(table, starts, callgrind_path):
    """The section symbols a profile executed, in first-seen order."""
    found = {}
    for addr in executed(callgrind_path):
        i = bisect.bisect_right(starts, addr) - 1
        if i >= 0 and addr < table[i][1]:
            found.setdefault(table[i][2], None)
    return list(found)


def layout(runs):
    """The order: each run's functions contiguous (see the module doc)."""
    uses = {}
    for name in RUNS:
        for symbol in runs.get(name, []):
            uses.setdefault(symbol, set()).add(name)

    def group(symbol):
        u = uses[symbol]
        if "gateway" in u:
            if "version" in u:
                return 3
            return 4 if u & {"oneshot", "tool"} else 5
        if "version" in u:
            return 2
        if "oneshot" in u:
            return 1
        return 0 if "tool" in u else 6

    # Stable: first-seen order within a group.
    return sorted(uses, key=group)


def main():
    map_path, out_path = sys.argv[1], sys.argv[2]
    table = sections(map_path)
    starts = [s for s, _, _ in table]
    runs = {}
    for arg in sys.argv[3:]:
        name, _, path = arg.partition("=")
        if name not in RUNS:
            sys.exit(f"unknown run {name!r}: expected one of {', '.join(RUNS)}")
        runs[name] = functions(table, starts, path)
    order = layout(runs)
    with open(out_path, "w") as f:
        f.write("\n".join(order) + "\n")
    print(f"{len(order)} sections from {len(table)} in the map", file=sys.stderr)


main()
