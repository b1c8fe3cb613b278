#!/usr/bin/env bash
# Shows how one step's kernel differs from another's: `diff -u` of their .cu files.
#
#   scripts/stepdiff.sh 4 5          step 04 -> step 05
#   scripts/stepdiff.sh 5            the step before 05 -> step 05
#   scripts/stepdiff.sh --stat 5     only the counts of lines added and removed
#
# A step is named by its number (5), its directory (05_thread_tiling, steps/05_thread_tiling)
# or the part after the number (thread_tiling). The kernel of steps/NN_slug/ is slug.cu, or
# the directory's only .cu file. Step 00 (cuBLAS) is never "the step before" another.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
steps_dir="$repo/steps"

usage() {
  echo "usage: scripts/stepdiff.sh [--stat] STEP [STEP]" >&2
  echo "  with one STEP N: diff the step before N against N" >&2
  exit 2
}

die() {
  echo "stepdiff.sh: $*" >&2
  exit 2
}

# Step directory names, in step order (by number, then name).
all_steps() {
  local dir
  for dir in "$steps_dir"/*/; do
    dir="${dir%/}"
    dir="${dir##*/}"
    [[ "$dir" =~ ^[0-9]+_. ]] && echo "$dir"
  done | sort -t _ -k 1,1n -k 2
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
  done < <(all_steps)
  case ${#matches[@]} in
    1) echo "${matches[0]}" ;;
    0) die "unknown step '$1'; known steps: $(all_steps | paste -s -d ' ' -)" ;;
    *) die "step '$1' is ambiguous: ${matches[*]}" ;;
  esac
}

# Prints the step before $1, skipping step 00 (the cuBLAS reference).
previous_step() {
  local step previous=""
  while read -r step; do
    if [[ "$step" == "$1" ]]; then
      [[ -n "$previous" ]] || die "step $1 has no previous step to compare with"
      echo "$previous"
      return
    fi
    [[ $((10#${step%%_*})) -ne 0 ]] && previous="$step"
  done < <(all_steps)
}

# Prints the kernel source of step $1, relative to the repository root.
kernel_of() {
  local step="$1" files
  if [[ -f "$steps_dir/$step/${step#*_}.cu" ]]; then
    echo "steps/$step/${step#*_}.cu"
    return
  fi
  files=("$steps_dir/$step"/*.cu)
  [[ ${#files[@]} -eq 1 && -f "${files[0]}" ]] ||
    die "steps/$step has no ${step#*_}.cu and not exactly one .cu file"
  echo "steps/$step/${files[0]##*/}"
}

stat=false
if [[ "${1:-}" == "--stat" ]]; then
  stat=true
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
if $stat; then
  # The same difflib count as the table in docs/step-diffs.md (diff's own count can differ
  # by a line or two where the two algorithms align a change differently).
  python3 -c '
import sys
from plots.sgemm_plots import diff_line_counts
added, removed = diff_line_counts(sys.argv[1], sys.argv[2])
print(f"{sys.argv[1]} -> {sys.argv[2]}: {added} lines added, {removed} lines removed")
' "$old_file" "$new_file"
else
  # The labels replace file modification times, which mean nothing here. diff exits 1
  # when the files differ, which is the expected case.
  diff -u --label "$old_file" --label "$new_file" "$old_file" "$new_file" || [[ $? -eq 1 ]]
fi
