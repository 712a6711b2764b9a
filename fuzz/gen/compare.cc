#include "fuzz/gen/compare.h"

#include <optional>
#include <string_view>
#include <variant>

#include <absl/container/flat_hash_map.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "ir/dispatch.h"
#include "ir/op_registry.h"
#include "ir/stmt.h"
#include "ir/walk.h"

namespace cds::fuzz {

namespace {

// Two world sizes tell a constant size from one that scales with the world size,
// and a wrong factor from the right one.
constexpr int64_t kWorldSizes[] = {3, 8};

template <typename F>
void ForEachStmtUnder(const ir::StmtPtr& s, F& f) {
  if (!s) return;
  f(s);
  ir::ForEachSubStmt(*s, [&](const ir::StmtPtr& sub) { ForEachStmtUnder(sub, f); });
}

// "all" or "[0, 1]", from the raw data (an unsorted or repeated list shows as is).
std::string DevicesText(const ir::DeviceSet& d) {
  const std::string ids = fmt::format("[{}]", fmt::join(d.ids, ", "));
  if (!d.all) return ids;
  return d.ids.empty() ? "all" : "all" + ids;
}

std::string SizeText(const std::vector<std::optional<int64_t>>& bytes) {
  std::vector<std::string> parts;
  for (const auto& b : bytes) parts.push_back(b ? std::to_string(*b) : "?");
  return fmt::format("{}", fmt::join(parts, "/"));
}

// The scopes, alloc names and scalar definitions of one output function.
class OutputReader {
 public:
  explicit OutputReader(const ir::Function& f) {
    auto visit = [this](const ir::StmtPtr& s) {
      if (auto a = ir::TryAs<ir::AssignStmt>(s, ir::NodeKind::kAssignStmt)) {
        definitions_[a->var.get()] = a->value;
        auto call = ir::TryAs<ir::Call>(a->value, ir::NodeKind::kCall);
        if (call && call->OpName() == ir::ops::kAllocWindowBuffer) {
          const ir::AttrValue* name = ir::FindKwarg(call->kwargs, "name");
          alloc_names_[a->var.get()] = name && std::holds_alternative<std::string>(*name)
                                           ? std::string_view(std::get<std::string>(*name))
                                           : std::string_view(a->var->name_hint);
        }
      } else if (auto scope =
                     ir::TryAs<ir::CommDomainScopeStmt>(s, ir::NodeKind::kCommDomainScopeStmt)) {
        scopes_.push_back(scope);
      }
    };
    ForEachStmtUnder(f.body, visit);
  }

  // Whether Chain() would equal ExpectedChain(fe), decided on the values: the
  // comparison runs on every fuzz input, the two texts are needed only to report
  // a difference.
  bool Matches(const FunctionExpect& fe) const {
    if (scopes_.size() != fe.scopes.size()) return false;
    for (size_t s = 0; s < scopes_.size(); ++s) {
      const ir::CommDomainScopeStmt& got = *scopes_[s];
      const ScopeExpect& want = fe.scopes[s];
      if (got.name_hint != want.name || got.devices != want.devices ||
          got.slots.size() != want.slots.size()) {
        return false;
      }
      for (size_t i = 0; i < want.slots.size(); ++i) {
        const ir::WindowBufferPtr& wb = got.slots[i];
        if (!wb || !wb->base || wb->base->name_hint != want.slot_vars[i]) return false;
        auto it = alloc_names_.find(wb->base.get());
        if (it == alloc_names_.end() || it->second != want.slots[i]) return false;
        for (int64_t w : kWorldSizes) {
          if (Evaluate(wb->size, w, 0) != want.sizes[i].At(w)) return false;
        }
      }
    }
    return true;
  }

  std::string Chain() const {
    std::vector<std::string> out;
    for (const auto& scope : scopes_) {
      std::vector<std::string> slots;
      for (const ir::WindowBufferPtr& wb : scope->slots) {
        if (!wb || !wb->base) {
          slots.push_back("<no base>");
          continue;
        }
        auto it = alloc_names_.find(wb->base.get());
        std::vector<std::optional<int64_t>> bytes;
        for (int64_t w : kWorldSizes) bytes.push_back(Evaluate(wb->size, w, 0));
        slots.push_back(fmt::format(
            "{}({})={}", it != alloc_names_.end() ? it->second : std::string_view("<not an alloc>"),
            wb->base->name_hint, SizeText(bytes)));
      }
      out.push_back(fmt::format("{} {} [{}]", scope->name_hint, DevicesText(scope->devices),
                                fmt::join(slots, ", ")));
    }
    return fmt::format("{}", fmt::join(out, "; "));
  }

 private:
  // The value of an integer expression at the given world size, following scalar
  // variables to their definitions; nullopt for anything else.
  std::optional<int64_t> Evaluate(const ir::ExprPtr& e, int64_t world_size, int depth) const {
    if (!e || depth > 64) return std::nullopt;
    if (auto c = ir::TryAs<ir::ConstInt>(e, ir::NodeKind::kConstInt)) return c->value;
    if (e->kind() == ir::NodeKind::kVar) {
      auto it = definitions_.find(e.get());
      if (it == definitions_.end()) return std::nullopt;
      return Evaluate(it->second, world_size, depth + 1);
    }
    if (auto call = ir::TryAs<ir::Call>(e, ir::NodeKind::kCall)) {
      if (call->OpName() == ir::ops::kWorldSize) return world_size;
      return std::nullopt;
    }
    auto b = ir::TryAs<ir::BinaryExpr>(e, ir::NodeKind::kBinaryExpr);
    if (!b) return std::nullopt;
    const std::optional<int64_t> l = Evaluate(b->lhs, world_size, depth + 1);
    const std::optional<int64_t> r = Evaluate(b->rhs, world_size, depth + 1);
    if (!l || !r) return std::nullopt;
    if (b->op == ir::BinaryOp::kAdd) return *l + *r;
    if (b->op == ir::BinaryOp::kSub) return *l - *r;
    if (b->op == ir::BinaryOp::kMul) return *l * *r;
    return std::nullopt;
  }

  std::vector<ir::NodeRef<const ir::CommDomainScopeStmt>> scopes_;
  // Views into the output program, which outlives the reader.
  absl::flat_hash_map<const ir::Node*, std::string_view> alloc_names_;
  absl::flat_hash_map<const ir::Node*, ir::ExprPtr> definitions_;
};

bool HasCommDomainScope(const ir::Function& f) {
  bool found = false;
  auto visit = [&found](const ir::StmtPtr& s) {
    found = found || s->kind() == ir::NodeKind::kCommDomainScopeStmt;
  };
  ForEachStmtUnder(f.body, visit);
  return found;
}

std::string ExpectedChain(const FunctionExpect& fe) {
  std::vector<std::string> out;
  for (const ScopeExpect& scope : fe.scopes) {
    std::vector<std::string> slots;
    for (size_t i = 0; i < scope.slots.size(); ++i) {
      std::vector<std::optional<int64_t>> bytes;
      for (int64_t w : kWorldSizes) bytes.push_back(scope.sizes[i].At(w));
      slots.push_back(
          fmt::format("{}({})={}", scope.slots[i], scope.slot_vars[i], SizeText(bytes)));
    }
    out.push_back(
        fmt::format("{} {} [{}]", scope.name, DevicesText(scope.devices), fmt::join(slots, ", ")));
  }
  return fmt::format("{}", fmt::join(out, "; "));
}

}  // namespace

std::string ModelMismatch(const Expectation& expect, const ir::Program& output) {
  std::string problems;
  auto report = [&](const std::string& function, const std::string& want, const std::string& got) {
    problems += fmt::format("function {}:\n  expected: {}\n  got:      {}\n", function,
                            want.empty() ? "(no scopes)" : want, got.empty() ? "(no scopes)" : got);
  };
  for (const FunctionExpect& fe : expect.functions) {
    const ir::Function* found = nullptr;
    for (const ir::FunctionPtr& f : output.functions) {
      if (f && f->name == fe.name) found = f.get();
    }
    if (!found) {
      report(fe.name, ExpectedChain(fe), "(no such function)");
      continue;
    }
    OutputReader reader(*found);
    if (!reader.Matches(fe)) report(fe.name, ExpectedChain(fe), reader.Chain());
  }
  for (const ir::FunctionPtr& f : output.functions) {
    if (!f || expect.Find(f->name) || !HasCommDomainScope(*f)) continue;
    report(f->name, "", OutputReader(*f).Chain());
  }
  return problems;
}

}  // namespace cds::fuzz
