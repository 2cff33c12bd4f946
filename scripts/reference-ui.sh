#!/usr/bin/env bash
# Vendors Swagger UI (swagger-ui-dist, Apache-2.0, from the npm registry) into host/reference/,
# from which the binary embeds it: the API reference page at /reference/ then needs no network
# (an operator's browser on a closed network renders it). The files are committed, so building
# Herald needs neither npm nor the network; run this to move to another version (set VERSION and
# INTEGRITY, the package's `npm view swagger-ui-dist@VERSION dist.integrity`), then commit.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=${VERSION:-5.35.0}
INTEGRITY=${INTEGRITY:-sha512-U06rpMtW9V3XPGOBeamTUSr0Z09jMX4IJuANpE/EZbAhw0G8CgwrzU4YmXkn/h0wCDNsXdGarTNNHC3sU8yVUQ==}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "swagger-ui-dist@$VERSION" >/dev/null)
tarball=$(ls "$work"/swagger-ui-dist-*.tgz)
actual="sha512-$(openssl dgst -sha512 -binary "$tarball" | base64 -w0)"
if [ "$actual" != "$INTEGRITY" ]; then
    echo "reference-ui: swagger-ui-dist $VERSION is not the package pinned here ($actual)" >&2
    exit 1
fi
tar -xzf "$tarball" -C "$work"
for file in swagger-ui-bundle.js swagger-ui.css LICENSE NOTICE; do
    cp "$work/package/$file" host/reference/
done
echo "$VERSION" > host/reference/VERSION
echo "reference-ui: swagger-ui-dist $VERSION in host/reference/"
