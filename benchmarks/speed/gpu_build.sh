#!/usr/bin/env bash
# llama-cpp-python's CUDA build measured on a machine that downloads nothing (the lent GPU machine of BENCHMARKS.md,
# "The CUDA build on a lent GPU"): its compile time, then gpu_offload.py's pp512 / tg128 at n_gpu_layers 0 and -1.
#
#   bash benchmarks/speed/gpu_build.sh prepare DIR SDIST.tar.gz MODEL.gguf   (here: DIR gets what travels, ~4 MB)
#   bash DIR/gpu_bench.sh run DIR OUT                                        (there: build, measure, log to OUT)
#
# prepare: the llama-cpp-python sdist stripped to what its CMake build reads with LLAVA off and llama.cpp's
# "common" off (setup/llama-cpp-text-only.cmake): no vocab files, docs, tools, tests or other GPU backends (77 MB to
# 2 MB); a zero-weight copy of MODEL (zero_weights.py: the same shapes and quant types, so the same speed); the
# diskcache wheel the bindings import; gpu_offload.py with what it imports; this script as DIR/gpu_bench.sh.
# run: pip-installs the sdist with CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAVA_BUILD=OFF"
# (cuBLAS and the driver library found where a pip-assembled CUDA keeps them), timed, then gpu_offload.py.
set -euo pipefail
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ] || [ $# -lt 2 ]; then
  sed -n '2,13p' "$0" | cut -c3-
  exit 0
fi

prepare() {  # prepare DIR SDIST MODEL
  local dir=$1 sdist=$2 model=$3 repo tmp
  repo=$(cd "$(dirname "$0")/../.." && pwd)
  tmp=$(mktemp -d)
  mkdir -p "$dir/whl" "$dir/bench/speed"
  tar xzf "$sdist" -C "$tmp"
  local src=("$tmp"/llama_cpp_python-*)
  (cd "$src" && rm -rf .git docs examples tests docker scripts mkdocs.yml \
    && cd vendor/llama.cpp && rm -rf .git models docs media tests examples tools pocs benches gguf-py scripts \
      conversion common skills ci requirements grammars app vendor/cpp-httplib .github ./*.py \
    && cd ggml/src && find . -maxdepth 1 -type d -name 'ggml-*' ! -name ggml-cpu ! -name ggml-cuda -exec rm -rf {} +)
  tar cJf "$dir/llama-src.tar.xz" -C "$tmp" "$(basename "$src")"
  "$repo/.venv/bin/python" "$repo/benchmarks/speed/zero_weights.py" "$model" "$tmp/zero.gguf"
  xz -T2 -c "$tmp/zero.gguf" > "$dir/zero.gguf.xz"
  rm -rf "$tmp"
  "$repo/.venv/bin/python" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
    --implementation cp --platform manylinux2014_x86_64 -d "$dir/whl" diskcache==5.6.3
  cp "$repo/benchmarks/speed/gpu_offload.py" "$repo/benchmarks/speed/llama_floor.py" "$dir/bench/speed/"
  cp "$repo/benchmarks/_common.py" "$dir/bench/"
  cp "$repo/README.md" "$repo/setup/llama-cpp-text-only.cmake" "$dir/"
  cp "$0" "$dir/gpu_bench.sh"
  du -sh "$dir"
}

found() {  # found NAME DIR...: the first file called NAME (a glob) under the DIRs, or nothing
  find "${@:2}" -name "$1" \( -type f -o -type l \) -print -quit 2>/dev/null || true
}

measure() {  # measure DIR OUT
  local dir out
  dir=$(cd "$1" && pwd) out=$2
  export PYTHONUNBUFFERED=1
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  nvcc --version | tail -2
  nproc
  python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site "$dir"/whl/*.whl
  export PYTHONPATH=/tmp/site
  rm -rf /tmp/lcp-src /tmp/lcp && mkdir -p /tmp/lcp-src
  tar xJf "$dir/llama-src.tar.xz" -C /tmp/lcp-src
  xz -dc "$dir/zero.gguf.xz" > /tmp/zero.gguf

  # A CUDA assembled from pip wheels keeps cuBLAS beside Python's packages, not in the toolkit; CMake's
  # FindCUDAToolkit then finds neither it nor (without the toolkit's stubs) the driver library, so say where they are.
  local toolkit site args="" libs
  toolkit=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
  site=$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  local where=("$toolkit" /usr/local/cuda /usr/include /usr/lib/x86_64-linux-gnu "$site/nvidia" /opt)
  if [ -z "$(found cublas_v2.h "$toolkit/include" "$toolkit/targets")" ]; then
    local header; header=$(found cublas_v2.h "${where[@]}")
    [ -n "$header" ] || { echo "FAILED: no cublas_v2.h anywhere"; exit 1; }
    args+=" -DCMAKE_CUDA_FLAGS=-I$(dirname "$header") -DCMAKE_CXX_FLAGS=-I$(dirname "$header")"
  fi
  for lib in cublas cublasLt; do
    if [ -z "$(found "lib$lib.so" "$toolkit")" ]; then
      local file; file=$(found "lib$lib.so.[0-9]*" "${where[@]}")
      [ -n "$file" ] || { echo "FAILED: no lib$lib.so anywhere"; exit 1; }
      args+=" -DCUDA_${lib}_LIBRARY=$file"
      libs=$(dirname "$file")
    fi
  done
  if [ -z "$(found libcuda.so "$toolkit")" ]; then
    local driver; driver=$(found "libcuda.so*" /usr/local/nvidia /usr/lib/x86_64-linux-gnu /usr/lib64 /usr/lib)
    if [ -n "$driver" ]; then args+=" -DCUDA_cuda_driver_LIBRARY=$driver"; else args+=" -DGGML_CUDA_NO_VMM=ON"; fi
  fi
  export LD_LIBRARY_PATH="${libs:+$libs:}$toolkit/lib64:${LD_LIBRARY_PATH:-}"
  echo "extra CMake arguments:${args:- none}"

  local started=$SECONDS
  if ! CMAKE_ARGS="-DGGML_CUDA=on -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAVA_BUILD=OFF -DCMAKE_PROJECT_llama.cpp_INCLUDE=$dir/llama-cpp-text-only.cmake$args" \
      CMAKE_BUILD_PARALLEL_LEVEL=$(nproc) timeout 460 python3 -m pip install -v --no-build-isolation --no-deps \
      --no-compile --target /tmp/lcp /tmp/lcp-src/llama_cpp_python-* > "$out/build.log" 2>&1; then
    echo "FAILED: the build, after $((SECONDS - started)) s:"
    grep -m 10 -E "error|Error|FAILED" "$out/build.log" || true
    tail -20 "$out/build.log"
    exit 1
  fi
  echo "build: $((SECONDS - started)) s on $(nproc) cores ($(grep -c '\.cu\.o' "$out/build.log" || true) lines naming CUDA objects)"
  export PYTHONPATH=/tmp/lcp:/tmp/site
  nvidia-smi --query-gpu=name,memory.used --format=csv,noheader -lms 200 > "$out/memory.csv" &
  local sampler=$!
  python3 "$dir/bench/speed/gpu_offload.py" --model /tmp/zero.gguf --layers=-1,0 --repeats 3
  kill "$sampler"
  echo "nvidia-smi --query-gpu=name,memory.used: largest while measuring: $(sort -t, -k2 -n "$out/memory.csv" | tail -1)"
  nvidia-smi --query-gpu=name,memory.used --format=csv
}

case $1 in
  prepare) prepare "$2" "$3" "$4" ;;
  run) mkdir -p "$3" && measure "$2" "$3" 2>&1 | tee -a "$3/gpu_bench.log" ;;
  *) echo "unknown step $1: prepare or run (--help)"; exit 2 ;;
esac
