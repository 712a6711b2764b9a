// One WindowBuffer per alloc, shared by pointer between all of the alloc's views
// and its scope slot, with base = the alloc's LHS Var, size = AllocSizeBytes(alloc)
// and both host-staging flags clear. Also resolves which alloc each scope slot
// belongs to, for scope_structure.cc and coverage.cc.

#include <algorithm>

#include <fmt/format.h>

#include "ir/error.h"
#include "ir/op_registry.h"
#include "ir/structural_equal.h"
#include "verifier/checks.h"
#include "verifier/type_util.h"

namespace cds::verify {

using namespace cds::ir;

namespace {

// A reference, not a copy: no reference-count traffic per view.
const WindowBufferPtr& WindowBufferPtrOf(const TypePtr& type) {
  static const WindowBufferPtr kNull;
  if (!type || type->kind() != NodeKind::kDistributedTensorType) return kNull;
  return static_cast<const DistributedTensorType&>(*type).window_buffer;
}

std::string_view ViewKindText(ViewKind k) {
  switch (k) {
    case ViewKind::kWindow:
      return "view";
    case ViewKind::kAlias:
      return "alias";
    case ViewKind::kCollectiveResult:
      return "in-place collective result";
  }
  return "view";
}

class SharingChecker {
 public:
  SharingChecker(HostAnalysis& a, DiagnosticSink& sink) : a_(a), sink_(sink) {}

  void Run() {
    for (size_t i = 0; i < a_.allocs.size(); ++i) Views(i);
    for (size_t si = 0; si < a_.scopes.size(); ++si) Slots(si);
  }

 private:
  Span SpanOf(const WindowBuffer& wb, const AllocInfo& alloc) {
    return wb.span().IsKnown() ? wb.span() : alloc.span;
  }

  void Views(size_t ai) {
    AllocInfo& alloc = a_.allocs[ai];
    const ViewInfo* first = nullptr;
    std::vector<const WindowBuffer*>& distinct = distinct_;
    distinct.clear();
    for (size_t vi : alloc.views) {
      const ViewInfo& view = a_.views[vi];
      const WindowBufferPtr& wb = WindowBufferPtrOf(view.var->type);
      if (!wb) {
        sink_.Report(
            CheckId::kViewMissingWindowBuffer,
            fmt::format("{} '{}' of alloc '{}' in '{}' has type {}; it must carry the alloc's "
                        "WindowBuffer",
                        ViewKindText(view.kind), view.var->name_hint, alloc.name, a_.fn->name,
                        DescribeType(view.var->type)),
            view.stmt->span());
        continue;
      }
      owner_.Insert(wb.get(), ai);
      if (!alloc.canonical) {
        alloc.canonical = wb;
        first = &view;
      } else if (wb != alloc.canonical) {
        sink_.Report(
            CheckId::kWindowBufferNotShared,
            fmt::format(
                "{} '{}' of alloc '{}' in '{}' holds a different WindowBuffer object than {} '{}' "
                "(all views of one alloc must share one pointer)",
                ViewKindText(view.kind), view.var->name_hint, alloc.name, a_.fn->name,
                ViewKindText(first->kind), first->var->name_hint),
            view.stmt->span());
      }
      if (std::find(distinct.begin(), distinct.end(), wb.get()) == distinct.end()) {
        distinct.push_back(wb.get());
        Fields(*wb, alloc);
      }
    }
  }

  // Base is checked per (WindowBuffer, alloc): one object reached from two allocs'
  // views is wrong for at least one of them. Size and flags once per object.
  void Fields(const WindowBuffer& wb, const AllocInfo& alloc) {
    if (wb.base.get() != alloc.var) {
      std::string base = wb.base ? fmt::format("'{}'", wb.base->name_hint) : std::string("null");
      std::string detail = wb.base && wb.base->name_hint == alloc.var->name_hint
                               ? " (a different Var with the same name)"
                               : "";
      sink_.Report(
          CheckId::kWindowBufferBaseMismatch,
          fmt::format(
              "WindowBuffer of alloc '{}' in '{}' has base {}{}; it must be the alloc's LHS "
              "variable '{}' itself",
              alloc.name, a_.fn->name, base, detail, alloc.var->name_hint),
          SpanOf(wb, alloc));
    }
    if (!fields_checked_.Insert(&wb, true)) return;
    std::string expected_text;
    bool size_ok = false;
    try {
      ExprPtr expected = alloc.call ? AllocSizeBytes(*alloc.call) : nullptr;
      if (expected) {
        size_ok = expected == wb.size || StructuralEqual(expected, wb.size);
        if (!size_ok) expected_text = DescribeExpr(expected);  // only needed for the report
      } else {
        expected_text = "<no size: malformed alloc>";
      }
    } catch (const cds::ValueError& e) {
      expected_text = fmt::format("<no size: {}>", e.message());
    }
    if (!size_ok) {
      sink_.Report(
          CheckId::kWindowBufferSizeMismatch,
          fmt::format(
              "WindowBuffer of alloc '{}' in '{}' has size {}, expected AllocSizeBytes = {}",
              alloc.name, a_.fn->name, DescribeExpr(wb.size), expected_text),
          SpanOf(wb, alloc));
    }
    if (wb.load_from_host || wb.store_to_host) {
      sink_.Report(
          CheckId::kWindowBufferFlagSet,
          fmt::format(
              "WindowBuffer of alloc '{}' in '{}' has load_from_host={} store_to_host={}; the "
              "pass always sets both to False",
              alloc.name, a_.fn->name, wb.load_from_host ? "True" : "False",
              wb.store_to_host ? "True" : "False"),
          SpanOf(wb, alloc));
    }
  }

  void Slots(size_t si) {
    ScopeInfo& scope = a_.scopes[si];
    const CommDomainScopeStmt& stmt = *scope.stmt;
    scope.slot_owner.assign(stmt.slots.size(), kNone);
    for (size_t k = 0; k < stmt.slots.size(); ++k) {
      const WindowBufferPtr& wb = stmt.slots[k];
      if (!wb) {
        sink_.Report(
            CheckId::kMalformedIR,
            fmt::format("slot {} of scope '{}' in '{}' is null", k, stmt.name_hint, a_.fn->name),
            stmt.span());
        continue;
      }
      size_t owner = kNone;
      if (const size_t* o = owner_.Find(wb.get())) {
        owner = *o;
      } else if (const size_t* p = wb->base ? a_.alloc_of_ptr.Find(wb->base.get()) : nullptr) {
        owner = *p;
      }
      if (owner == kNone) {
        sink_.Report(
            CheckId::kSlotWithoutAlloc,
            fmt::format(
                "slot '{}' of scope '{}' in '{}' is a WindowBuffer of no alloc in the function "
                "(no view carries it and its base is no alloc's variable)",
                wb->name_hint, stmt.name_hint, a_.fn->name),
            stmt.span());
        continue;
      }
      AllocInfo& alloc = a_.allocs[owner];
      scope.slot_owner[k] = owner;
      alloc.slot_refs.emplace_back(si, k);
      if (!alloc.canonical) {
        // No view carries a WindowBuffer (each was reported): the slot stands for the alloc.
        alloc.canonical = wb;
        owner_.Insert(wb.get(), owner);
        Fields(*wb, alloc);
      } else if (wb != alloc.canonical) {
        sink_.Report(
            CheckId::kWindowBufferNotShared,
            fmt::format(
                "slot '{}' of scope '{}' in '{}' is not the WindowBuffer object the views of alloc "
                "'{}' carry (slot and views must share one pointer)",
                wb->name_hint, stmt.name_hint, a_.fn->name, alloc.name),
            stmt.span());
        if (owner_.Find(wb.get()) == nullptr) Fields(*wb, alloc);
      }
    }
  }

  HostAnalysis& a_;
  DiagnosticSink& sink_;
  PtrTable<size_t> owner_;         // WindowBuffer -> alloc
  PtrTable<bool> fields_checked_;  // WindowBuffers whose size and flags were checked
  std::vector<const WindowBuffer*> distinct_;  // per alloc, reused
};

}  // namespace

void CheckWindowBufferSharing(HostAnalysis& a, DiagnosticSink& sink) {
  SharingChecker(a, sink).Run();
}

}  // namespace cds::verify
