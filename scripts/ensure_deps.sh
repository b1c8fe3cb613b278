#!/usr/bin/env bash
# Installs, from Debian's packages, what the two set-up commands need and a fresh Debian
# machine with the CUDA toolkit may lack: CMake, a C++ compiler, Python's venv module and
# (for the tests) Catch2. Does nothing for what is already there.
#   scripts/ensure_deps.sh [catch2]
set -euo pipefail
want=()
command -v cmake >/dev/null || want+=(cmake)
command -v g++ >/dev/null || want+=(g++)
python3 -c 'import ensurepip, venv' 2>/dev/null || want+=(python3-venv)
if [ "${1:-}" = catch2 ] && ! dpkg -s catch2 >/dev/null 2>&1 \
   && ! ls /usr/lib/cmake/Catch2/Catch2Config.cmake /usr/local/lib/cmake/Catch2/Catch2Config.cmake >/dev/null 2>&1; then
  want+=(catch2)
fi
[ ${#want[@]} -eq 0 ] && exit 0
echo "ensure_deps.sh: installing ${want[*]}" >&2
sudo=""
[ "$(id -u)" = 0 ] || sudo=sudo
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${want[@]}" >/dev/null
