#!/usr/bin/env bash
# Re-tunes the steps for the GPU present: sweeps each step's knobs (scripts/tune_space.txt)
# within what this GPU allows, checks every variant, times them against cuBLAS in the same
# run, writes this GPU's tuning (tunings/<gpu>.txt, which the build then uses) and its tuning
# rows (results/<gpu>/tuning/<step>.csv, accuracy columns included), rebuilds, and prints
# each step's ratio to cuBLAS before and after.
#
#   scripts/tune.sh [--steps "13_multi_stage 14_large_thread_tile"] [--budget MINUTES]
#                   [--build DIR] [--reps N]
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 scripts/tune.py "$@"
