#!/usr/bin/env bash
# The first minutes of a new user, as BENCHMARKS.md reports them: `./setup.sh --test` in a fresh clone of this
# repository with nothing cached (empty pip and uv caches, no assembled models), the same again (nothing to do),
# the whole suite, and `localcr demo` on an empty cache. Debian's packages are whatever this machine has: on a
# machine without them, setup.sh installs them in the background.
#
#   bash benchmarks/speed/first_minutes.sh [WORKDIR]      (default: a new temporary directory; about 15 minutes on 2 cores)
#   bash benchmarks/speed/first_minutes.sh WORKDIR --main (the README's first command instead: `./setup.sh`, no test
#                                                    tools, then the demo; about 6 minutes)
set -euo pipefail
if [ "${1:-}" = "-h" ] || [ "${1:-}" = "--help" ]; then
  sed -n '2,9p' "$0" | cut -c3-
  exit 0
fi
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=${1:-$(mktemp -d)}
main=${2:-}
mkdir -p "$work"
git clone -q "$repo" "$work/clone"
cd "$work/clone"
export PIP_CACHE_DIR="$work/pip-cache" UV_CACHE_DIR="$work/uv-cache" LOCALCR_MODELS_DIR="$work/models"
export LOCALCR_CACHE_DIR="$work/cache"
timed() {  # timed LABEL COMMAND...: the seconds COMMAND took; its output goes to WORKDIR/LABEL.log
  local label=$1 start=$SECONDS; shift
  "$@" > "$work/$label.log" 2>&1 || { tail -20 "$work/$label.log"; exit 1; }
  echo $((SECONDS - start))
}
lscpu | grep -m1 "Model name"
grep -q -m1 -w avx512f /proc/cpuinfo && echo "AVX-512" || echo "AVX2 (no AVX-512)"
if [ "$main" = "--main" ]; then
  echo "setup.sh, fresh: $(timed setup ./setup.sh) s"
  grep "==>" "$work/setup.log"
else
  echo "setup.sh --test, fresh: $(timed setup ./setup.sh --test) s"
  grep "==>" "$work/setup.log"
  echo "setup.sh --test, again: $(timed setup-again ./setup.sh --test) s"
  echo "pytest: $(timed pytest .venv/bin/python -m pytest -q -p no:cacheprovider) s ($(tail -1 "$work/pytest.log"))"
fi
# The demo's lines stamped with the seconds since its start: when the first results show, and when it ends.
start=$(date +%s.%N)
.venv/bin/localcr demo --index "$work/demo-index" 2> "$work/demo.err" | while IFS= read -r line; do
  printf '%.1f\t%s\n' "$(echo "$(date +%s.%N) - $start" | bc)" "$line"; done > "$work/demo.log"
echo "localcr demo, empty cache: $(echo "$(date +%s.%N) - $start" | bc | xargs printf '%.1f') s in all"
awk -F'\t' 'searched && !shown {print "  its first hit shown at " $1 " s"; shown=1} $2 ~ /^\$ localcr search/ {searched=1}' \
  "$work/demo.log"
grep -P "^[0-9.]+\tlocalcr demo:" "$work/demo.log" | cut -f2
