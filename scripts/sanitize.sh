#!/usr/bin/env bash
# Runs every step in check mode on small adversarial shapes under compute-sanitizer's four
# tools (memcheck, racecheck, synccheck, initcheck), and a few timed repetitions too. Only our
# kernels are instrumented (--kernel-name kns=sgemm_kernel: every kernel of ours has
# sgemm_kernel in its name, the reductions of steps 15 and 16 and step 28's pass,
# largest_magnitudes_for_sgemm_kernel, too): cuBLAS, which computes the reference, is not
# ours to fix. The shapes include several k tiles wholly inside A and B
# (300x300x200, 384x256x160), so the steady-state copies without zero-fill of steps 09 and on
# run under the tools, not only the edge tiles. A shape set sanitize.STEP in tests/shapes.txt
# adds shapes for that step only (code paths no other step has); a line
# sanitize_exponents.STEP EA,EB runs that step's shapes once more with --exponents EA,EB
# (step 28's scaled path, which the random inputs in [-1, 1] never take).
#
#   scripts/sanitize.sh [BUILD_DIR] [LOG_DIR]     (defaults: build, build/sanitizer)
#   SANITIZE_STEPS="15_split_k 16_stream_k" scripts/sanitize.sh ...   (some steps only)
# Exits non-zero if any tool reports an error or any check fails.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
build=${1:-build}
logs=${2:-$build/sanitizer}
mkdir -p "$logs"
command -v compute-sanitizer >/dev/null || { echo "compute-sanitizer not found (it ships with the CUDA toolkit)"; exit 2; }
sizes=$(shapes sanitize)
timed="--sizes $(shapes sanitize_timed) --reps 2 --warmup 1 --no-cublas-timing"  # the timing loop's launches
fail=0
run() {  # tool step beta
  local tool=$1 step=$2 beta=$3 log="$logs/$2.$1.beta$3.log" rc=0 all=$sizes extra
  # A set sanitize.STEP adds shapes that reach code paths of that step only.
  extra=$(awk -v set="sanitize.$step" '$1 == set { print $2 }' "$SGEMM_ROOT/tests/shapes.txt")
  [ -n "$extra" ] && all="$sizes,$extra"
  compute-sanitizer --tool "$tool" --kernel-name kns=sgemm_kernel --error-exitcode 99 \
    "$build/bin/$step" --check --sizes "$all" --alpha 1.5 --beta "$beta" >"$log" 2>&1 || rc=$?
  if [ $rc = 0 ]; then
    compute-sanitizer --tool "$tool" --kernel-name kns=sgemm_kernel --error-exitcode 99 \
      "$build/bin/$step" $timed --alpha 1.5 --beta "$beta" >>"$log" 2>&1 || rc=$?
  fi
  exponents=$(awk -v set="sanitize_exponents.$step" '$1 == set { print $2 }' "$SGEMM_ROOT/tests/shapes.txt")
  if [ $rc = 0 ] && [ -n "$exponents" ]; then
    compute-sanitizer --tool "$tool" --kernel-name kns=sgemm_kernel --error-exitcode 99 \
      "$build/bin/$step" --check --sizes "$all" --alpha 1.5 --beta "$beta" --exponents "$exponents" >>"$log" 2>&1 || rc=$?
  fi
  if [ "$rc" = 0 ]; then
    echo "ok      $tool $step beta=$beta"
  else
    echo "FAILED  $tool $step beta=$beta (rc $rc, see $log)"
  fi
  return 0  # the summary counts the failures
}
export -f run
export logs sizes timed build SGEMM_ROOT
steps=${SANITIZE_STEPS:-$(list_steps | grep -v '^00_cublas$')}
jobs=()
for tool in memcheck racecheck synccheck initcheck; do
  for step in $steps; do
    for beta in 0 0.5; do jobs+=("$tool $step $beta"); done
  done
done
# Several processes share the GPU; correctness, not timing, is measured here.
printf '%s\n' "${jobs[@]}" | xargs -P "${SANITIZE_JOBS:-6}" -L 1 bash -c 'run "$@"' _ | sort -k2,3 | tee "$logs/summary.txt" || true
if grep -q FAILED "$logs/summary.txt" || [ "$(grep -c . "$logs/summary.txt")" != "${#jobs[@]}" ]; then fail=1; fi
echo "sanitizer: $(grep -c '^ok' "$logs/summary.txt") passed, $(grep -c FAILED "$logs/summary.txt" || true) failed"
exit $fail
