#!/usr/bin/env bash
# Lints the sources with swift-format (the toolchain's `swift format`) using .swift-format.
# `scripts/validate.sh --fix` rewrites files in place instead.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--fix" ]; then
  exec swift format format --in-place --recursive Sources Tests Plugins Package.swift
fi
swift format lint --strict --recursive Sources Tests Plugins Package.swift
