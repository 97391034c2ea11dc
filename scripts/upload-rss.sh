#!/usr/bin/env bash
# Measures the server's peak RSS (VmHWM) around one large upload: a fresh `orbitctl dev`
# (throwaway cluster, demo data, dev auth) in a temporary folder, signed in as ada@example.com,
# uploads a video of SIZE_MB (default 150) to the demo community with curl, then prints the
# peak RSS before and after and the upload's status.
# Usage: scripts/upload-rss.sh [SIZE_MB]
set -euo pipefail
cd "$(dirname "$0")/.."
size_mb="${1:-150}"
swift build --product orbitctl
bin="$(swift build --show-bin-path)/orbitctl"
work="$(mktemp -d /tmp/orbit-upload.XXXXXX)"
chmod 755 "$work"
port="${ORBIT_UPLOAD_PORT:-18282}"
echo '{"keys": []}' > "$work/apple-keys.json"
(cd "$work" && exec "$bin" dev --api-port "$port" --apple-keys "$work/apple-keys.json" --no-jobs > "$work/dev.log" 2>&1) &
dev=$!
cleanup() {
    kill -INT "$dev" 2>/dev/null || true
    wait "$dev" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT
base="http://127.0.0.1:$port"
for _ in $(seq 1 120); do
    grep -q "  API " "$work/dev.log" 2>/dev/null && break
    kill -0 "$dev" 2>/dev/null || { cat "$work/dev.log"; exit 1; }
    sleep 1
done
server="$(pgrep -P "$dev" -x orbitctl || echo "$dev")"
token="$(curl -sf -X POST "$base/auth/dev" -H 'content-type: application/json' -d '{"email": "ada@example.com"}' \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["access_token"])')"
head -c "$((size_mb << 20))" /dev/urandom > "$work/video.mp4"
peak() { awk '/VmHWM/ {print $2 " kB"}' "/proc/$server/status"; }
echo "peak RSS before: $(peak)"
status="$(curl -s -o "$work/upload.json" -w '%{http_code}' -X POST -H "Authorization: Bearer $token" \
    -H 'Content-Type: video/mp4' --data-binary "@$work/video.mp4" \
    "$base/communities/00000000-0000-4000-8000-0000000c0001/media?filename=video.mp4")"
echo "upload of $size_mb MiB: HTTP $status"
echo "peak RSS after: $(peak)"
