// One WindowBuffer per alloc, shared by pointer between all of the alloc's views
// and its scope slot, with base = the alloc's LHS Var, size = the alloc's byte
// size (byte_size.h) and both host-staging flags clear. Also resolves which
// alloc each scope slot belongs to, for scope_structure.cc and coverage.cc.

#include <algorithm>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <fmt/format.h>

#include "ir/printer.h"
#include "verifier/byte_size.h"
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
  SharingChecker(HostAnalysis& a, DiagnosticSink& sink, Contract contract)
      : a_(a), sink_(sink), contract_(contract) {}

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
        // PyPTO gives an in-place collective's result its WindowBuffer one pass
        // later (LowerHostTensorCollectives).
        if (view.kind == ViewKind::kCollectiveResult && contract_ == Contract::kPypto) continue;
        sink_.Report(
            CheckId::kViewMissingWindowBuffer,
            fmt::format("{} '{}' of alloc '{}' in '{}' has type {}; it must carry the alloc's "
                        "WindowBuffer",
                        ViewKindText(view.kind), view.var->name_hint, alloc.name, a_.fn->name,
                        TypeText(view.var->type)),
            view.stmt->span());
        continue;
      }
      owner_.try_emplace(wb.get(), ai);
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
    if (!fields_checked_.insert(&wb).second) return;
    CheckSize(wb, alloc);
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

  // The WindowBuffer's size must be the byte size its alloc asks for, compared
  // as values in the verifier's normal form, not as expression trees.
  void CheckSize(const WindowBuffer& wb, const AllocInfo& alloc) {
    std::string why = "the alloc is malformed";
    std::optional<ByteSize> expected = alloc.call ? AllocByteSize(*alloc.call, &why) : std::nullopt;
    if (!wb.size) {
      sink_.Report(
          CheckId::kWindowBufferSizeMismatch,
          fmt::format("WindowBuffer of alloc '{}' in '{}' has no size", alloc.name, a_.fn->name),
          SpanOf(wb, alloc));
      return;
    }
    const ByteSize actual = FoldByteSize(wb.size);
    if (expected && SameByteSize(actual, *expected)) return;
    std::string wanted = expected ? AskedFor(*alloc.call, *expected)
                                  : fmt::format("no size the verifier can read ({})", why);
    sink_.Report(
        CheckId::kWindowBufferSizeMismatch,
        fmt::format("WindowBuffer of alloc '{}' in '{}' has size {}; the alloc asks for {}",
                    alloc.name, a_.fn->name, WithValue(PrintNode(wb.size), actual), wanted),
        SpanOf(wb, alloc));
  }

  // "256 * 4 + 1 (1025 bytes)", or "1024 bytes" when the text is the value.
  static std::string WithValue(const std::string& text, const ByteSize& value) {
    std::string v = ByteSizeText(value);
    return text == v ? v + " bytes" : fmt::format("{} ({} bytes)", text, v);
  }

  static std::string AskedFor(const Call& alloc, const ByteSize& expected) {
    const ExprPtr& arg = alloc.args[0];
    if (arg->kind() != NodeKind::kMakeTuple) return WithValue(PrintNode(arg), expected);
    const AttrValue* dtype = FindKwarg(alloc.kwargs, "dtype");
    return fmt::format("shape {} of pl.{} ({} bytes)", PrintNode(arg),
                       DataTypeName(std::get<DataType>(*dtype)), ByteSizeText(expected));
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
      if (auto o = owner_.find(wb.get()); o != owner_.end()) {
        owner = o->second;
      } else if (auto p = wb->base ? a_.alloc_of_ptr.find(wb->base.get()) : a_.alloc_of_ptr.end();
                 p != a_.alloc_of_ptr.end()) {
        owner = p->second;
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
        owner_.try_emplace(wb.get(), owner);
        Fields(*wb, alloc);
      } else if (wb != alloc.canonical) {
        sink_.Report(
            CheckId::kWindowBufferNotShared,
            fmt::format(
                "slot '{}' of scope '{}' in '{}' is not the WindowBuffer object the views of alloc "
                "'{}' carry (slot and views must share one pointer)",
                wb->name_hint, stmt.name_hint, a_.fn->name, alloc.name),
            stmt.span());
        if (!owner_.contains(wb.get())) Fields(*wb, alloc);
      }
    }
  }

  HostAnalysis& a_;
  DiagnosticSink& sink_;
  Contract contract_;
  absl::flat_hash_map<const WindowBuffer*, size_t> owner_;
  absl::flat_hash_set<const WindowBuffer*> fields_checked_;  // size and flags checked
  std::vector<const WindowBuffer*> distinct_;                // per alloc, reused
};

}  // namespace

void CheckWindowBufferSharing(HostAnalysis& a, DiagnosticSink& sink, Contract contract) {
  SharingChecker(a, sink, contract).Run();
}

}  // namespace cds::verify
