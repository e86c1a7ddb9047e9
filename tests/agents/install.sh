#!/usr/bin/env bash
# Installs the coding-agent CLIs that the agent hook tests drive, each at a
# pinned version, into a cache outside the repository:
#   ${LEASEHOLD_AGENT_CACHE:-/var/cache/leasehold/agents}/<pkg>@<version>/
# A version already installed costs nothing and needs no network.
#
#   tests/agents/install.sh            install all, print "<name> <binary>" lines
#   tests/agents/install.sh claude qwen   only those (node22 comes along when needed)
#   tests/agents/install.sh --env      print shell assignments instead:
#                                      LEASEHOLD_AGENT_<NAME>=<binary>
#   tests/agents/install.sh --check    install nothing; exit 1 if any is missing
#
# Each npm install is bounded by LEASEHOLD_AGENT_INSTALL_TIMEOUT seconds (600).
set -euo pipefail

# ---- the one place to bump versions ---------------------------------------
# name     npm package               version    binary (relative to the prefix)       needs node22
PINS=(
  "node22   node                      22.23.3    node_modules/node/bin/node              no"
  "claude   @anthropic-ai/claude-code 2.1.332    node_modules/.bin/claude                no"
  "codex    @openai/codex             0.171.0    node_modules/.bin/codex                 no"
  "gemini   @google/gemini-cli        0.61.0     node_modules/.bin/gemini                no"
  "copilot  @github/copilot           1.0.102    node_modules/.bin/copilot               no"
  "qwen     @qwen-code/qwen-code      0.24.4     node_modules/.bin/qwen                  yes"
  "opencode opencode-ai               1.18.33    node_modules/.bin/opencode              no"
)
# ---------------------------------------------------------------------------

CACHE="${LEASEHOLD_AGENT_CACHE:-/var/cache/leasehold/agents}"
TIMEOUT="${LEASEHOLD_AGENT_INSTALL_TIMEOUT:-600}"
MODE=print
WANT=()
for a in "$@"; do
  case "$a" in
    --env) MODE="env" ;;
    --check) MODE=check ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) WANT+=("$a") ;;
  esac
done

repo_root="$(cd "$(dirname "$0")/../.." && pwd)"
case "$CACHE/" in
  "$repo_root"/*) echo "install.sh: the cache ($CACHE) must be outside the repository" >&2; exit 2 ;;
esac

lookup() {  # lookup NAME -> sets pkg ver bin n22
  local line name
  for line in "${PINS[@]}"; do
    read -r name pkg ver bin n22 <<<"$line"
    [[ "$name" == "$1" ]] && return 0
  done
  echo "install.sh: unknown agent '$1'" >&2
  exit 2
}

prefix_of() { echo "$CACHE/$1@$2"; }

NODE22_BIN=""
install_one() {  # install_one NAME; prints nothing, sets RESULT_BIN
  local name="$1" prefix marker
  lookup "$name"
  prefix="$(prefix_of "$pkg" "$ver")"
  marker="$prefix/.leasehold-installed"
  RESULT_BIN="$prefix/$bin"
  if [[ -f "$marker" && -x "$RESULT_BIN" ]]; then
    return 0
  fi
  if [[ "$MODE" == check ]]; then
    echo "install.sh: $name ($pkg@$ver) is not installed in $prefix" >&2
    return 1
  fi
  mkdir -p "$prefix"
  # A package.json of its own keeps npm from walking up to another project.
  [[ -f "$prefix/package.json" ]] || echo '{"name":"leasehold-agent-cache","private":true}' >"$prefix/package.json"
  echo "install.sh: installing $pkg@$ver into $prefix" >&2
  local t0=$SECONDS path="$PATH"
  # Postinstall scripts run under node 22 when the package asks for it.
  [[ -n "$NODE22_BIN" ]] && path="$(dirname "$NODE22_BIN"):$PATH"
  if ! PATH="$path" timeout "$TIMEOUT" npm install --prefix "$prefix" --no-audit --no-fund \
        --no-update-notifier --loglevel=error "$pkg@$ver" >&2; then
    echo "install.sh: npm install of $pkg@$ver failed or took over ${TIMEOUT}s" >&2
    return 1
  fi
  if [[ ! -x "$RESULT_BIN" ]]; then
    echo "install.sh: $pkg@$ver installed but $RESULT_BIN is missing" >&2
    return 1
  fi
  date -u +%FT%TZ >"$marker"
  echo "install.sh: $pkg@$ver took $((SECONDS - t0))s, $(du -sh "$prefix" | cut -f1)" >&2
}

names=()
if [[ ${#WANT[@]} -eq 0 ]]; then
  for line in "${PINS[@]}"; do read -r n _ <<<"$line"; names+=("$n"); done
else
  need22=no
  for n in "${WANT[@]}"; do lookup "$n"; [[ "$n22" == yes ]] && need22=yes; done
  [[ "$need22" == yes && " ${WANT[*]} " != *" node22 "* ]] && names+=(node22)
  names+=("${WANT[@]}")
fi
# node22 goes first so the others can use it.
if [[ " ${names[*]} " == *" node22 "* ]]; then
  ordered=(node22); for n in "${names[@]}"; do [[ "$n" != node22 ]] && ordered+=("$n"); done
  names=("${ordered[@]}")
fi

status=0
for n in "${names[@]}"; do
  if install_one "$n"; then
    [[ "$n" == node22 ]] && NODE22_BIN="$RESULT_BIN"
    if [[ "$MODE" == env ]]; then
      printf 'LEASEHOLD_AGENT_%s=%q\n' "${n^^}" "$RESULT_BIN"
    elif [[ "$MODE" == print ]]; then
      printf '%s %s\n' "$n" "$RESULT_BIN"
    fi
  else
    status=1
  fi
done
exit $status
