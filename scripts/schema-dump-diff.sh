#!/usr/bin/env bash
# Compares the schema two trees of SQL files build (sql/README.md), with pg_dump --schema-only
# (ACLs and owners included). Prints the differences; exits 1 when there are any, 2 on error.
#
#   scripts/schema-dump-diff.sh [--mode MODE] OLD NEW
#
# OLD and NEW are each a git revision of this repository (its migrations/ and sql/ are taken
# with `git archive`) or a directory holding migrations/ and sql/ (`.` for the working tree).
# Files are applied as the migrator does (Sources/OrbitMigrations/Migrator.swift): its
# bookkeeping tables first, then each pending migration and each repeatable file due, in order,
# one psql --single-transaction each (REPEATABLE READ for a file that says
# `-- orbit:isolation repeatable-read`), recorded in schema_migrations / schema_repeatables.
#
# MODE (default fresh; `all` runs every one and fails if any fails):
#   fresh       OLD migrated into an empty database, against NEW migrated into another.
#   upgrade     OLD migrated, then NEW migrated on top (the migrator's rule: every repeatable
#               file when a migration ran, otherwise only new or changed ones), against fresh NEW.
#   upgrade-all OLD migrated, then every file of NEW's sql/ applied on top, against fresh NEW.
#   reapply     for each of NEW's sql/ files, a copy of fresh NEW with that file applied alone
#               once more (what the migrator does when only that file changed), against fresh NEW.
#   twice       fresh NEW, then all of NEW's sql/ files applied again, against fresh NEW.
#
# A temporary cluster (PG_BINDIR, else pg_config --bindir, else /usr/lib/postgresql/15/bin) is
# started for the run and deleted after it: as the postgres user when run as root, as the
# current user otherwise. It listens on a socket in its own folder only (SCHEMA_DIFF_PORT,
# default 55490, names that socket).
set -euo pipefail

mode=fresh
while [ $# -gt 0 ]; do
    case "$1" in
        --mode) mode="${2:?--mode needs a value}"; shift 2 ;;
        --mode=*) mode="${1#--mode=}"; shift ;;
        -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        --) shift; break ;;
        -*) echo "unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
[ $# -eq 2 ] || { echo "usage: $0 [--mode fresh|upgrade|upgrade-all|reapply|twice|all] OLD NEW" >&2; exit 2; }
case "$mode" in fresh|upgrade|upgrade-all|reapply|twice|all) ;; *) echo "unknown mode $mode" >&2; exit 2 ;; esac

repo="$(cd "$(dirname "$0")/.." && pwd)"
bindir="${PG_BINDIR:-$(pg_config --bindir 2>/dev/null || echo /usr/lib/postgresql/15/bin)}"
port="${SCHEMA_DIFF_PORT:-55490}"
work="$(mktemp -d "${TMPDIR:-/tmp}/schema-dump-diff.XXXXXX")"
chmod 755 "$work"

if [ "$(id -u)" -eq 0 ]; then
    pguser=postgres
    as_pg() { runuser -u postgres -- "$@"; }
else
    pguser="$(id -un)"
    as_pg() { "$@"; }
fi

cleanup() {
    if [ -f "$work/data/postmaster.pid" ]; then
        as_pg "$bindir/pg_ctl" -D "$work/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$work"
}
trap cleanup EXIT

# A tree's migrations/ and sql/ in a folder: a directory as it is, a revision extracted.
tree() {
    local source="$1" into="$2"
    if [ -d "$source" ]; then
        [ -d "$source/migrations" ] || { echo "$source has no migrations/ folder" >&2; exit 2; }
        (cd "$source" && pwd)
    else
        git -C "$repo" rev-parse --verify --quiet "$source^{commit}" >/dev/null \
            || { echo "$source is neither a directory nor a revision of $repo" >&2; exit 2; }
        mkdir -p "$into"
        git -C "$repo" archive "$source" migrations sql | tar -x -C "$into"
        echo "$into"
    fi
}
old="$(tree "$1" "$work/old")"
new="$(tree "$2" "$work/new")"

mkdir -p "$work/data" "$work/socket" "$work/dumps"
if [ "$(id -u)" -eq 0 ]; then chown postgres "$work/data" "$work/socket"; fi
as_pg "$bindir/initdb" -D "$work/data" -A trust -U "$pguser" >"$work/initdb.log" 2>&1 \
    || { cat "$work/initdb.log" >&2; exit 2; }
as_pg "$bindir/pg_ctl" -D "$work/data" -w -l "$work/socket/log" \
    -o "-p $port -k $work/socket -c listen_addresses= -c fsync=off" start >/dev/null \
    || { cat "$work/socket/log" >&2; exit 2; }

export PGHOST="$work/socket" PGPORT="$port" PGUSER="$pguser"
sql() { PGOPTIONS="-c client_min_messages=warning" "$bindir/psql" -X -q -At -v ON_ERROR_STOP=1 -d "$1" -c "$2"; }

# One file in one transaction, as the migrator runs it.
apply_file() {
    local db="$1" file="$2" options="-c client_min_messages=warning"
    if grep -q -- '-- orbit:isolation repeatable-read' "$file"; then
        options="$options -c default_transaction_isolation=repeatable\\ read"
    fi
    PGOPTIONS="$options" "$bindir/psql" -X -q -v ON_ERROR_STOP=1 --single-transaction -d "$db" -f "$file" >/dev/null \
        || { echo "applying $file to $db failed" >&2; exit 2; }
}

repeatables() { find "$1/sql" -maxdepth 1 -type f -name '*.sql' | LC_ALL=C sort; }

# The migrator's `migrate` on `db` with the tree `dir`.
migrate() {
    local db="$1" dir="$2" file name version sum recorded ran=0
    sql "$db" "CREATE TABLE IF NOT EXISTS public.schema_migrations (version integer PRIMARY KEY, name text NOT NULL,
                   checksum text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now(), execution_ms integer NOT NULL);
               CREATE TABLE IF NOT EXISTS public.schema_repeatables (path text PRIMARY KEY, checksum text NOT NULL,
                   applied_at timestamptz NOT NULL DEFAULT now(), execution_ms integer NOT NULL);"
    while read -r version file; do
        name="$(basename "$file" .sql)"; name="${name#*_}"
        if [ -z "$(sql "$db" "SELECT 1 FROM schema_migrations WHERE version = $version")" ]; then
            apply_file "$db" "$file"
            sum="$(sha256sum "$file" | cut -d' ' -f1)"
            sql "$db" "INSERT INTO schema_migrations VALUES ($version, '$name', '$sum', now(), 0)"
            ran=1
        fi
    done < <(for file in "$dir"/migrations/*.sql; do
                 version="$(basename "$file" | sed 's/_.*//')"; echo "$((10#$version)) $file"
             done | sort -n)
    while read -r file; do
        name="sql/$(basename "$file")"
        sum="$(sha256sum "$file" | cut -d' ' -f1)"
        recorded="$(sql "$db" "SELECT checksum FROM schema_repeatables WHERE path = '$name'")"
        if [ "$ran" -eq 1 ] || [ "$recorded" != "$sum" ]; then
            apply_file "$db" "$file"
            sql "$db" "INSERT INTO schema_repeatables VALUES ('$name', '$sum', now(), 0)
                       ON CONFLICT (path) DO UPDATE SET checksum = excluded.checksum, applied_at = now()"
        fi
    done < <(repeatables "$dir")
}

# A new database, named in $db: empty, or a copy of the database $1.
created=0
database() {
    created=$((created + 1))
    db="scenario_$created"
    sql postgres "CREATE DATABASE $db TEMPLATE ${1:-template1}"
}

# pg_dump's \restrict lines carry a random key: left out.
dump() { "$bindir/pg_dump" --schema-only -d "$1" | grep -v -E '^\\(un)?restrict ' >"$2"; }

# Prints the diff of two dumps; returns 1 when they differ.
compare() {
    local label="$1" expected="$2" actual="$3"
    if diff -u --label "$label: expected" --label "$label: actual" "$expected" "$actual"; then
        echo "== $label: identical" >&2
        return 0
    fi
    echo "== $label: DIFFERENT" >&2
    return 1
}

# NEW migrated into an empty database: what every mode compares with.
expected="$work/dumps/fresh-new.sql"
fresh_db=""
fresh_new_dump() {
    if [ -z "$fresh_db" ]; then
        database; fresh_db="$db"
        migrate "$fresh_db" "$new"; dump "$fresh_db" "$expected"
    fi
}

status=0
run() {
    fresh_new_dump
    case "$1" in
        fresh)
            database; migrate "$db" "$old"; dump "$db" "$work/dumps/fresh-old.sql"
            compare "fresh: old vs new" "$work/dumps/fresh-old.sql" "$expected" || status=1 ;;
        upgrade)
            database; migrate "$db" "$old"; migrate "$db" "$new"; dump "$db" "$work/dumps/upgrade.sql"
            compare "upgrade (migrator's rule) vs fresh new" "$expected" "$work/dumps/upgrade.sql" || status=1 ;;
        upgrade-all)
            database; migrate "$db" "$old"
            while read -r file; do apply_file "$db" "$file"; done < <(repeatables "$new")
            dump "$db" "$work/dumps/upgrade-all.sql"
            compare "upgrade (every new sql file) vs fresh new" "$expected" "$work/dumps/upgrade-all.sql" || status=1 ;;
        reapply)
            while read -r file; do
                database "$fresh_db"
                apply_file "$db" "$file"
                dump "$db" "$work/dumps/reapply.sql"
                compare "re-applied alone: sql/$(basename "$file")" "$expected" "$work/dumps/reapply.sql" || status=1
            done < <(repeatables "$new") ;;
        twice)
            database; migrate "$db" "$new"
            while read -r file; do apply_file "$db" "$file"; done < <(repeatables "$new")
            dump "$db" "$work/dumps/twice.sql"
            compare "sql/ applied twice vs once" "$expected" "$work/dumps/twice.sql" || status=1 ;;
    esac
}

if [ "$mode" = all ]; then
    for each in fresh upgrade upgrade-all reapply twice; do run "$each"; done
else
    run "$mode"
fi
exit "$status"
