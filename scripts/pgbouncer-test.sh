#!/usr/bin/env bash
# Runs PgBouncerTests through pgbouncer in transaction mode: a throwaway cluster
# (`orbitctl dev` on 127.0.0.1), pgbouncer in front of it with 2 server connections, and the
# service layer's users interleaving over it. Installs pgbouncer with apt-get when missing (root).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v pgbouncer >/dev/null && [ ! -x /usr/sbin/pgbouncer ]; then
    if [ "$(id -u)" = 0 ]; then apt-get install -y pgbouncer >/dev/null; else echo "Install pgbouncer: sudo apt-get install pgbouncer" >&2; exit 1; fi
fi
pgbouncer_bin="$(command -v pgbouncer || echo /usr/sbin/pgbouncer)"
swift build --product orbitctl
bin="$(swift build --show-bin-path)/orbitctl"
work="$(mktemp -d /tmp/orbit-pgbouncer.XXXXXX)"
chmod 755 "$work"
pg_port="${ORBIT_PG_PORT:-15544}"
bouncer_port="${ORBIT_PGBOUNCER_PORT:-16544}"
(cd "$work" && exec "$bin" dev --tcp-port "$pg_port" --api-port=-1 > "$work/dev.log" 2>&1) &
dev=$!
bouncer=""
cleanup() {
    [ -n "$bouncer" ] && kill "$bouncer" 2>/dev/null || true
    kill -INT "$dev" 2>/dev/null || true
    wait "$dev" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
for _ in $(seq 1 120); do
    grep -q "Press Ctrl-C" "$work/dev.log" 2>/dev/null && break
    kill -0 "$dev" 2>/dev/null || { cat "$work/dev.log"; exit 1; }
    sleep 1
done
cat > "$work/pgbouncer.ini" <<INI
[databases]
orbitcove = host=127.0.0.1 port=$pg_port dbname=orbitcove user=postgres
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $bouncer_port
auth_type = trust
auth_file = $work/users.txt
pool_mode = transaction
default_pool_size = 2
max_client_conn = 100
unix_socket_dir =
logfile = $work/pgbouncer.log
INI
echo '"postgres" ""' > "$work/users.txt"
runas=()
[ "$(id -u)" = 0 ] && runas=(runuser -u postgres --)
[ "$(id -u)" = 0 ] && chown -R postgres "$work"
"${runas[@]}" "$pgbouncer_bin" "$work/pgbouncer.ini" &
bouncer=$!
sleep 1
ORBIT_PGBOUNCER_URL="postgresql://postgres@127.0.0.1:$bouncer_port/orbitcove" swift test --filter PgBouncerTests "$@"
