#!/usr/bin/env bash
# Shows how one step's kernel differs from another's: by default the code alone (the older
# file's knobs, `constexpr int|bool NAME = VALUE;`, set to the newer file's values), then the
# knobs the newer step re-tuned, "NAME old -> new" (see scripts/stepdiff.py).
#
#   scripts/stepdiff.sh 4 5          step 04 -> step 05
#   scripts/stepdiff.sh 5            the step before 05 -> step 05
#   scripts/stepdiff.sh --raw 5      the plain diff, re-tuned knobs and all
#   scripts/stepdiff.sh --stat 5     only the counts: code lines added and removed, knobs re-tuned
#
# A step is named by its number (5), its directory (05_thread_tiling, steps/05_thread_tiling)
# or the part after the number (thread_tiling). The kernel of steps/NN_slug/ is slug.cu.
# Step 00 (cuBLAS) is never "the step before" another.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
repo="$SGEMM_ROOT"

usage() {
  echo "usage: scripts/stepdiff.sh [--raw | --stat] STEP [STEP]" >&2
  echo "  with one STEP N: diff the step before N against N" >&2
  exit 2
}

die() {
  echo "stepdiff.sh: $*" >&2
  exit 2
}

# Prints the step directory named by $1, or fails with the list of known steps.
resolve_step() {
  local arg="${1#steps/}" step matches=()
  arg="${arg%/}"
  while read -r step; do
    if [[ "$arg" =~ ^[0-9]+$ ]]; then
      [[ $((10#${step%%_*})) -eq $((10#$arg)) ]] && matches+=("$step")
    elif [[ "$step" == "$arg" || "${step#*_}" == "$arg" ]]; then
      matches+=("$step")
    fi
  done < <(list_steps)
  case ${#matches[@]} in
    1) echo "${matches[0]}" ;;
    0) die "unknown step '$1'; known steps: $(list_steps | paste -s -d ' ' -)" ;;
    *) die "step '$1' is ambiguous: ${matches[*]}" ;;
  esac
}

# Prints the step $1 builds on: the one its header names ("previous: NN_slug"), else the step
# before it, skipping step 00 (the cuBLAS reference).
previous_step() {
  local step previous="" named
  named=$(head -n 1 "$repo/$(kernel_of "$1")" 2>/dev/null | sed -nE 's/.*previous: *([0-9]+_[A-Za-z0-9_]+).*/\1/p')
  if [[ -n "$named" && -d "$repo/steps/$named" ]]; then
    echo "$named"
    return
  fi
  while read -r step; do
    if [[ "$step" == "$1" ]]; then
      [[ -n "$previous" ]] || die "step $1 has no previous step to compare with"
      echo "$previous"
      return
    fi
    [[ $((10#${step%%_*})) -ne 0 ]] && previous="$step"
  done < <(list_steps)
}

# Prints the kernel source of step $1, relative to the repository root.
kernel_of() {
  echo "steps/$1/${1#*_}.cu"
}

mode=()
if [[ "${1:-}" == "--stat" || "${1:-}" == "--raw" ]]; then
  mode=("$1")
  shift
fi
case $# in
  1) new="$(resolve_step "$1")"; old="$(previous_step "$new")" ;;
  2) old="$(resolve_step "$1")"; new="$(resolve_step "$2")" ;;
  *) usage ;;
esac
old_file="$(kernel_of "$old")"
new_file="$(kernel_of "$new")"

cd "$repo"
exec python3 scripts/stepdiff.py "${mode[@]}" "$old_file" "$new_file"
