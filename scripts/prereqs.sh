#!/bin/sh
# What building and running the embedded model needs on a fresh machine:
# cmake and a C++ compiler (llama.cpp), clang with libclang (its Rust bindings),
# and pip (`hermes model pull` fetches the model's wheel). Installs what is
# missing on Debian/Ubuntu when run as root (or with sudo); otherwise says
# exactly what to install. Exits 0 when everything is there.
set -eu

lib_root="${LIBCLANG_SEARCH:-/usr/lib}"
missing=""
command -v cmake >/dev/null 2>&1 || missing="$missing cmake"
command -v c++ >/dev/null 2>&1 || missing="$missing g++"
command -v clang >/dev/null 2>&1 || missing="$missing clang"
if ! ls "$lib_root"/llvm-*/lib/libclang*.so* >/dev/null 2>&1 &&
   ! ls "$lib_root"/*/libclang*.so* >/dev/null 2>&1; then
  missing="$missing libclang-dev"
fi
python3 -m pip --version >/dev/null 2>&1 || missing="$missing python3-pip"

if [ -z "$missing" ]; then
  echo "prerequisites: all present"
  exit 0
fi

explain() {
  echo "The embedded model's build needs:$missing" >&2
  echo "Install them, e.g. on Debian/Ubuntu:  sudo apt-get install -y$missing" >&2
  echo "(or build without the embedded model: cargo build --release -p hermes-cli --no-default-features)" >&2
  exit 1
}

command -v apt-get >/dev/null 2>&1 || explain
if [ "$(id -u)" = 0 ]; then
  sudo=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo="sudo"
else
  explain
fi
echo "prerequisites: installing$missing"
$sudo apt-get update -qq
# shellcheck disable=SC2086 # one word per package
$sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing
