#!/bin/bash
# Copies what bench/gpu/capture.sh needs into DEST (a folder the device tool carries):
# the built rankscope and rankscoped, their non-system shared libraries, the Python collector,
# the workloads and the capture script.
#   bench/gpu/make_bundle.sh BUILD_DIR DEST
set -eu
BUILD=$1 DEST=$2 REPO=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$DEST"; mkdir -p "$DEST/bin" "$DEST/lib"
cp "$BUILD/src/rankscope/cli/rankscope" "$BUILD/src/rankscope/daemon/rankscoped" "$DEST/bin/"
for lib in $(ldd "$DEST/bin/rankscope" "$DEST/bin/rankscoped" | awk '/=>/ {print $3}' | sort -u); do
  case $(basename "$lib") in
    libc.so*|libm.so*|libstdc++*|libgcc_s*|libssl*|libcrypto*|libz.so*) ;;  # the device image has these
    *) cp -L "$lib" "$DEST/lib/" ;;
  esac
done
cp -r "$REPO/python" "$DEST/python"
cp -r "$REPO/workloads" "$DEST/workloads"
cp "$REPO/bench/gpu/capture.sh" "$REPO/bench/gpu/pack.py" "$DEST/"
find "$DEST" -name __pycache__ -prune -exec rm -rf {} +
du -sh "$DEST"; ls "$DEST/lib"
