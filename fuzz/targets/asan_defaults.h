#pragma once

// Included once per fuzz target binary: it defines the hook ASan reads at start-up.

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
// ASan defaults of the targets that run the pipeline (fuzz_pipeline,
// fuzz_text_mutate; docs/fuzzing.md "Throughput"); the ASAN_OPTIONS environment
// variable overrides each of them.
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
