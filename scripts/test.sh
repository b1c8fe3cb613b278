#!/usr/bin/env bash
# The test command: builds everything, runs the host unit tests (Catch2) and the GPU suite
# (every step on adversarial shapes; reported SKIPPED where there is no GPU), then the plot
# tool's tests. Installs Catch2 (Debian's package) and the plot tool's pinned Python
# packages (into .venv-plots) if missing.
#   scripts/test.sh            (BUILD_DIR=build-test by default)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-test}
scripts/ensure_deps.sh catch2
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSGEMM_REQUIRE_TESTS=ON  # no Catch2: fail here
cmake --build "$build" -j "$(nproc)"
(cd "$build" && ctest --output-on-failure -j "$(nproc)")
scripts/regenerate.sh --help >/dev/null  # creates .venv-plots with the pinned packages if needed
.venv-plots/bin/python -m unittest discover -s plots/tests -t .
python3 -m unittest discover -s tests -p "test_*.py"  # the scripts and the steps' shared helpers
echo "test.sh: all tests passed"
