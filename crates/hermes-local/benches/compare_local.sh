#!/usr/bin/env bash
# Side-by-side: hermes-local vs llama-cpp-python on the same GGUF, prompts and thread count.
# usage: compare_local.sh GGUF [THREADS] [PYTHON_WITH_LLAMA_CPP]
# llama-cpp-python has no wheel on PyPI: ../shared/peers/llamacpp-server.sh builds one (8–9 min).
set -euo pipefail
cd "$(dirname "$0")/../../.."
GGUF="$1"; THREADS="${2:-1}"; PY="${3:-/tmp/peers/llamacpp/venv/bin/python}"
cargo bench -q -p hermes-local --bench local_model -- "$GGUF" "$THREADS" | grep '^engine='
"$PY" crates/hermes-local/benches/llama_cpp_python.py "$GGUF" "$THREADS"
