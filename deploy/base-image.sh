#!/usr/bin/env bash
# A Debian 12 base image for deploy/Containerfile where no container registry is reachable: a root
# filesystem made by mmdebstrap from this machine's apt sources, imported into Podman. It already
# holds the packages the Containerfile installs, so that step only refreshes the package lists.
# Usage: deploy/base-image.sh [TAG]   (default localhost/ccb-base:bookworm; nothing to do if it exists)
set -euo pipefail
tag=${1:-localhost/ccb-base:bookworm}
if podman image exists "$tag"; then
  echo "base image $tag exists"
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mmdebstrap --quiet --variant=minbase --aptopt='APT::Install-Recommends "false"' \
  --include=ca-certificates,chromium,git,ripgrep,tini bookworm "$tmp/base.tar"
podman import --quiet "$tmp/base.tar" "$tag" >/dev/null
echo "base image $tag imported"
