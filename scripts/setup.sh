#!/usr/bin/env bash
# Installs what gangway needs to build and test, from Debian 12's packages only. Idempotent and
# quick when everything is already there (no apt-get call at all). Run as root on a fresh machine.
set -euo pipefail

packages=(
  g++ cmake make ninja-build pkg-config git clang-format clang-tidy
  clang libclang-rt-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  libyaml-cpp-dev nlohmann-json3-dev libcli11-dev libfmt-dev libboost-dev
  python3 python3-yaml python3-matplotlib
  chromium
  haproxy
)
# chromium: the HTML reports' test (tests/report) opens them in a real, headless browser.
# The OpenAI Node client test (tests/client) needs node >= 18 and npm; Debian 12's will do when
# the machine has none of its own.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  packages+=(nodejs npm)
fi

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  if [[ $(id -u) -ne 0 ]]; then
    echo "setup: these Debian packages are missing and installing them needs root: ${missing[*]}" >&2
    exit 2
  fi
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The official OpenAI Node client, at the version the committed lockfile pins (tests/client).
client_dir="$(cd "$(dirname "$0")/.." && pwd)/tests/client"
if [[ ! -d "$client_dir/node_modules/openai" || "$client_dir/package-lock.json" -nt "$client_dir/node_modules" ]]; then
  echo "setup: npm ci in tests/client"
  (cd "$client_dir" && npm ci --no-audit --no-fund --loglevel=error)
  touch "$client_dir/node_modules"
fi
