#!/usr/bin/env bash
# Each tool given runs on jemalloc with huge pages for what it maps
# (tools/common/allocator.cc): jemalloc's statistics, printed at exit on request,
# must name the option as set. Each tool is also run with the option overridden
# (what a tool whose malloc_conf the linker left out would report), and the check
# must then fail, or it proves nothing.
#
#   allocator_test.sh TOOL...
# Exit codes: 0 every tool passes; 1 a tool does not; 2 usage error.
set -euo pipefail
if (($# == 0)); then echo "allocator_test: give at least one tool (try --help)" >&2; exit 2; fi
if [[ "$1" == -h || "$1" == --help ]]; then sed -n '2,9p' "$0"; exit 0; fi

# uses_huge_pages TOOL [EXTRA_MALLOC_CONF]
uses_huge_pages() {
  MALLOC_CONF="stats_print:true${2:+,$2}" "$1" --help 2>&1 >/dev/null |
    grep -q '^  opt\.thp: "always"$'
}

failed=0
for tool in "$@"; do
  if ! uses_huge_pages "$tool"; then
    echo "allocator_test: $tool: not on jemalloc with thp:always (tools/common/allocator.cc)" >&2
    failed=1
  elif uses_huge_pages "$tool" thp:default; then
    echo "allocator_test: $tool: the check passes with thp:default too" >&2
    failed=1
  else
    echo "allocator_test: $tool: jemalloc, thp:always"
  fi
done
exit $failed
