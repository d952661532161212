#!/usr/bin/env python3
"""Writes the start-up section order for the `hermes` binary.

The functions a start-up runs are scattered over 35 MB of code, and the
kernel maps code 64 KiB at a time around each page fault, so a one-shot
answer used to keep half the binary's code resident. Placing the functions
start-up runs next to each other cuts that. This script finds them:

  order.py MAP OUT CALLGRIND_FILE...

MAP is the linker map of a non-PIE `hermes` (`-Wl,-Map=…`; rustc links
with lld), each
CALLGRIND_FILE a `valgrind --tool=callgrind --dump-instr=yes
--compress-pos=no --compress-strings=no` run of that same binary. OUT gets
the symbols of the `.text.*` sections those runs executed, in the order the
runs are given (lld reads it with --symbol-ordering-file). Names carry the
symbol hashes of this build: a toolchain or dependency change alters some,
and a name that no longer exists is skipped, so a stale file costs
locality, never correctness — run this again after such a change.
"""
import bisect
import re
import sys


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


def main():
    map_path, out_path, runs = sys.argv[1], sys.argv[2], sys.argv[3:]
    table = sections(map_path)
    starts = [s for s, _, _ in table]
    order, seen = [], set()
    for run in runs:
        for addr in executed(run):
            i = bisect.bisect_right(starts, addr) - 1
            if i < 0 or addr >= table[i][1]:
                continue
            name = table[i][2]
            if name not in seen:
                seen.add(name)
                order.append(name)
    with open(out_path, "w") as f:
        f.write("\n".join(order) + "\n")
    print(f"{len(order)} sections from {len(table)} in the map", file=sys.stderr)


main()
