#!/usr/bin/env bash
# The main job: build every step, run each on the GPU here at the standard sizes, write
# results/<gpu>/<step>.csv, then regenerate the plots and tables from results/. The standard
# sizes are the squares 1024..8192 and two shapes where K dominates. The cuBLAS TF32 control
# is run too, into results/<gpu>/controls/: it must fail the FP32-grade check (its rows carry
# verified = 0) and it is the plots' one-pass TF32 context point, never a step.
#
# A step that cannot run on this GPU (exit 3: its one line says why, e.g. sm_90a code on
# another GPU) is listed as skipped, not failed. --tuning NAME builds with tunings/NAME.txt;
# --sms N runs every step on N of the GPU's SMs (an emulation of a smaller GPU, green
# contexts) and writes to results/<gpu>/emulations/<tuning>-<N>-sms/ instead.
# --survey runs the shape survey instead of the standard sizes: every survey.* set of
# tests/shapes.txt (45 shapes in six kinds), each shape timed for about 100 ms (--time-ms 100)
# beside cuBLAS, into results/<gpu>/survey/<step>.csv; no TF32 control, and the plots and
# tables are regenerated only with --plots. Not with --sizes or --sms.
#
#   scripts/bench.sh [--build DIR] [--sizes LIST] [--steps "01_initial 12_double_buffer"] [--no-plots]
#                    [--tuning NAME] [--sms N]
#   scripts/bench.sh --survey [--build DIR] [--steps "..."] [--tuning NAME] [--plots]
# Exit codes: 0 done (steps that cannot run on this GPU listed as skipped); 1 a step failed
# its check or a CUDA error (its other rows are still written); 2 a bad option; 3 no GPU; 4 the
# results are written but the plots and tables were not regenerated (scripts/regenerate.sh
# failed, e.g. its packages cannot be installed here).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
build=build
sizes=$(shapes bench)
steps=""
plots=1
tuning=""
sms=""
survey=0
sizes_given=0
plots_given=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift 2 ;;
    --sizes) sizes=$2; sizes_given=1; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --no-plots) plots=0; plots_given=0; shift ;;
    --plots) plots=1; plots_given=1; shift ;;
    --tuning) tuning=$2; shift 2 ;;
    --sms) sms=$2; shift 2 ;;
    --survey) survey=1; shift ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "bench.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done
if [ "$survey" = 1 ]; then
  if [ "$sizes_given" = 1 ] || [ -n "$sms" ]; then
    echo "bench.sh: --survey runs the survey's own shapes on the whole GPU; it takes neither --sizes nor --sms" >&2
    exit 2
  fi
  sizes=$(survey_shapes)
  plots=${plots_given:-0}  # the survey regenerates the plots and tables only when asked (--plots)
fi

if ! gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1) || [ -z "$gpu" ]; then
  echo "bench.sh: no NVIDIA GPU found (nvidia-smi); the benchmarks need one. scripts/regenerate.sh" \
       "rebuilds plots and tables from the committed results without a GPU." >&2
  exit 3
fi
slug=$(gpu_slug "$gpu")

scripts/ensure_deps.sh
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSGEMM_BUILD_TESTS=OFF "-DSGEMM_TUNING=$tuning" >/dev/null
# With --steps, only those steps are built (and the TF32 control, which the bench runs).
targets=()
if [ -n "$steps" ]; then
  targets=(--target $steps)
  [ "$survey" = 1 ] || [ -n "$sms" ] || targets+=(control_cublas_tf32)
fi
cmake --build "$build" -j "$(nproc)" "${targets[@]}"

[ -n "$steps" ] || steps=$(list_steps)
out="results/$slug"
run_args=()
if [ "$survey" = 1 ]; then  # its own folder, never mixed with the bench rows of results/<gpu>/*.csv
  out="results/$slug/survey"
  run_args=(--time-ms 100)
elif [ -n "$sms" ]; then  # an emulation: its own folder, never read as this GPU's (or another's) results
  out="results/$slug/emulations/${tuning:-default}-$sms-sms"
  run_args=(--sms "$sms")
  plots=0
fi
mkdir -p "$out"
failed=()
skipped=()
for step in $steps; do
  csv="$out/$step.csv"
  rm -f "$csv"  # a results file holds one run of the step: the newest
  # A step that fails a check has no row for that size; the others are still measured.
  rc=0
  "$build/bin/$step" --sizes "$sizes" --csv "$csv" "${run_args[@]}" || rc=$?
  case $rc in
    0) ;;
    3) skipped+=("$step") ;;  # cannot run on this GPU; its line above says why
    *) failed+=("$step") ;;
  esac
done
if [ -z "$sms" ] && [ "$survey" = 0 ]; then
  mkdir -p "results/$slug/controls"
  csv="results/$slug/controls/cublas_tf32.csv"
  rm -f "$csv"
  if "$build/bin/control_cublas_tf32" --sizes "$sizes" --csv "$csv" --record-failures; then
    echo "bench.sh: the cuBLAS TF32 control PASSED the FP32-grade check; the check is broken" >&2
    exit 1
  fi
fi
echo "bench.sh: results in $out/"
if [ ${#skipped[@]} -gt 0 ]; then
  echo "bench.sh: skipped, as they cannot run on this GPU (each said why above): ${skipped[*]}"
fi
if [ "$plots" = 1 ] && ! scripts/regenerate.sh; then
  echo "bench.sh: results written to $out/, but the plots and tables were NOT regenerated" \
       "(scripts/regenerate.sh failed); run scripts/regenerate.sh on these results where plots/requirements.txt installs" >&2
  [ ${#failed[@]} -gt 0 ] || exit 4
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "bench.sh: FAILED (a check or a CUDA error): ${failed[*]}" >&2
  exit 1
fi
