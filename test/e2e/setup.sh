#!/usr/bin/env bash
# Installs what the end-to-end suite and `npm run package` need, offline except for the npm registry
# and Debian: Chromium, ripgrep (code-server's @vscode/ripgrep would download its own: we seed its
# cache with Debian's), and this folder's harness (code-server, playwright-core, vsce).
set -Eeuo pipefail
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
NODE_PREFIX=$(dirname "$(dirname "$(readlink -f "$(command -v node)")")")
export npm_config_nodedir="$NODE_PREFIX"   # node-gyp must not download headers

need=()
for p in chromium fonts-liberation ripgrep libkrb5-dev g++ make python3; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || { echo "setup.sh: missing Debian packages ${need[*]} (run as root to install)" >&2; exit 1; }
  apt-get -o DPkg::Lock::Timeout=900 update -qq
  DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 install -y -qq --no-install-recommends "${need[@]}"
fi

installed() {
  [ -f "$HERE/node_modules/code-server/package.json" ] && [ -x "$HERE/node_modules/.bin/vsce" ] && [ -f "$HERE/node_modules/playwright-core/package.json" ] &&
  { [ -f "$HERE/node_modules/code-server/lib/vscode/node_modules/node-pty/build/Release/pty.node" ] || [ -f "$HERE/node_modules/code-server/lib/vscode/node_modules/node-pty/prebuilds/linux-x64/pty.node" ]; } &&
  [ -f "$HERE/node_modules/code-server/lib/vscode/node_modules/@vscode/spdlog/build/Release/spdlog.node" ]
}
if installed; then echo "e2e harness already installed"; exit 0; fi

# Seed @vscode/ripgrep's download cache with Debian's rg (its postinstall would fetch from GitHub).
# code-server 4.13x ships @vscode/ripgrep-universal instead (every platform's rg inside the npm
# package): then there is nothing to seed.
CS_VERSION=$(node -p "require('$HERE/package.json').dependencies['code-server']")
tmp=$(mktemp -d)
(cd "$tmp" && npm pack --silent "code-server@$CS_VERSION" >/dev/null)
rg_pkg=$(tar -xzOf "$tmp/code-server-$CS_VERSION.tgz" package/lib/vscode/npm-shrinkwrap.json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).packages["node_modules/@vscode/ripgrep"]?.version ?? ""))')
if [ -n "$rg_pkg" ]; then
  (cd "$tmp" && npm pack --silent "@vscode/ripgrep@$rg_pkg" >/dev/null)
  rg_asset=$(tar -xzOf "$tmp/vscode-ripgrep-$rg_pkg.tgz" package/lib/postinstall.js | sed -n "s/^const VERSION = '\(.*\)';.*/\1/p")
  cache="$(node -p 'require("os").tmpdir()')/vscode-ripgrep-cache-$rg_pkg"
  mkdir -p "$cache" "$tmp/rg"
  cp "$(command -v rg)" "$tmp/rg/rg"
  tar -czf "$cache/ripgrep-$rg_asset-x86_64-unknown-linux-musl.tar.gz" -C "$tmp/rg" rg
fi
rm -rf "$tmp"

cd "$HERE"
npm_config_unsafe_perm=true npm install --unsafe-perm --no-audit --no-fund --no-package-lock
installed || { echo "setup.sh: the harness did not install completely" >&2; exit 1; }
echo "e2e harness installed"
