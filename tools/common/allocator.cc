// Linked into the tools and benchmarks of builds without a sanitizer (the sanitizers
// bring their own allocator): jemalloc, configured here rather than by environment
// so that every run of a tool behaves alike.
//
// A tool builds one large IR and exits. On these paravirtualized machines the first
// touch of a 4 KiB page costs some 25 microseconds, and glibc's malloc maps each large
// block (a growing hash table's next array, the input's buffer) afresh in 4 KiB pages:
// page faults are then half of `cds-opt`'s time on a 6.8 MB program. With huge pages
// for everything it maps, jemalloc faults that memory in 2 MiB at a time.
extern "C" {
extern const char* malloc_conf;
const char* malloc_conf = "thp:always,metadata_thp:always";
}
