# Source this file (bash or zsh): it puts a Node.js the project can run on first on PATH.
#   source scripts/useNode.sh
# The project runs on Node 24 (LTS); 22.14 is its floor (better-sqlite3 13 needs Node-API 10). When the
# `node` on PATH is older, this brings Node 24 from the npm registry (the package node-<os>-<cpu>, which
# holds a Node binary and its headers; no other download) into a cache folder and uses that one. npm
# itself stays the machine's: it is a JavaScript program and runs on whichever node is first on PATH.
# npm_config_nodedir points node-gyp at the same Node's headers, so a native build never downloads them.

AGENT_RL_NODE_VERSION="${AGENT_RL_NODE_VERSION:-24.22.3}"

_agent_rl_node_ok() {
  "$1" -e 'const [a,b]=process.versions.node.split(".").map(Number);process.exit(a>22||(a===22&&b>=14)?0:1)' 2>/dev/null
}

_agent_rl_use_node() {
  local current os cpu pkg cache bin
  current="$(command -v node || true)"
  if [ -n "$current" ] && [ -z "${AGENT_RL_FORCE_NODE:-}" ] && _agent_rl_node_ok "$current"; then
    return 0
  fi
  case "$(uname -s)" in
    Linux) os=linux ;;
    Darwin) os=darwin ;;
    *) echo "useNode.sh: on $(uname -s), install Node.js 24 from https://nodejs.org and put it on PATH" >&2; return 1 ;;
  esac
  case "$(uname -m)" in
    x86_64 | amd64) cpu=x64 ;;
    aarch64 | arm64) cpu=arm64 ;;
    *) echo "useNode.sh: no Node package for the CPU $(uname -m); install Node.js 24 from https://nodejs.org" >&2; return 1 ;;
  esac
  pkg="node-$os-$cpu"
  cache="${XDG_CACHE_HOME:-$HOME/.cache}/agent-rl-workbench/node-$AGENT_RL_NODE_VERSION"
  bin="$cache/node_modules/$pkg/bin"
  if [ ! -x "$bin/node" ] || ! _agent_rl_node_ok "$bin/node"; then
    echo "useNode.sh: ${current:-no node} is older than 22.14; installing $pkg@$AGENT_RL_NODE_VERSION from the npm registry into $cache" >&2
    mkdir -p "$cache" || return 1
    # --ignore-scripts: the package holds the binary itself; nothing needs to run to install it.
    npm install --prefix "$cache" --no-save --no-package-lock --ignore-scripts --no-audit --no-fund "$pkg@$AGENT_RL_NODE_VERSION" >&2 || return 1
    [ -x "$bin/node" ] || { echo "useNode.sh: $pkg@$AGENT_RL_NODE_VERSION has no bin/node" >&2; return 1; }
  fi
  export PATH="$bin:$PATH"
  export npm_config_nodedir="$cache/node_modules/$pkg"
  hash -r 2>/dev/null || true
}

_agent_rl_use_node && echo "useNode.sh: node $(node -v) at $(command -v node)" >&2
