#!/bin/sh
# CMake's compiler launcher for the variant targets (see CMakeLists.txt): runs the compile
# command and keeps its messages (ptxas's registers and spills, or the errors) in LOG, so
# scripts/sweep.py can read one variant's messages out of a parallel build.
#   log_compile.sh LOG COMMAND...
log=$1
shift
"$@" >"$log" 2>&1
rc=$?
cat "$log" >&2
exit $rc
