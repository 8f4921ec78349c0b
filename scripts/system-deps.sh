#!/usr/bin/env bash
# The system packages `make test` needs beyond Python, installed when missing.
#
#   neovim                         the Neovim plugin's tests (Debian's 0.7.2; 0.11 comes from PyPI)
#   chromium ripgrep fonts-dejavu-core   VS Code (code-server) driven by Playwright
#   libkrb5-dev build-essential python3  code-server's native modules build from source
#   iproute2 util-linux            the browser tests run in a loopback-only network namespace
#
# Idempotent and quick: it only looks for the files the tests use, and calls apt-get only when
# one is missing. As root on a Debian-like system it installs them; otherwise it names them
# and exits 3. Node.js 20 with npm is checked by editor-clients/vscode/scripts/setup-e2e.sh.
# Usage: scripts/system-deps.sh [--check]   (--check: never install, only report)
set -euo pipefail

CHECK_ONLY=false
[[ "${1:-}" == "--check" ]] && CHECK_ONLY=true

missing_packages() {  # the Debian packages whose files are absent, one per line
  [[ -x /usr/bin/nvim ]] || echo neovim
  [[ -x /usr/bin/chromium ]] || echo chromium
  command -v rg >/dev/null || echo ripgrep
  [[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ]] || echo fonts-dejavu-core
  command -v krb5-config >/dev/null || echo libkrb5-dev
  { command -v make && command -v g++ && command -v gcc; } >/dev/null || echo build-essential
  command -v python3 >/dev/null || echo python3
  command -v ip >/dev/null || echo iproute2
  command -v unshare >/dev/null || echo util-linux
}

mapfile -t missing < <(missing_packages)
if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

if ! $CHECK_ONLY && [[ "$EUID" == 0 ]] && command -v apt-get >/dev/null; then
  echo "system-deps: installing ${missing[*]} with apt-get (once; later runs skip this)"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  mapfile -t still < <(missing_packages)
  if [[ ${#still[@]} -eq 0 ]]; then
    exit 0
  fi
  echo "system-deps: apt-get finished but these are still missing: ${still[*]}" >&2
  exit 3
fi

{
  echo "system-deps: the editor tests need system packages that are not installed: ${missing[*]}"
  echo "system-deps: install them (as root) with:"
  echo "  apt-get install -y --no-install-recommends ${missing[*]}"
  echo "system-deps: then run make test again (make lint typecheck runs the checks that need none)."
} >&2
exit 3
