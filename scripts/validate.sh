#!/usr/bin/env bash
# Lints the sources with swift-format (the toolchain's `swift format`) using .swift-format.
# `scripts/validate.sh --fix` rewrites files in place instead.
set -euo pipefail
cd "$(dirname "$0")/.."
# The generated-client package's own files (not its .build, which holds other packages' sources).
client=(Clients/GeneratedClientTests/Sources Clients/GeneratedClientTests/Tests Clients/GeneratedClientTests/Package.swift)
if [ "${1:-}" = "--fix" ]; then
  exec swift format format --in-place --recursive Sources Tests Plugins Package.swift "${client[@]}"
fi
swift format lint --strict --recursive Sources Tests Plugins Package.swift "${client[@]}"
