#!/bin/bash -eu
# OSS-Fuzz conventions: $CC/$CXX/$CFLAGS/$CXXFLAGS carry the sanitizer and
# coverage flags, $LIB_FUZZING_ENGINE links the engine, everything the fuzzing
# infrastructure needs goes to $OUT: each target, <target>_seed_corpus.zip,
# <target>.dict and <target>.options.
SRC_DIR=${SRC_DIR:-$SRC/cds-harness}
BUILD=${WORK:-/tmp}/cds-build

cmake -S "$SRC_DIR" -B "$BUILD" -G Ninja \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DCMAKE_C_FLAGS="$CFLAGS" -DCMAKE_CXX_FLAGS="$CXXFLAGS" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCDS_FUZZ_ENGINE="$LIB_FUZZING_ENGINE" \
  -DCDS_BUILD_TESTS=OFF -DCDS_BUILD_BENCH=OFF
targets=$(cd "$SRC_DIR/fuzz/targets" && ls fuzz_*.cc | sed 's/\.cc$//')
cmake --build "$BUILD" --target $targets

for t in $targets; do
  cp "$BUILD/fuzz/targets/$t" "$OUT/"
  if [[ -d "$SRC_DIR/corpus/$t" ]]; then
    python3 - "$SRC_DIR/corpus/$t" "$OUT/${t}_seed_corpus.zip" <<'PY'
import os, sys, zipfile
src, dst = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as z:
    for name in sorted(os.listdir(src)):
        path = os.path.join(src, name)
        if os.path.isfile(path):
            z.write(path, name)
PY
  fi
  [[ -f "$SRC_DIR/corpus/$t.dict" ]] && cp "$SRC_DIR/corpus/$t.dict" "$OUT/$t.dict"
  [[ -f "$SRC_DIR/corpus/$t.options" ]] && cp "$SRC_DIR/corpus/$t.options" "$OUT/$t.options"
done
