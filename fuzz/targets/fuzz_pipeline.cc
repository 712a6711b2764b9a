// fuzz_pipeline: bytes -> program model (GenerateFromBytes, a third of inputs
// with one planted defect) -> parse its text -> SynthesizeAllReduceSignals +
// MaterializeCommDomainScopes. A valid program must verify, match the model's
// scopes and be idempotent; an invalid one must get exactly the planted
// diagnostic. See pipeline_check.h for the oracle.

#include <cstddef>
#include <cstdint>

#include "fuzz/gen/generate.h"
#include "fuzz/targets/asan_defaults.h"
#include "fuzz/targets/pipeline_check.h"

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
