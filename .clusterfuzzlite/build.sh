#!/bin/bash -eu
# OSS-Fuzz / ClusterFuzzLite build: $CC/$CXX/$CFLAGS/$CXXFLAGS carry the sanitizer
# and coverage flags, $LIB_FUZZING_ENGINE links the engine, and everything the
# fuzzing infrastructure needs goes to $OUT: each target,
# <target>_seed_corpus.zip (assembled by ci/seeds.py), <target>.dict and
# <target>.options.
#
# Local check (no Docker): CC=clang-14 CXX=clang++-14 CFLAGS=... CXXFLAGS=...
# LIB_FUZZING_ENGINE=-fsanitize=fuzzer SRC=/work SRC_DIR=/work/main OUT=... WORK=...
SRC_DIR=${SRC_DIR:-$SRC/cds-harness}
BUILD=${WORK:-/tmp}/cds-build
mkdir -p "$OUT"

# No CMAKE_BUILD_TYPE: the optimisation level is the infrastructure's ($CFLAGS).
# FMT_HEADER_ONLY: the OSS-Fuzz toolchain links libc++, while a packaged libfmt is
# built against libstdc++; header-only fmt sidesteps the ABI mismatch.
cmake -S "$SRC_DIR" -B "$BUILD" -G Ninja \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_C_FLAGS="$CFLAGS" -DCMAKE_CXX_FLAGS="$CXXFLAGS -DFMT_HEADER_ONLY" \
  -DCMAKE_BUILD_TYPE= \
  -DCDS_FUZZ_ENGINE="$LIB_FUZZING_ENGINE" \
  -DCDS_BUILD_TESTS=OFF -DCDS_BUILD_BENCH=OFF \
  -DPython3_EXECUTABLE="$(command -v python3)"
targets=$(cd "$SRC_DIR/fuzz/targets" && ls fuzz_*.cc | sed 's/\.cc$//')
# shellcheck disable=SC2086
cmake --build "$BUILD" -j"$(nproc)" --target $targets

for t in $targets; do
  cp "$BUILD/fuzz/targets/$t" "$OUT/"
  if python3 "$SRC_DIR/ci/seeds.py" --targets | grep -qx "$t"; then
    rm -rf "${WORK:-/tmp}/seeds-$t"
    python3 "$SRC_DIR/ci/seeds.py" "$t" "${WORK:-/tmp}/seeds-$t"
    python3 - "${WORK:-/tmp}/seeds-$t" "$OUT/${t}_seed_corpus.zip" <<'PY'
import os, sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as z:
    for name in sorted(os.listdir(src)):
        path = os.path.join(src, name)
        if os.path.isfile(path):
            z.write(path, name)
PY
  fi
  dict=$(python3 "$SRC_DIR/ci/seeds.py" --dict "$t")
  if [[ -n "$dict" ]]; then cp "$dict" "$OUT/$t.dict"; fi
  if [[ -f "$SRC_DIR/corpus/$t.options" ]]; then cp "$SRC_DIR/corpus/$t.options" "$OUT/$t.options"; fi
done
