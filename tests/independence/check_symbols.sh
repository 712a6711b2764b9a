#!/usr/bin/env bash
# Independence at the symbol level: the functions of ir/ that the pass calls are
# listed from cds_pass's undefined symbols (those libcds_ir.a defines), and no
# judge (the verifier, the generator's expectation code) may call one of them
# unless it is on the allow-list below: IR facts and infrastructure, never a rule.
# A rule shared through ir/ would let a bug in it pass every oracle.
#
#   check_symbols.sh --pass LIBCDS_PASS --ir LIBCDS_IR --judge NAME=FILE[:MEMBER,...] ...
#                    [--nm llvm-nm-14] [--cxxfilt llvm-cxxfilt-14]
#
# FILE is an archive or an object; with MEMBERs only those members of the archive
# count. Exit 0: no judge calls a pass-side ir/ function off the list; 1: some
# judge does (each call is named); 2: usage or tool error.
set -euo pipefail

# The allow-list: an extended regex matched against the start of the demangled
# name, then ` # ` and why a judge may share it with the pass.
ALLOWED=(
  'cds::ir::node_arena:: # node allocation (the arena every node lives in)'
  'cds::ir::DestroyNode\( # reference counting: freeing a node'
  'cds::detail::CheckFailed\( # internal assertions'
  'cds::ir::Call::OpName[[(] # node access: the name of a call'"'"'s op'
  'cds::ir::FindKwarg\( # node access: a kwarg by name'
  'cds::ir::FindAttr\( # node access: an attr by name'
  'cds::ir::NodeKindName\( # printing: a node kind'"'"'s name in a message'
  'cds::ir::StructuralEqual\( # equality of two IR trees'
  'cds::ir::(IRMutator|IRVisitor):: # the generic field-table walks'
  '(vtable|typeinfo|typeinfo name) for cds::ir::(IRMutator|IRVisitor)$ # the generic field-table walks'
  'cds::ir::DataTypeBytes\( # a dtype'"'"'s byte width, as PyPTO defines it (an IR fact)'
)

usage() { sed -n '2,13p' "$0"; }

NM=llvm-nm-14
CXXFILT=llvm-cxxfilt-14
PASS=""
IR=""
JUDGES=()
while (($#)); do
  case "$1" in
    --pass) PASS=$2; shift 2 ;;
    --ir) IR=$2; shift 2 ;;
    --judge) JUDGES+=("$2"); shift 2 ;;
    --nm) NM=$2; shift 2 ;;
    --cxxfilt) CXXFILT=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "check_symbols.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
if [[ -z "$PASS" || -z "$IR" || ${#JUDGES[@]} -eq 0 ]]; then
  echo "check_symbols.sh: --pass, --ir and at least one --judge are required" >&2
  exit 2
fi
for tool in "$NM" "$CXXFILT"; do
  command -v "$tool" >/dev/null || { echo "check_symbols.sh: $tool not found" >&2; exit 2; }
done
for f in "$PASS" "$IR"; do
  [[ -r "$f" ]] || { echo "check_symbols.sh: cannot read $f: $(ls "$f" 2>&1 >/dev/null | sed 's/.*: //')" >&2; exit 2; }
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Mangled names, one a line, sorted: what FILE leaves undefined (in the listed
# archive members only, when there are any) or what it defines.
undefined() {
  local file=$1 members=${2:-}
  "$NM" -A --undefined-only "$file" >"$tmp/nm" || { echo "check_symbols.sh: $NM failed on $file" >&2; exit 2; }
  # A member the archive lacks (a renamed source) would make the check vacuous.
  local m
  for m in ${members//,/ }; do
    grep -qF ":$m:" "$tmp/nm" || { echo "check_symbols.sh: $file has no member $m" >&2; exit 2; }
  done
  awk -v members=",$members," '
    { n = split($1, part, ":"); member = n >= 3 ? part[n - 1] : "" }
    members == ",," || index(members, "," member ",") { print $NF }' "$tmp/nm" | sort -u
}
defined() {
  "$NM" --defined-only "$1" | awk 'NF == 3 { print $3 }' | sort -u
}

defined "$IR" >"$tmp/ir"
undefined "$PASS" | comm -12 - "$tmp/ir" >"$tmp/pass_ir"

# mangled <TAB> demangled, for every ir/ function the pass calls.
"$CXXFILT" <"$tmp/pass_ir" | paste "$tmp/pass_ir" - >"$tmp/pass_ir.named"
allowed_re=""
for entry in "${ALLOWED[@]}"; do allowed_re+="${allowed_re:+|}(${entry%% # *})"; done
ALLOWED_RE="^($allowed_re)" awk -F'\t' '$2 !~ ENVIRON["ALLOWED_RE"] { print $1 }' "$tmp/pass_ir.named" | sort -u >"$tmp/guarded"

echo "cds_pass calls $(wc -l <"$tmp/pass_ir") functions of ir/; $(wc -l <"$tmp/guarded") of them are not" \
  "on the allow-list and no judge may call them:"
awk -F'\t' 'NR == FNR { guarded[$1] = 1; next } guarded[$1] { print "  " $2 }' "$tmp/guarded" \
  "$tmp/pass_ir.named" | cut -c1-160

# Entries that match nothing the pass calls are reported so the list stays short.
cut -f2 "$tmp/pass_ir.named" >"$tmp/pass_ir.demangled"
for entry in "${ALLOWED[@]}"; do
  if ! grep -Eq "^(${entry%% # *})" "$tmp/pass_ir.demangled"; then
    echo "note: allow-list entry '${entry%% # *}' matches no ir/ function the pass calls"
  fi
done

status=0
for judge in "${JUDGES[@]}"; do
  name=${judge%%=*}
  spec=${judge#*=}
  file=${spec%%:*}
  members=""
  [[ "$spec" == *:* ]] && members=${spec#*:}
  [[ -r "$file" ]] || { echo "check_symbols.sh: cannot read $file (judge $name)" >&2; exit 2; }
  undefined "$file" "$members" | comm -12 - "$tmp/guarded" >"$tmp/hits"
  if [[ -s "$tmp/hits" ]]; then
    status=1
    while IFS= read -r sym; do
      echo "FAIL: $name calls $("$CXXFILT" <<<"$sym" | cut -c1-160), an ir/ function the pass" \
        "calls that is no IR fact on the allow-list"
    done <"$tmp/hits"
  else
    echo "ok: $name calls no pass-side ir/ function off the allow-list"
  fi
done
exit $status
