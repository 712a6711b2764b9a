// fuzz_pipeline: bytes -> program model (GenerateFromBytes, a third of inputs
// with one planted defect) -> parse its text -> SynthesizeAllReduceSignals +
// MaterializeCommDomainScopes. A valid program must verify, match the model's
// scopes and be idempotent; an invalid one must get exactly the planted
// diagnostic. See pipeline_check.h for the oracle.

#include <cstddef>
#include <cstdint>

#include "fuzz/gen/generate.h"
#include "fuzz/targets/pipeline_check.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
// ASan defaults for this target (docs/fuzzing.md "Figures"); the ASAN_OPTIONS
// environment variable overrides each of them.
// - malloc_context_size=10 (default 30): ASan records a stack for every malloc
//   and free, and the IR allocates one shared_ptr node per expression. 10 frames
//   still reach from the allocation site into ir/, pass/ or verifier/ code (std::
//   internals are mostly inlined at -O2); ci/fuzz.sh reproduces findings with 30.
// - quarantine_size_mb=64 (default 256): one execution frees a few MB, so a
//   use-after-free within an input is still caught; with 256 MB the freed memory
//   kept the allocator on fresh pages (page faults, kernel zeroing).
// - allocator_release_to_os_interval_ms=-1: keep freed pages instead of
//   returning them every 5 s and faulting them in again (RSS stays ~160 MB).
extern "C" const char* __asan_default_options() {
  return "malloc_context_size=10:quarantine_size_mb=64:allocator_release_to_os_interval_ms=-1";
}
#endif
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The model consumes a few bytes per decision; longer inputs only add noise.
  if (size > 4096) return -1;
  cds::fuzz::GenOptions options;
  // Small programs keep executions fast (the bytes draw the size from [4, 16]);
  // scope and coverage bugs show up in a handful of statements.
  options.size = 16;
  // Three quarters of the valid programs never look at their text (the thorough
  // quarter and any finding render it in CheckGenerated).
  options.render_text = false;
  const auto program = cds::fuzz::GenerateFromBytes(data, size, options, /*allow_invalid=*/true);
  // The printer/parser round trips for a fixed quarter of the inputs (see
  // CheckGenerated); a cheap hash of the bytes picks which.
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < size; ++i) h = (h ^ data[i]) * 16777619u;
  cds::fuzz::check::CheckGenerated("fuzz_pipeline", program, /*thorough=*/h % 4 == 0);
  return 0;
}
