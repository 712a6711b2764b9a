#!/usr/bin/env bash
# Each tool given runs on jemalloc with huge pages for what it maps
# (tools/common/allocator.cc): jemalloc's statistics, printed at exit on request,
# must name the option as set. The same check run on an executable without that
# allocator (the shell's own `true`) must fail, or the check proves nothing.
#
#   allocator_test.sh TOOL...
# Exit codes: 0 every tool passes; 1 a tool does not; 2 usage error.
set -euo pipefail
if (($# == 0)); then echo "allocator_test: give at least one tool (try --help)" >&2; exit 2; fi
if [[ "$1" == -h || "$1" == --help ]]; then sed -n '2,8p' "$0"; exit 0; fi

uses_huge_pages() {
  MALLOC_CONF=stats_print:true "$1" --help 2>&1 >/dev/null | grep -q '^  opt\.thp: "always"$'
}

if uses_huge_pages "$(command -v true)"; then
  echo "allocator_test: the check passes an executable without jemalloc" >&2
  exit 1
fi
failed=0
for tool in "$@"; do
  if uses_huge_pages "$tool"; then
    echo "allocator_test: $tool: jemalloc, thp:always"
  else
    echo "allocator_test: $tool: not on jemalloc with thp:always (tools/common/allocator.cc)" >&2
    failed=1
  fi
done
exit $failed
