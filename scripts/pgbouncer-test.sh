#!/usr/bin/env bash
# Runs the pooler tests: the service layer (PgBouncerTests) and orbitctl itself, serve included
# (PoolerTests), through pgbouncer in transaction mode. The tests start pgbouncer themselves in
# front of their throwaway cluster; this script only makes sure pgbouncer is installed (as root,
# with apt-get). The whole suite (scripts/test.sh) runs them too whenever pgbouncer is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v pgbouncer >/dev/null && [ ! -x /usr/sbin/pgbouncer ]; then
    if [ "$(id -u)" = 0 ]; then apt-get install -y pgbouncer >/dev/null; else echo "Install pgbouncer: sudo apt-get install pgbouncer" >&2; exit 1; fi
fi
exec swift test --filter 'PgBouncerTests|PoolerTests' "$@"
