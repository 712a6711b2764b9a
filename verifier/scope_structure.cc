// The shape of the comm-domain scopes: one chain wrapping the whole host body,
// named comm_d0.. in order, attrs empty, no empty scope, every alloc's
// WindowBuffer a slot of exactly one scope, slot names unique per scope, scopes
// and slots in alloc source order.

#include <fmt/format.h>

#include "ir/string_hash.h"
#include "verifier/checks.h"

namespace cds::verify {

using namespace cds::ir;

namespace {

std::string ScopeList(const HostAnalysis& a, const std::vector<std::pair<size_t, size_t>>& refs) {
  std::string s;
  for (size_t i = 0; i < refs.size(); ++i) {
    if (i) s += ", ";
    s += "'" + a.scopes[refs[i].first].stmt->name_hint + "'";
  }
  return s;
}

}  // namespace

void CheckScopeStructure(HostAnalysis& a, DiagnosticSink& sink) {
  const std::string& fname = a.fn->name;
  for (const auto& p : a.chain_problems)
    sink.Report(CheckId::kScopeChainMalformed, p.message, p.span);

  size_t prev_first = kNone;
  const CommDomainScopeStmt* prev_scope = nullptr;
  for (size_t si = 0; si < a.scopes.size(); ++si) {
    const ScopeInfo& scope = a.scopes[si];
    const CommDomainScopeStmt& stmt = *scope.stmt;

    std::string expected = fmt::format("comm_d{}", si);
    if (stmt.name_hint != expected) {
      sink.Report(CheckId::kScopeNameMismatch,
                  fmt::format("scope {} of '{}' is named '{}', expected '{}'", si, fname,
                              stmt.name_hint, expected),
                  stmt.span());
    }
    if (!stmt.attrs.empty()) {
      sink.Report(
          CheckId::kScopeAttrsNotEmpty,
          fmt::format(
              "scope '{}' of '{}' has {} attr(s) (first: '{}'); the pass creates scopes with "
              "empty attrs",
              stmt.name_hint, fname, stmt.attrs.size(), stmt.attrs[0].first),
          stmt.span());
    }
    if (stmt.slots.empty()) {
      sink.Report(CheckId::kEmptyScope,
                  fmt::format("scope '{}' of '{}' (devices {}) has no slots", stmt.name_hint, fname,
                              BriefDeviceList(stmt.devices)),
                  stmt.span());
    }

    ir::StringViewMap<size_t> names;
    names.reserve(stmt.slots.size());
    size_t prev_owner = kNone;
    size_t first = kNone;
    bool order_reported = false;
    for (size_t k = 0; k < stmt.slots.size(); ++k) {
      size_t owner = k < scope.slot_owner.size() ? scope.slot_owner[k] : kNone;
      if (owner == kNone) continue;
      const AllocInfo& alloc = a.allocs[owner];
      auto [it, inserted] = names.emplace(alloc.name, owner);
      if (!inserted && it->second != owner) {
        sink.Report(CheckId::kDuplicateSlotName,
                    fmt::format("scope '{}' of '{}' has two slots for allocs named '{}'",
                                stmt.name_hint, fname, alloc.name),
                    alloc.span);
      }
      if (prev_owner != kNone && owner < prev_owner && !order_reported) {
        sink.Report(
            CheckId::kSlotOrderMismatch,
            fmt::format(
                "scope '{}' of '{}' lists alloc '{}' after alloc '{}', but '{}' comes first in "
                "the source",
                stmt.name_hint, fname, alloc.name, a.allocs[prev_owner].name, alloc.name),
            stmt.span());
        order_reported = true;
      }
      prev_owner = owner;
      first = first == kNone ? owner : std::min(first, owner);
    }

    if (first != kNone) {
      if (prev_first != kNone && first < prev_first) {
        sink.Report(
            CheckId::kScopeOrderMismatch,
            fmt::format(
                "scope '{}' of '{}' comes after scope '{}', but its first alloc '{}' precedes "
                "'{}' in the source",
                stmt.name_hint, fname, prev_scope->name_hint, a.allocs[first].name,
                a.allocs[prev_first].name),
            stmt.span());
      }
      prev_first = first;
      prev_scope = &stmt;
    }
  }

  for (const AllocInfo& alloc : a.allocs) {
    if (alloc.slot_refs.empty()) {
      sink.Report(
          CheckId::kWindowBufferNotInScope,
          fmt::format(
              "the WindowBuffer of alloc '{}' in '{}' is not a slot of any comm-domain scope",
              alloc.name, fname),
          alloc.span);
    } else if (alloc.slot_refs.size() > 1) {
      sink.Report(
          CheckId::kWindowBufferInManyScopes,
          fmt::format(
              "the WindowBuffer of alloc '{}' in '{}' is a slot {} times (scopes {}); it must sit "
              "in exactly one scope",
              alloc.name, fname, alloc.slot_refs.size(), ScopeList(a, alloc.slot_refs)),
          alloc.span);
    }
  }
}

}  // namespace cds::verify
