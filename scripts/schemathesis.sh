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
port="${ORBIT_SCHEMATHESIS_PORT:-18181}"
dev_options="--write-rate-limit 0 --auth-rate-limit 0"
source scripts/dev-server.sh
mkdir -p results
# Hooks: fresh Idempotency-Keys and server-made cursors (see scripts/schemathesis_hooks.py).
export PYTHONPATH="$PWD/scripts${PYTHONPATH:+:$PYTHONPATH}" SCHEMATHESIS_HOOKS=schemathesis_hooks
st --config-file scripts/schemathesis.toml run "$base/openapi.yaml" --url "$base" -H "Authorization: Bearer $token" \
    --checks all \
    --max-examples "${ORBIT_SCHEMATHESIS_EXAMPLES:-100}" --workers 2 --seed 1 "$@" | tee results/schemathesis.txt
