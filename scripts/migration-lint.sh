#!/usr/bin/env bash
# Lints the migrations with squawk (PyPI squawk-cli, pinned), the linter for PostgreSQL migrations:
# locks a large, live database would feel (an index built without CONCURRENTLY, a constraint added
# without NOT VALID, a column added with a volatile default, no lock or statement timeout). The
# settings and the waived migrations are in .squawk.toml; how to write a migration that passes is in
# docs/operations.md, "Migrations on a large, live database". CI runs it (.ci/run).
# Usage: scripts/migration-lint.sh
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.build/squawk-python
if ! "$venv/bin/squawk" --version 2>/dev/null | grep -q "2.70.0"; then
    python3 -m venv "$venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check squawk-cli==2.70.0 >&2
fi
squawk=("$venv/bin/squawk" --config .squawk.toml --reporter gcc)

# The lint must bite: an index built in place on an existing table is refused.
probe="$(mktemp -d)"
trap 'rm -rf "$probe"' EXIT
printf "SET LOCAL lock_timeout = '5s';\nSET LOCAL statement_timeout = '5min';\nCREATE INDEX users_probe ON users (email);\n" \
    > "$probe/9999_probe.sql"
if "${squawk[@]}" "$probe/9999_probe.sql" > /dev/null 2>&1; then
    echo "migration lint: squawk passed a migration it must refuse (an index built in place): the lint does not work" >&2
    exit 1
fi

# Every migration but the ones .squawk.toml waives (listed there once, with the reason).
mapfile -t waived < <(grep -o '"migrations/[^"]*\.sql"' .squawk.toml | tr -d '"')
linted=()
for file in migrations/*.sql; do
    [[ " ${waived[*]} " == *" $file "* ]] || linted+=("$file")
done
if [ "${#linted[@]}" -eq 0 ]; then
    echo "migration lint: no migration after the ${#waived[@]} waived in .squawk.toml"
    exit 0
fi
"${squawk[@]}" "${linted[@]}"
echo "migration lint: ${#linted[@]} migration(s) pass (${#waived[@]} waived in .squawk.toml)"
