#!/bin/sh
# expect_exit.sh CODE PROGRAM ARGS...: passes when PROGRAM exits with CODE. Exit code 3 (no
# GPU) is passed through, so CTest reports the test as skipped on a machine without one.
want=$1; shift
"$@"
rc=$?
[ "$rc" = 3 ] && exit 3
[ "$rc" = "$want" ] && exit 0
echo "expect_exit.sh: expected exit code $want, got $rc" >&2
exit 1
