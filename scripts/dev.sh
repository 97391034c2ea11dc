#!/usr/bin/env bash
# Runs OrbitCove's main job: `orbitctl dev` (a local PostgreSQL under ./.orbit/; Ctrl-C stops it).
# Extra arguments go to `orbitctl dev`, for example: scripts/dev.sh --tcp-port 5433
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
exec swift run orbitctl dev "$@"
