#!/usr/bin/env bash
# Builds the image as CI does, with Debian's and npm's registries only: a Debian 12 base made from
# Debian's archive by mmdebstrap (like debian:bookworm-slim: minimal, no manuals, no locales), then
# the Containerfile with buildah (`--isolation chroot`: no daemon, no user namespaces needed).
# Prints the image's size. Needs root, buildah and mmdebstrap (apt install buildah mmdebstrap).
#
# Usage: scripts/build-image.sh [tag]          (default localhost/vouch:test)
# The machine's CA bundle goes to the build as a secret, so it works behind a TLS-inspecting proxy.
set -euo pipefail
cd "$(dirname "$0")/.."

tag="${1:-localhost/vouch:test}"
base="localhost/vouch-base:bookworm"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"

if ! buildah inspect --type image "$base" >/dev/null 2>&1; then
  rootfs="$(mktemp -d /tmp/vouch-base-XXXXXX)"
  trap 'rm -rf "$rootfs"' EXIT
  mmdebstrap --quiet --variant=apt --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    bookworm "$rootfs/base.tar" "deb $mirror bookworm main" "deb $mirror bookworm-updates main" \
    "deb ${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security} bookworm-security main"
  container="$(buildah from scratch)"
  buildah add --quiet "$container" "$rootfs/base.tar" / >/dev/null
  buildah config --cmd /bin/bash "$container"
  buildah commit --quiet "$container" "$base" >/dev/null
  buildah rm "$container" >/dev/null
fi

# npm ci opens more files at once than a build container's default allows (EMFILE): as many as
# this machine lets a process have.
open_files="$(ulimit -Hn)"
[ "$open_files" = unlimited ] && open_files=1048576

secret=()
ca_bundle="${NODE_EXTRA_CA_CERTS:-/etc/ssl/certs/ca-certificates.crt}"
if [ -f "$ca_bundle" ]; then secret=(--secret "id=extra_ca,src=$ca_bundle"); fi

buildah bud --quiet --isolation chroot --layers=false --ulimit "nofile=$open_files:$open_files" "${secret[@]}" \
  --build-arg BASE_IMAGE="$base" \
  --build-arg VERSION="$(node -p "require('./package.json').version")" \
  --build-arg REVISION="$(git rev-parse HEAD 2>/dev/null || echo unknown)" \
  -t "$tag" . >/dev/null
size="$(buildah inspect --type image --format '{{.FromImageID}}' "$tag" >/dev/null && buildah images --format '{{.Size}}' "$tag")"
echo "image $tag: $size"
