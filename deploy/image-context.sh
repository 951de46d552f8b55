#!/usr/bin/env bash
# Assemble the build context of deploy/Containerfile in OUT_DIR:
#   ccb (the compiled binary), bridge-extension/ (found beside it at run time), runtime/ (empty, or
#   the OpenVSCode Server archive given as the second argument, for RUNTIME_SOURCE=file).
# Usage: deploy/image-context.sh OUT_DIR [openvscode-server-*.tar.gz]
# CCB_BINARY=path uses an already compiled binary instead of running scripts/compile.mjs.
set -euo pipefail
out=${1:?usage: deploy/image-context.sh OUT_DIR [runtime-archive.tar.gz]}
archive=${2:-}
root=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out/runtime"
if [ -n "${CCB_BINARY:-}" ]; then
  cp "$CCB_BINARY" "$out/ccb"
else
  node "$root/scripts/compile.mjs" "$out/ccb"
fi
[ -d "$root/dist/bridge-extension" ] || node "$root/scripts/build.mjs"
rm -rf "$out/bridge-extension"
cp -R "$root/dist/bridge-extension" "$out/bridge-extension"
cp "$root/deploy/Containerfile" "$out/Containerfile"
if [ -n "$archive" ]; then cp "$archive" "$out/runtime/"; fi
echo "build context ready in $out"
