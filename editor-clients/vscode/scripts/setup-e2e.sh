#!/usr/bin/env bash
# Prepares everything the VS Code extension's tests need, idempotently:
#   1. checks the system packages (prints the apt-get line and exits 3 when some are missing),
#   2. `npm ci` of the extension (TypeScript, esbuild, playwright-core, vsce, ...) into node_modules/,
#   3. code-server 4.100.3 from npm into .e2e/code-server/ (offline ripgrep: Debian's rg),
#   4. builds and packages the extension into dist/switchman.vsix.
# Usage: scripts/setup-e2e.sh [--deps-only]   (--deps-only: step 2 only, enough for `npm test`)
# Only the npm registry is contacted. Everything lands in gitignored folders of editor-clients/vscode.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
E2E="$HERE/.e2e"
CODE_SERVER_VERSION=4.100.3
DEPS_ONLY=false
[[ "${1:-}" == "--deps-only" ]] && DEPS_ONLY=true

step() {  # step NAME COMMAND... : run, then print how long it took
  local name=$1 start=$SECONDS
  shift
  "$@"
  printf 'setup-e2e: %-36s %4ds\n' "$name" $((SECONDS - start))
}

hash_of() { sha256sum "$@" | sha256sum | cut -c1-16; }

# --- 1. system prerequisites ------------------------------------------------------------------
check_node() {
  if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    echo "setup-e2e: node and npm are required (Node.js 20; code-server $CODE_SERVER_VERSION runs on Node 20 only)." >&2
    exit 3
  fi
  local major
  major=$(node -p 'process.versions.node.split(".")[0]')
  if [[ "$major" != 20 ]]; then
    echo "setup-e2e: Node.js 20 is required (found $(node --version)); code-server $CODE_SERVER_VERSION refuses other versions." >&2
    exit 3
  fi
}

missing_packages() {  # prints the Debian packages whose files are absent
  [[ -x /usr/bin/chromium ]] || echo chromium
  command -v rg >/dev/null || echo ripgrep
  command -v krb5-config >/dev/null || echo libkrb5-dev
  { command -v make && command -v g++ && command -v gcc; } >/dev/null || echo build-essential
  command -v python3 >/dev/null || echo python3
  command -v ip >/dev/null || echo iproute2
  command -v unshare >/dev/null || echo util-linux
  [[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ]] || echo fonts-dejavu-core
  [[ -f /usr/include/node/node.h ]] || echo "nodejs(headers: /usr/include/node/node.h)"
}

check_system() {
  local missing
  missing=$(missing_packages | tr '\n' ' ')
  if [[ -n "${missing// /}" ]]; then
    echo "setup-e2e: missing system packages: $missing" >&2
    echo "setup-e2e: install them with:" >&2
    echo "  apt-get install -y --no-install-recommends chromium ripgrep libkrb5-dev build-essential python3 iproute2 util-linux fonts-dejavu-core" >&2
    exit 3
  fi
}

# --- 2. the extension's own dependencies -------------------------------------------------------
npm_env() {
  export npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false \
         npm_config_progress=false PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1
}

install_extension_deps() {
  local stamp="$HERE/node_modules/.switchman-lock" want
  want=$(hash_of "$HERE/package-lock.json")
  if [[ -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then return; fi
  (cd "$HERE" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" > "$stamp"
}

# --- 3. code-server ----------------------------------------------------------------------------
seed_ripgrep() {  # @vscode/ripgrep's postinstall downloads rg from GitHub; give it Debian's instead
  local version=1.15.11 target cache  # the @vscode/ripgrep that code-server 4.100.3 ships
  case "$(uname -m)" in
    x86_64) target=x86_64-unknown-linux-musl ;;
    aarch64) target=aarch64-unknown-linux-musl ;;
    *) echo "setup-e2e: no ripgrep seed for $(uname -m)" >&2; exit 3 ;;
  esac
  cache="$E2E/tmp/vscode-ripgrep-cache-$version"
  mkdir -p "$cache" "$E2E/tmp/rg"
  cp "$(command -v rg)" "$E2E/tmp/rg/rg"
  tar czf "$cache/ripgrep-v13.0.0-10-$target.tar.gz" -C "$E2E/tmp/rg" rg
}

install_code_server() {
  local dir="$E2E/code-server" want
  want=$(hash_of "$HERE/test/e2e/code-server/package.json" "$HERE/test/e2e/code-server/package-lock.json")
  if [[ -x "$dir/node_modules/.bin/code-server" && -f "$dir/.stamp" && "$(cat "$dir/.stamp")" == "$want" ]]; then return; fi
  rm -rf "$dir" "$E2E/tmp"
  mkdir -p "$dir"
  cp "$HERE/test/e2e/code-server/package.json" "$HERE/test/e2e/code-server/package-lock.json" "$dir/"
  seed_ripgrep
  # code-server's postinstall builds native modules (node-pty, kerberos, argon2) against the system
  # Node headers, as root, running npx node-gyp: allow exactly that, and no prebuilt downloads.
  (cd "$dir" && TMPDIR="$E2E/tmp" npm_config_nodedir=/usr npm_config_yes=true npm_config_unsafe_perm=true \
    npm_config_dangerously_allow_all_scripts=true npm_config_build_from_source=true \
    npm ci --no-audit --no-fund --loglevel=error > "$E2E/code-server-install.log" 2>&1) || {
      echo "setup-e2e: npm ci of code-server failed; last lines of $E2E/code-server-install.log:" >&2
      tail -30 "$E2E/code-server-install.log" >&2
      exit 1
    }
  test -x "$dir/node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep/bin/rg"
  echo "$want" > "$dir/.stamp"
}

# --- 4. the .vsix ------------------------------------------------------------------------------
package_extension() {
  (cd "$HERE" && npm run --silent package > "$E2E/vsce.log" 2>&1) || { cat "$E2E/vsce.log" >&2; exit 1; }
  test -f "$HERE/dist/switchman.vsix"
}

main() {
  check_node
  npm_env
  if $DEPS_ONLY; then
    step "npm ci (extension)" install_extension_deps
    return
  fi
  check_system
  mkdir -p "$E2E"
  step "npm ci (extension)" install_extension_deps
  step "code-server $CODE_SERVER_VERSION" install_code_server
  step "build + package .vsix" package_extension
  echo "setup-e2e: ready: $HERE/dist/switchman.vsix, $E2E/code-server/node_modules/.bin/code-server"
}

main
