# shellcheck shell=bash
# The project's facts for the shell scripts, each read from its one place (source this file):
#   list_steps          the step directories NN_slug, in order: steps/[0-9][0-9]_*, the
#                       pattern CMakeLists.txt and scripts/project.py use
#   shapes SET          the sizes of a named set of tests/shapes.txt (e.g. sanitize)
#   survey_shapes       the shape survey: the sizes of every survey.* set, joined in file order
#   survey_kind SHAPE   the kind of a survey shape: its set's name after "survey." (a cube N
#                       matches NxNxN)
#   gpu_slug NAME       a GPU's name as results/ names its folder ("NVIDIA H200" -> nvidia-h200)
# The target architecture is CMake's (CMAKE_CUDA_ARCHITECTURES in the build's cache); scripts
# build through CMake and never name one.
SGEMM_ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

list_steps() {
  local dir
  for dir in "$SGEMM_ROOT"/steps/[0-9][0-9]_*/; do
    dir=${dir%/}
    echo "${dir##*/}"
  done | LC_ALL=C sort
}

shapes() {
  awk -v set="$1" '$1 == set { print $2; found = 1 } END { exit !found }' "$SGEMM_ROOT/tests/shapes.txt" ||
    { echo "lib.sh: no shape set '$1' in tests/shapes.txt" >&2; return 1; }
}

survey_shapes() {
  awk '$1 ~ /^survey\./ { out = out (out == "" ? "" : ",") $2 } END { if (out == "") exit 1; print out }' \
      "$SGEMM_ROOT/tests/shapes.txt" ||
    { echo "lib.sh: no survey.* shape sets in tests/shapes.txt" >&2; return 1; }
}

survey_kind() {
  awk -v shape="$1" '
    function mnk(s) { return s ~ /x/ ? s : s "x" s "x" s }
    $1 ~ /^survey\./ {
      n = split($2, sizes, ",")
      for (i = 1; i <= n; i++)
        if (mnk(sizes[i]) == mnk(shape)) { kind = substr($1, 8); exit }
    }
    END { if (kind == "") exit 1; print kind }' "$SGEMM_ROOT/tests/shapes.txt" ||
    { echo "lib.sh: $1 is in no survey.* set of tests/shapes.txt" >&2; return 1; }
}

gpu_slug() {
  echo "$1" | tr '[:upper:]' '[:lower:]' | sed -E 's/[^a-z0-9]+/-/g; s/^-|-$//g'
}
