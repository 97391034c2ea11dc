#!/usr/bin/env bash
# Measures the server's peak RSS (VmHWM) around one large upload: a fresh `orbitctl dev`
# (throwaway cluster, demo data, dev auth) in a temporary folder, signed in as ada@example.com,
# uploads a video of SIZE_MB (default 150) to the demo community with curl, then prints the
# peak RSS before and after and the upload's status.
# Usage: scripts/upload-rss.sh [SIZE_MB]
set -euo pipefail
cd "$(dirname "$0")/.."
size_mb="${1:-150}"
port="${ORBIT_UPLOAD_PORT:-18282}"
source scripts/dev-server.sh
server="$dev"
# An MP4 file type box first (the server checks that the content is of the declared type), then noise.
printf '\000\000\000\030ftypisom\000\000\000\000isommp41' > "$work/video.mp4"
head -c "$((size_mb << 20))" /dev/urandom >> "$work/video.mp4"
peak() { awk '/VmHWM/ {print $2 " kB"}' "/proc/$server/status"; }
echo "peak RSS before: $(peak)"
status="$(curl -s -o "$work/upload.json" -w '%{http_code}' -X POST -H "Authorization: Bearer $token" \
    -H 'Content-Type: video/mp4' --data-binary "@$work/video.mp4" \
    "$base/communities/00000000-0000-4000-8000-0000000c0001/media?filename=video.mp4")"
echo "upload of $size_mb MiB: HTTP $status"
echo "peak RSS after: $(peak)"
