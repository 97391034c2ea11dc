# Sourced by scripts that need a live API (schemathesis.sh, upload-rss.sh): builds orbitctl and
# starts a fresh `orbitctl dev` (throwaway cluster, demo data, dev auth, jobs off) in a temporary
# folder on port $port, with any extra `dev` options in $dev_options; stops it and removes the
# folder on exit. Sets $work, $dev (its pid), $base and $token (Ada's access token).
swift build --product orbitctl
bin="$(swift build --show-bin-path)/orbitctl"
work="$(mktemp -d /tmp/orbit-dev.XXXXXX)"
chmod 755 "$work"
echo '{"keys": []}' > "$work/apple-keys.json"
# shellcheck disable=SC2086 # $dev_options is a list of options.
(cd "$work" && exec "$bin" dev --api-port "$port" --apple-keys "$work/apple-keys.json" --no-jobs ${dev_options:-} > "$work/dev.log" 2>&1) &
dev=$!
cleanup() {
    kill -INT "$dev" 2>/dev/null || true
    wait "$dev" 2>/dev/null || true
    # The server's log outlives the run, for the errors a failing check points at.
    cp "$work/dev.log" /tmp/orbit-dev-last.log 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
base="http://127.0.0.1:$port"
for _ in $(seq 1 120); do
    grep -q "  API " "$work/dev.log" 2>/dev/null && break
    kill -0 "$dev" 2>/dev/null || { cat "$work/dev.log"; exit 1; }
    sleep 1
done
token="$(curl -sf -X POST "$base/auth/dev" -H 'content-type: application/json' -d '{"email": "ada@example.com"}' \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["access_token"])')"
