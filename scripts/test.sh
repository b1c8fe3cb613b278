#!/usr/bin/env bash
# The test command: builds everything, runs the host unit tests (Catch2) and the GPU suite
# (every step on adversarial shapes; reported SKIPPED where there is no GPU), then the plot
# tool's tests. Installs Catch2 (Debian's package) and the plot tool's pinned Python
# packages (into .venv-plots) if missing.
#   scripts/test.sh            (BUILD_DIR=build-test by default)
# CTest's and Python's reports go to BUILD_DIR/ctest.log and BUILD_DIR/python-tests.log and
# are shown when a test fails (CTest's without the list of skipped tests); the output ends
# with one line: how many host tests passed, GPU tests passed or were skipped (and why), and
# Python tests passed. Exit code 0 when nothing failed.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build-test}
scripts/ensure_deps.sh catch2
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSGEMM_REQUIRE_TESTS=ON  # no Catch2: fail here
cmake --build "$build" -j "$(nproc)"

ctest_log="$build/ctest.log"
if ! (cd "$build" && ctest --output-on-failure -j "$(nproc)" --output-junit ctest.xml) > "$ctest_log" 2>&1; then
  # Everything but the lines of tests that passed or were skipped: the failures, in full.
  grep -v -E '^ *Start +[0-9]+: |^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*(Passed|\*\*\*Skipped) +[0-9.]+ sec$|^\s+[0-9]+ - .* \(Skipped\)$|^The following tests did not run:$' \
    "$ctest_log" >&2 || true
  echo "test.sh: CTest FAILED (the failures above; the whole report: $ctest_log)" >&2
  exit 1
fi

py_log="$build/python-tests.log"
: > "$py_log"
python_tests() {  # WHAT COMMAND...
  if ! "${@:2}" >> "$py_log" 2>&1; then
    cat "$py_log" >&2
    echo "test.sh: Python tests of $1 FAILED (the report: $py_log)" >&2
    exit 1
  fi
}
scripts/regenerate.sh --help >/dev/null  # creates .venv-plots with the pinned packages if needed
python_tests "the plot tool" .venv-plots/bin/python -m unittest discover -s plots/tests -t .
python_tests "the scripts and the steps' shared helpers" python3 -m unittest discover -s tests -p "test_*.py"

# The one-line summary, from CTest's JUnit report (each test's status and output), CTest's
# list of tests and their labels, and unittest's "Ran N tests" lines.
(cd "$build" && ctest --show-only=json-v1) > "$build/ctest-tests.json"
python3 - "$build/ctest.xml" "$build/ctest-tests.json" "$py_log" <<'EOF'
import collections, json, re, sys, xml.etree.ElementTree as ET

junit, listing, py_log = sys.argv[1:]
labels = {t["name"]: next((p["value"] for p in t.get("properties", []) if p["name"] == "LABELS"), [])
          for t in json.load(open(listing))["tests"]}
count = collections.Counter()
why = collections.Counter()
for case in ET.parse(junit).getroot().iter("testcase"):
    kind = "gpu" if "gpu" in labels.get(case.get("name"), []) else "host"
    status = {"run": "passed", "notrun": "skipped"}.get(case.get("status"), case.get("status"))
    count[kind, status] += 1
    if status == "skipped":
        out = (case.findtext("system-out") or "").strip().splitlines()
        # "<binary>: no CUDA GPU found (...)": the reason without the binary's path
        why[out[-1].split(": ", 1)[-1] if out else "no output"] += 1
text = open(py_log).read()
py_ran = sum(int(n) for n in re.findall(r"^Ran (\d+) tests?", text, re.M))
py_skipped = sum(int(n) for n in re.findall(r"^OK \(.*skipped=(\d+)", text, re.M))

def part(kind, name):
    done = ", ".join("%d %s" % (count[kind, s], s) for s in ("passed", "skipped", "failed") if count[kind, s])
    return "%s tests %s" % (name, done or "none")

gpu = part("gpu", "GPU")
if why:
    reason, n = why.most_common(1)[0]
    gpu += ": %s%s" % (reason[:120], " (and %d other reasons)" % (len(why) - 1) if len(why) > 1 else "")
py = "Python tests %d passed" % (py_ran - py_skipped) + (", %d skipped" % py_skipped if py_skipped else "")
print("test.sh: all tests passed: %s; %s; %s" % (part("host", "host"), gpu, py))
EOF
