#!/bin/bash
# Copies what bench/gpu/capture.sh needs into DEST (a folder the device tool carries):
# the built rankscope and rankscoped, their non-system shared libraries, the Python collector,
# the workloads and the capture script; with WITH_MPI=1 also the ingest benchmark and a relocatable
# copy of Debian's Open MPI (mpirun, its plugins and libraries under DEST/ompi, found there through
# OPAL_PREFIX: the device image has no Open MPI), for `capture.sh scale`.
#   [WITH_MPI=1] bench/gpu/make_bundle.sh BUILD_DIR DEST
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
mkdir -p "$DEST/accuracy"  # capture.sh ground-truth scores its recording on the device
cp "$REPO/bench/accuracy/run_accuracy.py" "$REPO/bench/accuracy/scoring.py" "$DEST/accuracy/"
if [ "${WITH_MPI:-0}" = 1 ]; then
  # Debian's layout under a new prefix: OPAL_PREFIX=DEST/ompi maps /usr to it.
  M=$DEST/ompi MULTIARCH=lib/x86_64-linux-gnu
  mkdir -p "$M/bin" "$M/$MULTIARCH/openmpi/lib" "$M/$MULTIARCH/pmix2" "$M/share" "$M/libs"
  cp /usr/bin/orterun "$M/bin/mpirun"; cp /usr/bin/orted "$M/bin/"
  cp -r /usr/$MULTIARCH/openmpi/lib/openmpi3 "$M/$MULTIARCH/openmpi/lib/"
  cp -r /usr/$MULTIARCH/pmix2/lib /usr/$MULTIARCH/pmix2/share "$M/$MULTIARCH/pmix2/"
  rm -f "$M/$MULTIARCH/pmix2/lib/libpmix.a"
  cp -r /usr/share/openmpi "$M/share/"
  for f in "$M"/bin/* $(find "$M/$MULTIARCH" -name '*.so'); do ldd "$f" | awk '/=>/ {print $3}'; done | sort -u |
    grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|libz|libpthread|libdl|librt)\.so' | xargs -I{} cp -L {} "$M/libs/"
  cp "$BUILD/bench/rankscope_ingest_bench" "$DEST/bin/"
fi
find "$DEST" -name __pycache__ -prune -exec rm -rf {} +
du -sh "$DEST"; ls "$DEST/lib"
