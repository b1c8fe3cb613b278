#!/usr/bin/env bash
# One call on a lent GPU machine (see docs/reproduce.md): build, host tests and the GPU
# suite, compute-sanitizer, SASS statistics, benchmarks and sweeps, with every log under
# OUT_DIR so it comes back.
#
#   scripts/device_run.sh OUT_DIR PHASE...
#   phases: build  test  sanitize  sass  bench[=SIZES]  sweep=FILE (one sweep.py argument line per line)
#           survey (bench.sh --survey: every survey.* shape of tests/shapes.txt, results/<gpu>/survey/)
#           faults (planted bugs must be caught)  accuracy (both margins of the FP32-grade limit)
#           ncu=STEP[,STEP...]  (profiler metrics at 4096)
#           compare=FILE (profiled variants for the pages' comparison tables; see below)
#           emulate-test=TUNING:SMS  the GPU suite built with tunings/TUNING.txt, run on SMS SMs
#           emulate-bench=TUNING:SMS bench.sh's sizes with that build on SMS SMs (results/<gpu>/emulations/)
#           tune=STEPS[:MINUTES]     scripts/tune.sh for these steps ("all": every step)
#           experiment=FILE  a step's forms, forced by the environment, beside its rule (see the phase)
# Environment: CTEST_REGEX (test: only the tests it matches), CTEST_TIMEOUT, BENCH_STEPS (bench and
# survey: only these steps), EMU_STEPS / EMU_SIZES (emulate-bench), SANITIZE_STEPS (sanitize),
# FAULT_STEPS (faults), BUILD_TARGETS (build: only these targets, e.g. "00_cublas 21_chosen_tile",
# so that a run about a few steps spends its minutes on them; the other steps' tests then fail
# for want of their programs, so pair it with CTEST_REGEX).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/lib.sh
out=${1:?usage: scripts/device_run.sh OUT_DIR PHASE...}
shift
logs="$out/logs"
mkdir -p "$logs"
build=build-device
status=0
# The metric names live in scripts/ncu_metrics.txt; the comparison tables add the set "compare".
NCU_METRICS=$(python3 scripts/ncu_collect.py --list profile)
NCU_COMPARE_METRICS=$(python3 scripts/ncu_collect.py --list profile,compare)
note() { echo "== $* ($(date -u +%T))" | tee -a "$out/summary.txt"; }

for phase in "$@"; do
  case "$phase" in
    build)
      note build
      nvidia-smi > "$logs/nvidia-smi.txt" 2>&1
      prefix=""
      if ls .deps/catch2_*.deb >/dev/null 2>&1; then  # Catch2 travels as a .deb: no registry there
        mkdir -p /tmp/catch2 && dpkg -x .deps/catch2_*.deb /tmp/catch2 && prefix=/tmp/catch2/usr
      fi
      # The architectures are CMake's default (the GPU present); CUDAARCHS=... overrides it.
      # SGEMM_PTXAS_VERBOSE: the build log carries every kernel's registers and spills.
      cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSGEMM_PTXAS_VERBOSE=ON -DSGEMM_CLASS_BUILDS=OFF -DSGEMM_SUITE_SMS= \
            ${prefix:+-DCMAKE_PREFIX_PATH=$prefix} > "$logs/configure.log" 2>&1 || status=1
      # -k: a step that fails to build does not stop the others (its tests then fail).
      cmake --build "$build" -j "$(nproc)" ${BUILD_TARGETS:+--target $BUILD_TARGETS} -- -k > "$logs/build.log" 2>&1 || status=1
      grep -E "error|registers|spill" "$logs/build.log" | tail -n 40 >> "$out/summary.txt"
      ;;
    test)
      note test
      # Verbose: every shape's line (its error against the FP64 reference) is kept, so the
      # margins of the FP32-grade limit can be read off the whole suite afterwards.
      (cd "$build" && timeout "${CTEST_TIMEOUT:-3600}" ctest -j 8 -V ${CTEST_REGEX:+-R "$CTEST_REGEX"}) > "$logs/ctest.log" 2>&1 || status=1
      python3 scripts/accuracy_margins.py --from-ctest-log "$logs/ctest.log" --out "$logs/accuracy_suite.csv" \
        >> "$out/summary.txt" 2>&1 || status=1
      grep -E "tests passed|\(Failed\)|\*\*\*Failed|Not Run" "$logs/ctest.log" >> "$out/summary.txt"
      ;;
    sanitize)
      note sanitize
      SANITIZE_JOBS=8 scripts/sanitize.sh "$build" "$logs/sanitizer" > "$logs/sanitize.log" 2>&1 || status=1
      grep -E "FAILED|sanitizer:" "$logs/sanitize.log" >> "$out/summary.txt"
      ;;
    sass)
      note sass
      for step in $(list_steps); do
        exe="$build/bin/$step"
        cuobjdump --dump-sass "$exe" > "$logs/$step.sass" 2>&1
        # The kernel's static instruction mix, by opcode (predicates stripped): FFMA, shared
        # loads by width, shared stores, async copies, global loads, local memory, barriers.
        ops=$(grep -oE '^\s+/\*[0-9a-f]{4,}\*/\s+(@!?U?P[0-9T] )?[A-Z0-9.]+' "$logs/$step.sass" | awk '{print $NF}')
        c() { echo "$ops" | grep -cE "$1"; }
        printf '%-26s FFMA %5d  LDS %4d  LDS.64 %4d  LDS.128 %4d  STS %4d  LDGSTS %4d  LDG %4d  LDL/STL %d  BAR %d\n' \
          "$step" "$(c '^FFMA')" "$(c '^LDS(\.U)?$')" "$(c '^LDS(\.U)?\.64$')" "$(c '^LDS(\.U)?\.128$')" "$(c '^STS')" \
          "$(c '^LDGSTS')" "$(c '^LDG(\.|$)')" "$(c '^(LDL|STL)')" "$(c '^BAR\.SYNC')"
      done | tee "$logs/sass_stats.txt" >> "$out/summary.txt"
      ;;
    bench|bench=*)
      sizes=${phase#bench}; sizes=${sizes#=}; sizes=${sizes:-$(shapes bench)}
      note "bench $sizes"
      scripts/bench.sh --build "$build" --sizes "$sizes" --no-plots ${BENCH_STEPS:+--steps "$BENCH_STEPS"} \
        > "$logs/bench.log" 2>&1 || status=1
      grep -E "^[0-9]{2}_| 4096 " "$logs/bench.log" >> "$out/summary.txt"
      ;;
    survey)
      note survey
      scripts/bench.sh --build "$build" --survey --no-plots ${BENCH_STEPS:+--steps "$BENCH_STEPS"} \
        > "$logs/survey.log" 2>&1 || status=1
      grep -E "^[0-9]{2}_|FAILED|skipped" "$logs/survey.log" >> "$out/summary.txt"
      ;;
    sweep=*)
      file=${phase#sweep=}
      note "sweep $file"
      mkdir -p "$out/tuning"
      while read -r line; do
        [ -z "$line" ] && continue
        step=$(echo "$line" | sed -E 's/.*--step ([^ ]+).*/\1/')
        eval "python3 scripts/sweep.py --build $build --csv $out/tuning/$step.csv $line" >> "$logs/sweep.log" 2>&1 || status=1
      done < "$file"
      cat "$logs/sweep.log" >> "$out/summary.txt"
      ;;
    faults)
      note faults
      python3 scripts/planted_faults.py --build "$build" ${FAULT_STEPS:+--steps "$FAULT_STEPS"} > "$logs/planted_faults.log" 2>&1 || status=1
      cat "$logs/planted_faults.log" >> "$out/summary.txt"
      ;;
    accuracy)
      note accuracy
      python3 scripts/accuracy_margins.py --build "$build" --out "$logs/accuracy_margins.csv" \
        > "$logs/accuracy_margins.txt" 2>&1 || status=1
      cat "$logs/accuracy_margins.txt" >> "$out/summary.txt"
      ;;
    ncu=*)
      note "$phase"
      runs=()
      for step in $(echo "${phase#ncu=}" | tr ',' ' '); do
        ncu --clock-control none --kernel-name regex:^sgemm_kernel --launch-count 1 --metrics "$NCU_METRICS" --csv \
            "$build/bin/$step" --size 4096 --time-only --reps 1 --warmup 0 --no-cublas-timing \
            > "$logs/ncu.$step.csv" 2>&1 || status=1
        runs+=("$step=$logs/ncu.$step.csv")
      done
      python3 scripts/ncu_collect.py --out "$logs/ncu_4096.csv" --metrics profile "${runs[@]}" || status=1
      ;;
    compare=*)
      # One line per column of a page's comparison table: PAGE|LABEL|STEP|NAME=V NAME=V...
      # (no NAME=V: the step as shipped). Variants are built with scripts/sweep.py. Commands in
      # the loop read /dev/null, so none of them can eat the list's remaining lines.
      file=${phase#compare=}
      note "compare $file"
      runs=()
      n=0
      while IFS='|' read -r page label step sets; do
        [ -z "$page" ] && continue
        n=$((n + 1))
        exe="$build/bin/$step"
        if [ -n "$sets" ]; then
          args=(); for s in $sets; do args+=(--set "$s"); done
          exe=$(python3 scripts/sweep.py --build "$build" --step "$step" "${args[@]}" --build-only < /dev/null | sed -n 's/^EXE //p')
          [ -n "$exe" ] || { echo "compare: $step $sets did not build" >> "$out/summary.txt"; status=1; continue; }
        fi
        # A column is profiled only if it computes the right answer.
        "$exe" --check --sizes "$(shapes variant_check)" --beta 0.5 < /dev/null > "$logs/compare.$n.check.log" 2>&1 \
          || { echo "compare: $step $sets FAILED its check" >> "$out/summary.txt"; status=1; continue; }
        ncu --clock-control none --kernel-name regex:^sgemm_kernel --launch-count 1 --metrics "$NCU_COMPARE_METRICS" \
            --csv "$exe" --size 4096 --time-only --reps 1 --warmup 0 --no-cublas-timing < /dev/null > "$logs/compare.$n.csv" 2>&1 || status=1
        runs+=("$page|$label=$logs/compare.$n.csv")
      done < "$file"
      python3 scripts/ncu_collect.py --out "$logs/compare_4096.csv" --keys step,variant --metrics profile,compare "${runs[@]}" || status=1
      ;;
    emulate-test=*|emulate-bench=*)
      # Another class's tuning, built for this GPU, run on fewer of its SMs (--sms, green
      # contexts): an emulation of that class's SM count, never that GPU's results.
      spec=${phase#*=}; tuning=${spec%%:*}; sms=${spec##*:}
      ebuild="build-device-$tuning-$sms"
      note "$phase"
      cmake -S . -B "$ebuild" -DCMAKE_BUILD_TYPE=Release -DSGEMM_CLASS_BUILDS=OFF "-DSGEMM_TUNING=$tuning" \
            "-DSGEMM_SUITE_SMS=$sms" > "$logs/configure.$tuning-$sms.log" 2>&1 || status=1
      cmake --build "$ebuild" -j "$(nproc)" > "$logs/build.$tuning-$sms.log" 2>&1 || status=1
      if [ "${phase%%=*}" = emulate-test ]; then
        (cd "$ebuild" && timeout "${CTEST_TIMEOUT:-3600}" ctest -L gpu -j 8 -V) > "$logs/ctest.$tuning-$sms.log" 2>&1 || status=1
        grep -E "tests passed|\(Failed\)|\*\*\*Failed|Not Run" "$logs/ctest.$tuning-$sms.log" >> "$out/summary.txt"
      else
        scripts/bench.sh --build "$ebuild" --tuning "$tuning" --sms "$sms" --no-plots \
          ${EMU_STEPS:+--steps "$EMU_STEPS"} ${EMU_SIZES:+--sizes "$EMU_SIZES"} \
          > "$logs/bench.$tuning-$sms.log" 2>&1 || status=1
        grep -E "^[0-9]{2}_| 4096 |skipped" "$logs/bench.$tuning-$sms.log" >> "$out/summary.txt"
      fi
      ;;
    experiment=*)
      # One line per form of a step: NAME|STEP|VARIANT|ENV|SIZES. The step runs at SIZES with
      # ENV set (e.g. SGEMM_EDGES=cut; empty: its rule), checked and timed beside cuBLAS, into
      # results/<gpu>/experiments/NAME.csv, rows labelled VARIANT (plots/experiments.py).
      file=${phase#experiment=}
      note "experiment $file"
      slug=$(gpu_slug "$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)")
      mkdir -p "results/$slug/experiments"
      done_names=" "
      while IFS='|' read -r name step variant env sizes; do
        [ -z "$name" ] && continue
        case "$name" in \#*) continue ;; esac
        csv="results/$slug/experiments/$name.csv"
        case "$done_names" in *" $name "*) ;; *) rm -f "$csv"; done_names="$done_names$name " ;; esac
        env $env "$build/bin/$step" --sizes "$sizes" --csv "$csv" --variant "$variant" --time-ms 200 \
          < /dev/null >> "$logs/experiment.log" 2>&1 || { echo "experiment: $step $variant FAILED" >> "$out/summary.txt"; status=1; }
      done < "$file"
      grep -E "^[0-9]{2}_" "$logs/experiment.log" >> "$out/summary.txt"
      ;;
    tune=*)
      spec=${phase#tune=}; tsteps=${spec%%:*}; minutes=${spec#*:}
      [ "$minutes" = "$spec" ] && minutes=8
      [ "$tsteps" = all ] && tsteps=""
      note "$phase"
      scripts/tune.sh ${tsteps:+--steps "$(echo "$tsteps" | tr ',' ' ')"} --budget "$minutes" \
        > "$logs/tune.log" 2>&1 || status=1
      tail -n 40 "$logs/tune.log" >> "$out/summary.txt"
      ;;
    *) echo "device_run.sh: unknown phase $phase" >&2; status=2 ;;
  esac
done
note "done, status $status"
parts=(logs)
[ -d "$out/tuning" ] && parts+=(tuning)
tar -czf "$out/logs.tgz" -C "$out" "${parts[@]}"
[ -d results ] && tar -czf "$out/results.tgz" results tunings
rm -rf "$logs" "$out/tuning"
exit $status
