#!/usr/bin/env bash
# The generated-client test: the Swift client that swift-openapi-generator makes of openapi.yaml
# (Clients/GeneratedClientTests, a package of its own so the generator stays out of the main
# targets) signs in, builds a community and runs its events, feed and money against a live
# `orbitctl dev` (its own throwaway cluster, demo users, dev auth, a free port).
# Builds orbitctl first (nothing to do after scripts/test.sh); ORBITCTL=/path/to/orbitctl skips that.
# Extra arguments go to `swift test`, for example: scripts/client-test.sh --verbose
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-deps.sh
if [ -z "${ORBITCTL:-}" ]; then
    swift build --product orbitctl
    ORBITCTL="$(swift build --show-bin-path)/orbitctl"
fi
ORBITCTL="$(cd "$(dirname "$ORBITCTL")" && pwd)/$(basename "$ORBITCTL")"
export ORBITCTL
cd Clients/GeneratedClientTests
exec swift test "$@"
