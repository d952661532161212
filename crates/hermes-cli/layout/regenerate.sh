#!/bin/bash
# Regenerates layout/startup.order: the functions `hermes --version`, a
# one-shot answer, one with a tool call, the API server's start to its
# first /health, and its two chats execute, from callgrind runs of a release build
# linked with a map, against the in-repo mock provider. Needs valgrind,
# curl and python3; takes a few minutes.
# Run it after a toolchain or dependency update, or a change to code these
# runs execute (symbol names move; a stale order costs memory, not behaviour).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; pkill -TERM -f "callgrind.*$work" 2>/dev/null || true; rm -rf "$work"' EXIT

cd "$root"
cargo rustc --release -p hermes-cli --bin hermes -- -C link-arg=-Wl,-Map="$work/hermes.map"
cp target/release/hermes "$work/hermes"

cargo build --release -p hermes-mock --example startup_script
target/release/examples/startup_script > "$work/mock_url" &
for _ in $(seq 1 50); do [ -s "$work/mock_url" ] && break; sleep 0.1; done
api=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p "$work/home"
printf 'model:\n  provider: custom\n  base_url: %s\n  default: mock-model\nplatforms:\n  api_server:\n    enabled: true\n    extra:\n      port: %s\n' "$(cat "$work/mock_url")" "$api" > "$work/home/config.yaml"
export HERMES_HOME="$work/home" HOME="$work/home"

cg=(valgrind --tool=callgrind --dump-instr=yes --compress-pos=no --compress-strings=no)
"${cg[@]}" --callgrind-out-file="$work/cg1" "$work/hermes" --version >/dev/null 2>&1
"${cg[@]}" --callgrind-out-file="$work/cg2" "$work/hermes" chat -q hi -Q >/dev/null 2>&1
"${cg[@]}" --callgrind-out-file="$work/cg3" "$work/hermes" chat -q "run: x" -Q --yolo >/dev/null 2>&1
key=layout-key-0123456789abcdef
API_SERVER_KEY=$key "${cg[@]}" --callgrind-out-file="$work/cg4" "$work/hermes" gateway run >/dev/null 2>&1 &
gateway=$!
for _ in $(seq 1 120); do curl -s -m 2 "http://127.0.0.1:$api/health" >/dev/null && break; sleep 0.5; done
# The server's start (to its first /health) and its chats are separate runs:
# a dump now, seen once the next request wakes the process.
callgrind_control -d "$gateway" >/dev/null
for _ in $(seq 1 60); do
  curl -s -m 2 "http://127.0.0.1:$api/health" >/dev/null
  ls "$work"/cg4.* >/dev/null 2>&1 && break
  sleep 0.5
done
for stream in true false; do
  curl -s -m 60 -H "Authorization: Bearer $key" -H "Content-Type: application/json" \
    -d "{\"stream\": $stream, \"messages\": [{\"role\": \"user\", \"content\": \"hi\"}]}" \
    "http://127.0.0.1:$api/v1/chat/completions" >/dev/null
done
kill -TERM "$gateway"; wait "$gateway" || true
start=$(ls "$work"/cg4.* | head -1)
chats=$(ls -t "$work"/cg4* | head -1)

python3 "$here/order.py" "$work/hermes.map" "$here/startup.order" version="$work/cg1" \
  oneshot="$work/cg2" tool="$work/cg3" gateway="$start" chat="$chats"
echo "wrote $here/startup.order; rebuild (cargo build --release) to link with it"
