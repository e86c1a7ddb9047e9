#!/usr/bin/env bash
# The real Claude Code, unmodified and without hooks, under `leasehold run` against the scripted
# fake model (tests/agents/fakemodel): agent B holds src/app.txt; Claude's Bash tool runs
# `sed -i` on it, then its own Read, Edit and Write tools try it, then Write makes a free file.
# Every change to the held file fails (the model's tool results say so) and its bytes stay;
# the free file is written and took an implicit lease for A that B is refused on; the
# refusals are in the ledger with the process that tried; nothing of A's is left after.
# Exits 77 (skipped, with the reason) without root, /dev/fuse or the pinned CLI.
# Usage: run_claude_gated.sh LEASEHOLD_BINARY
set -euo pipefail
leasehold=$1
here=$(cd "$(dirname "$0")" && pwd)
skip() { echo "SKIP: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "leasehold run needs root here"
[ -e /dev/fuse ] || skip "no /dev/fuse"
cache=${LEASEHOLD_AGENT_CACHE:-/var/cache/leasehold/agents}
claude=$(ls -d "$cache"/@anthropic-ai/claude-code@*/node_modules/.bin/claude 2>/dev/null | tail -1)
[ -n "$claude" ] || skip "Claude Code is not installed in $cache (tests/agents/install.sh)"
command -v node >/dev/null || skip "no node"

work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null; rm -rf "$work"' EXIT
port_of() { for _ in $(seq 100); do [ -s "$1" ] && grep -q . "$1" && break; sleep 0.1; done; }

"$leasehold" --headless --open --port 0 --data-dir "$work/data" > "$work/lh.out" 2>&1 &
for _ in $(seq 100); do grep -q '^listening' "$work/lh.out" && break; sleep 0.1; done
url=$(grep -o 'http://[^ ]*' "$work/lh.out" | head -1)
base=$url/api/v1/acp/coordination

proj=$work/proj
mkdir -p "$proj/src" "$work/home/.claude"
printf 'hello\nworld\n' > "$proj/src/app.txt"
(cd "$proj" && git init -q && git add -A && git -c user.email=t@t -c user.name=t commit -qm init)
curl -sf -XPOST "$base/lease" \
  -d '{"resource":"fs:src/app.txt","actorDid":"did:agent:b","ttlMs":600000}' > /dev/null

cat > "$work/script.json" <<JSON
{ "turns": [
  { "tool": "Bash", "args": { "command": "sed -i s/world/SHELLED/ src/app.txt", "description": "sed" } },
  { "tool": "Read", "args": { "file_path": "$proj/src/app.txt" } },
  { "tool": "Edit", "args": { "file_path": "$proj/src/app.txt", "old_string": "world", "new_string": "EDITED" } },
  { "tool": "Write", "args": { "file_path": "$proj/src/app.txt", "content": "WRITTEN\n" } },
  { "tool": "Write", "args": { "file_path": "$proj/src/free.txt", "content": "mine\n" } },
  { "text": "finished" } ] }
JSON
node "$here/../agents/fakemodel/server.js" --script "$work/script.json" --log "$work/requests.jsonl" \
  --port-file "$work/fake.port" > /dev/null 2> "$work/fake.err" &
port_of "$work/fake.port"
fake=http://127.0.0.1:$(cat "$work/fake.port")

cd "$proj"
status=0
env -i PATH=/usr/bin:/bin HOME="$work/home" TERM=dumb LEASEHOLD_URL="$url" \
  ANTHROPIC_BASE_URL="$fake" ANTHROPIC_API_KEY=sk-ant-fake \
  CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1 \
  DISABLE_AUTOUPDATER=1 \
  timeout 120 "$leasehold" run --agent did:agent:a -- \
    "$claude" -p "Change world in src/app.txt" --model claude-sonnet-4-5 \
    --permission-mode acceptEdits --output-format stream-json --verbose \
    > "$work/claude.out" 2> "$work/claude.err" || status=$?
cd "$work"
fail() { echo "FAIL: $*"; echo "--- claude stderr"; tail -20 "$work/claude.err"
         echo "--- tool results"; tail -1 "$work/requests.jsonl" | cut -c1-3000 || true; exit 1; }
[ "$status" -eq 0 ] || fail "leasehold run exited $status"
[ "$(cat "$proj/src/app.txt")" = "$(printf 'hello\nworld')" ] || fail "src/app.txt changed: $(cat "$proj/src/app.txt")"
[ "$(cat "$proj/src/free.txt")" = "mine" ] || fail "the free file was not written"
# What the model was told after each tool call (the last request holds every result).
results=$(tail -1 "$work/requests.jsonl" | python3 -c '
import json, sys
for r in json.loads(sys.stdin.read()).get("toolResults", []):
    print(r["text"].replace("\n", " ")[:400])')
echo "$results"
[ "$(grep -c -iE "permission denied|EACCES" <<<"$results")" -ge 3 ] ||
  fail "the model was not told of three refusals"
# The ledger: refused changes of A's processes, recorded by the gate.
python3 - "$base" <<'PY' || fail "the ledger does not show the gate's refusals"
import json, sys, urllib.request
events = json.load(urllib.request.urlopen(sys.argv[1] + "/ledger?since=0&limit=1000"))["events"]
refused = [e for e in events if e["kind"].endswith("refused") and e.get("via") == "fs"
           and e["actorDid"] == "did:agent:a" and e["resource"] == "fs:src/app.txt"]
granted = [e for e in events if e["kind"].endswith("granted") and e["actorDid"] == "did:agent:a"]
print("refusals by the gate:", sorted({(e["op"], e.get("command")) for e in refused}))
print("A's grants:", sorted({e["resource"] for e in granted}))
assert refused and all(e.get("pid", 0) > 0 for e in refused)
assert "fs:src/free.txt" in {e["resource"] for e in granted}
status = json.load(urllib.request.urlopen(sys.argv[1] + "/status"))
assert not [l for l in status["leases"] if l["holder"] == "did:agent:a"], status["leases"]
PY
echo "PASS: the real Claude Code under leasehold run changed nothing another agent holds"
