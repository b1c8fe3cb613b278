#!/usr/bin/env bash
# Regenerates docs/plots/ and the results tables in the markdown files from results/*.csv.
# Needs no GPU. Installs the pinned plots/requirements.txt into .venv-plots on first use (or
# when a pin changed), so the plots come out byte-for-byte like the committed ones.
#
#   scripts/regenerate.sh            update the generated files
#   scripts/regenerate.sh --check    write nothing; exit 1 if any generated file is stale
#
# Any arguments are passed on to the plot tool, `python -m plots` (see its --help).
# Exit code 4: the pinned packages cannot be installed here (no package index, no venv
# module); one line says so, pip's messages are in .venv-plots/install.log.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$repo/.venv-plots"
requirements="$repo/plots/requirements.txt"

# True when the venv's Python runs and has every pinned version installed.
venv_matches_pins() {
  "$venv/bin/python" - "$requirements" 2>/dev/null <<'EOF'
import sys
from importlib.metadata import PackageNotFoundError, version

for line in open(sys.argv[1]):
    name, sep, pinned = line.split("#")[0].strip().partition("==")
    try:
        if sep and version(name) != pinned:
            sys.exit(1)
    except PackageNotFoundError:
        sys.exit(1)
EOF
}

if ! venv_matches_pins; then
  echo "regenerate.sh: installing plots/requirements.txt into .venv-plots" >&2
  mkdir -p "$venv"
  log="$venv/install.log"
  if ! { "${PYTHON:-python3}" -m venv "$venv" &&
         "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$requirements"; } > "$log" 2>&1; then
    echo "regenerate.sh: cannot install plots/requirements.txt here ($(grep -v '^\s*$' "$log" | tail -n 1 | cut -c1-120));" \
         "pip's messages: .venv-plots/install.log" >&2
    exit 4
  fi
fi

cd "$repo"
exec "$venv/bin/python" -m plots "$@"
