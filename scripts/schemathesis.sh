#!/usr/bin/env bash
# Fuzzes the HTTP API with schemathesis (from PyPI) against the OpenAPI document it serves:
# a fresh `orbitctl dev` (throwaway cluster, demo data, dev auth) in a temporary directory,
# signed in as ada@example.com (admin of the demo community). Rate limits are off so the
# handlers, not the limiter, answer. `--checks all`: no 5xx, every status, content type, header
# and body as documented, valid requests accepted and invalid ones refused; every phase
# (examples, coverage, fuzzing, stateful: ids from responses feed later operations by the
# document's links). The report goes to results/schemathesis.txt.
# Usage: scripts/schemathesis.sh [extra `st run` options, e.g. --max-examples 100]
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m pip show schemathesis >/dev/null 2>&1 || python3 -m pip install --quiet schemathesis
swift build --product orbitctl
bin="$(swift build --show-bin-path)/orbitctl"
work="$(mktemp -d /tmp/orbit-schemathesis.XXXXXX)"
chmod 755 "$work"
port="${ORBIT_SCHEMATHESIS_PORT:-18181}"
echo '{"keys": []}' > "$work/apple-keys.json"
(cd "$work" && exec "$bin" dev --api-port "$port" --write-rate-limit 0 --auth-rate-limit 0 \
    --apple-keys "$work/apple-keys.json" --no-jobs > "$work/dev.log" 2>&1) &
dev=$!
cleanup() {
    kill -INT "$dev" 2>/dev/null || true
    wait "$dev" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
base="http://127.0.0.1:$port"
for _ in $(seq 1 120); do
    grep -q "  API " "$work/dev.log" 2>/dev/null && break
    kill -0 "$dev" 2>/dev/null || { cat "$work/dev.log"; exit 1; }
    sleep 1
done
token="$(curl -sf -X POST "$base/auth/dev" -H 'content-type: application/json' -d '{"email": "ada@example.com"}' \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["access_token"])')"
mkdir -p results
# Hooks: fresh Idempotency-Keys and server-made cursors (see scripts/schemathesis_hooks.py).
export PYTHONPATH="$PWD/scripts${PYTHONPATH:+:$PYTHONPATH}" SCHEMATHESIS_HOOKS=schemathesis_hooks
st --config-file scripts/schemathesis.toml run "$base/openapi.yaml" --url "$base" -H "Authorization: Bearer $token" \
    --checks all \
    --max-examples "${ORBIT_SCHEMATHESIS_EXAMPLES:-100}" --workers 2 --seed 1 "$@" | tee results/schemathesis.txt
