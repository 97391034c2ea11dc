#!/usr/bin/env bash
# Runs the whole test suite against a real PostgreSQL: ORBIT_TEST_DATABASE_URL when set,
# otherwise a throwaway cluster the tests start (and delete) themselves.
# Extra arguments go to `swift test`, for example: scripts/test.sh --filter ConnectionPoolTests
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
exec swift test "$@"
