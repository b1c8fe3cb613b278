#!/usr/bin/env bash
# The main job: build every step, run each on the GPU here at the standard sizes, write
# results/<gpu>/<step>.csv, then regenerate the plots and tables from results/. The standard
# sizes are the squares 1024..8192 and two shapes where K dominates. The cuBLAS TF32 control
# is run too, into results/<gpu>/controls/: it must fail the FP32-grade check (its rows carry
# verified = 0) and it is the plots' one-pass TF32 context point, never a step.
#
#   scripts/bench.sh [--build DIR] [--sizes LIST] [--steps "01_initial 12_double_buffer"] [--no-plots]
# Exit codes: 0 done; 1 a step failed its check or a CUDA error (its other rows are still
# written); 2 a bad option; 3 no GPU; 4 the results are written but the plots and tables were
# not regenerated (scripts/regenerate.sh failed, e.g. its packages cannot be installed here).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
build=build
sizes=$(shapes bench)
steps=""
plots=1
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --sizes) sizes=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --no-plots) plots=0; shift ;;
    -h|--help) sed -n '2,6p' "$0"; exit 0 ;;
    *) echo "bench.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

if ! gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1) || [ -z "$gpu" ]; then
  echo "bench.sh: no NVIDIA GPU found (nvidia-smi); the benchmarks need one. scripts/regenerate.sh" \
       "rebuilds plots and tables from the committed results without a GPU." >&2
  exit 3
fi
slug=$(echo "$gpu" | tr '[:upper:]' '[:lower:]' | sed -E 's/[^a-z0-9]+/-/g; s/^-|-$//g')

scripts/ensure_deps.sh
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSGEMM_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j "$(nproc)"

[ -n "$steps" ] || steps=$(list_steps)
mkdir -p "results/$slug"
failed=()
for step in $steps; do
  csv="results/$slug/$step.csv"
  rm -f "$csv"  # a results file holds one run of the step: the newest
  # A step that fails a check has no row for that size; the others are still measured.
  "$build/bin/$step" --sizes "$sizes" --csv "$csv" || failed+=("$step")
done
mkdir -p "results/$slug/controls"
csv="results/$slug/controls/cublas_tf32.csv"
rm -f "$csv"
if "$build/bin/control_cublas_tf32" --sizes "$sizes" --csv "$csv" --record-failures; then
  echo "bench.sh: the cuBLAS TF32 control PASSED the FP32-grade check; the check is broken" >&2
  exit 1
fi
echo "bench.sh: results in results/$slug/"
if [ "$plots" = 1 ] && ! scripts/regenerate.sh; then
  echo "bench.sh: results written to results/$slug/, but the plots and tables were NOT regenerated" \
       "(scripts/regenerate.sh failed); run scripts/regenerate.sh on these results where plots/requirements.txt installs" >&2
  [ ${#failed[@]} -gt 0 ] || exit 4
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "bench.sh: FAILED (a check or a CUDA error): ${failed[*]}" >&2
  exit 1
fi
