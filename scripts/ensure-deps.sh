#!/usr/bin/env bash
# Checks that this machine can build and run OrbitCove: Swift 6, pkg-config, libpq-dev (the
# PostgreSQL C client library), the PostgreSQL server programs (initdb, pg_ctl, postgres) and
# libvips-tools (vipsthumbnail, for image thumbnails).
# As root, installs what is missing with apt-get; otherwise prints the exact command and fails.
set -euo pipefail

missing=()
command -v swift >/dev/null 2>&1 || { echo "Swift 6 is not installed: see https://www.swift.org/install/linux/" >&2; exit 1; }
command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
if ! pkg-config --exists libpq 2>/dev/null && [ ! -f /usr/include/postgresql/libpq-fe.h ]; then
  missing+=(libpq-dev)
fi
server_found=
for dir in ${ORBIT_PG_BINDIR:-} $(pg_config --bindir 2>/dev/null || true) /usr/lib/postgresql/*/bin; do
  if [ -x "$dir/initdb" ] && [ -x "$dir/pg_ctl" ] && [ -x "$dir/postgres" ]; then server_found=1; break; fi
done
if [ -z "$server_found" ] && ! command -v initdb >/dev/null 2>&1; then
  missing+=(postgresql postgresql-contrib)
fi
command -v vipsthumbnail >/dev/null 2>&1 || missing+=(libvips-tools)
if [ "$(id -u)" = 0 ] && ! command -v runuser >/dev/null 2>&1; then
  missing+=(util-linux)
fi

# pgbouncer is optional: the pooler tests start it when it is installed and are skipped (saying
# so) when it is not. As root it is installed when apt-get can; a failure here is not fatal.
if ! command -v pgbouncer >/dev/null 2>&1 && [ ! -x /usr/sbin/pgbouncer ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing pgbouncer (for the pooler tests) …" >&2
  export DEBIAN_FRONTEND=noninteractive
  if ! apt-get install -y -qq --no-install-recommends pgbouncer >&2 2>/dev/null; then
    apt-get update -qq >&2 && apt-get install -y -qq --no-install-recommends pgbouncer >&2 \
      || echo "warning: could not install pgbouncer; the pooler tests will be skipped" >&2
  fi
fi

# The calendar feed tests read feeds with Python's icalendar and recurring_ical_events (from PyPI,
# pinned), in a virtual environment of their own: .build/ical-python. Without it those tests fail
# saying how to make it.
if ! .build/ical-python/bin/python3 scripts/ical-expand.py --check-versions >/dev/null 2>&1; then
  rm -rf .build/ical-python
  echo "Installing icalendar and recurring_ical_events into .build/ical-python (for the calendar feed tests) …" >&2
  if ! python3 -m venv .build/ical-python >/dev/null 2>&1 && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends python3-venv >&2 || true
  fi
  if ! { python3 -m venv .build/ical-python >&2 \
      && .build/ical-python/bin/pip install -q --disable-pip-version-check icalendar==7.3.2 recurring_ical_events==3.8.2 x-wr-timezone==2.0.1 \
        python-dateutil==2.9.0.post0 tzdata==2026.6 click==8.5.1 six==1.17.0 typing_extensions==4.16.0 >&2; }; then
    echo "warning: could not install them; the calendar feed tests will fail (they need python3 with venv and PyPI)" >&2
  fi
fi

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "Installing ${missing[*]} …" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  exit 0
fi
echo "Missing: ${missing[*]}. Install them with:" >&2
echo "  sudo apt-get install -y ${missing[*]}" >&2
exit 1
