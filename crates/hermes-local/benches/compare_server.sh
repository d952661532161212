#!/usr/bin/env bash
# The embedded model vs llama.cpp's own server at agent context (benches/agent_context.rs):
# starts LLAMA_SERVER on the GGUF with the same thread count, runs the bench against it,
# then prints the server's peak RSS.
# usage: compare_server.sh GGUF [THREADS] [REPS]     (LLAMA_SERVER=path/to/llama-server)
# llama-server is not packaged for Debian; build it from llama.cpp's source, e.g. the copy in
# llama-cpp-python's sdist: cmake -S vendor/llama.cpp -B build -DGGML_NATIVE=OFF -DGGML_AVX2=ON
#   -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF
#   && cmake --build build --target llama-server    (the flags our llama-cpp-sys build uses)
set -euo pipefail
cd "$(dirname "$0")/../../.."
GGUF="$1"; THREADS="${2:-1}"; REPS="${3:-3}"
SERVER="${LLAMA_SERVER:?set LLAMA_SERVER to a llama-server binary}"
PORT="${LLAMA_SERVER_PORT:-18093}"
# The bench's own build first, so compiling does not share the cores with the server's start.
cargo bench -q -p hermes-local --bench agent_context --no-run
"$SERVER" -m "$GGUF" -t "$THREADS" -tb "$THREADS" -c 8192 -np 1 --host 127.0.0.1 --port "$PORT" \
  >/tmp/llama-server-bench.log 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do
  curl -sf "http://127.0.0.1:$PORT/health" >/dev/null 2>&1 && break
  sleep 0.1
done
cargo bench -q -p hermes-local --bench agent_context -- "$GGUF" "$THREADS" \
  --server "http://127.0.0.1:$PORT/v1" --reps "$REPS" | grep -E '^(engine=|hermes_local_peak)'
echo "llama_server_peak_rss_mib=$(awk '/VmHWM/ {printf "%.1f", $2/1024}' /proc/$PID/status)"
