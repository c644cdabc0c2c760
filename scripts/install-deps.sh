#!/usr/bin/env bash
# Installs what pqot needs to build, test and benchmark, only where it is missing:
# Debian packages (apt) and the npm packages pinned in package-lock.json.
# Safe to run again and again; prints one line when nothing was needed.
set -euo pipefail
cd "$(dirname "$0")/.."

# The sanitizer and fuzz builds use clang 16 with its sanitizer runtimes (Makefile, SAN_CXX).
# The tests need valgrind (the constant-time check) and systemd-analyze from systemd (the packaged
# unit's check); configuring with tests fails without them, and without node (below). The SRUP-PQ
# demo drives the broker with mosquitto-clients (mosquitto_sub, mosquitto_pub). `make bench-trip` runs Debian's
# wireguard-go (with wireguard-tools' wg) beside TRIP and reads tripd's metrics with curl.
APT_PACKAGES=(
  build-essential cmake ninja-build pkg-config clang-16 libclang-rt-16-dev valgrind systemd
  libssl-dev openssl libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev libbenchmark-dev
  libasio-dev libspdlog-dev libtomlplusplus-dev libmodbus-dev libmosquitto-dev mosquitto
  mosquitto-clients libsqlite3-dev iproute2 gnuplot-nox faketime wireguard-go wireguard-tools curl
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "install-deps: installing Debian packages: ${missing[*]}"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null; then sudo="sudo"; else
      echo "install-deps: need root to install: apt-get install ${missing[*]}" >&2; exit 1
    fi
  fi
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# Node.js 20 comes with the machine (Debian's nodejs is older and must not replace it): never
# installed here, only checked.
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "install-deps: node and npm (Node.js >= 20) are required and were not found; install Node.js 20" \
       "from nodejs.org or NodeSource (not Debian's nodejs package)" >&2
  exit 1
fi
if ! node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)'; then
  echo "install-deps: Node.js >= 20 is required, found $(node --version)" >&2
  exit 1
fi
# npm packages exactly as locked; re-run only when the lockfile changed.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "install-deps: npm ci (package-lock.json)"
  npm ci --no-audit --no-fund --loglevel=error >/dev/null
  touch node_modules/.package-lock.json
fi
echo "install-deps: all dependencies present"
