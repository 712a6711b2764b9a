#include "tests/prop/prop_util.h"

#include <unordered_map>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <rapidcheck.h>

#include "driver/driver.h"
#include "ir/dispatch.h"
#include "ir/error.h"
#include "ir/mutator.h"
#include "ir/visitor.h"
#include "verifier/orchestrators.h"

namespace cds::prop {

ir::ProgramPtr RunDefaultPipeline(const ir::ProgramPtr& program) {
  driver::PipelineOptions options;
  options.verify_each = false;
  return driver::RunPipeline(program, options);
}

namespace {

// Pre-order collection of scopes and of the alloc LHS Var -> logical name map.
class ScopeReader final : public ir::IRVisitor {
 public:
  void VisitAssignStmt(const ir::NodeRef<const ir::AssignStmt>& n) override {
    if (auto call = ir::TryAs<ir::Call>(n->value, ir::NodeKind::kCall);
        call && call->OpName() == "pld.tensor.alloc_window_buffer") {
      std::string name = n->var->name_hint;
      if (const ir::AttrValue* v = ir::FindKwarg(call->kwargs, "name")) {
        if (const auto* s = std::get_if<std::string>(v)) name = *s;
      }
      alloc_names[n->var.get()] = name;
    }
    VisitChildren(*n);
  }
  void VisitCommDomainScopeStmt(const ir::NodeRef<const ir::CommDomainScopeStmt>& n) override {
    scopes.push_back(n);
    VisitChildren(*n);
  }

  std::unordered_map<const ir::Var*, std::string> alloc_names;
  std::vector<ir::NodeRef<const ir::CommDomainScopeStmt>> scopes;
};

class Renamer final : public ir::IRMutator {
 public:
  explicit Renamer(std::string prefix) : prefix_(std::move(prefix)) {}

  ir::VarPtr MutateDef(const ir::VarPtr& v) override { return Map(v); }
  ir::NodePtr MutateVar(const ir::NodeRef<const ir::Var>& n) override { return Map(n); }
  ir::NodePtr MutateIterArg(const ir::NodeRef<const ir::IterArg>& n) override { return Map(n); }

 private:
  // Scope slots mention a WindowBuffer (and so its base) before the alloc that
  // defines the base, so a use may be the first sighting: map on first sight.
  ir::VarPtr Map(const ir::VarPtr& v) {
    if (!v || (v->kind() != ir::NodeKind::kVar && v->kind() != ir::NodeKind::kIterArg)) return v;
    auto it = map_.find(v.get());
    if (it != map_.end()) return it->second;
    if (v->kind() == ir::NodeKind::kIterArg) {
      // A loop-carried name: renamed too, its init value (a use) mapped.
      const auto& ia = static_cast<const ir::IterArg&>(*v);
      auto fresh = ir::MakeNode<ir::IterArg>(prefix_ + v->name_hint, MutateType(v->type),
                                             MutateExpr(ia.init_value));
      fresh->set_span(v->span());
      map_[v.get()] = fresh;
      return fresh;
    }
    auto fresh = ir::MakeNode<ir::Var>(prefix_ + v->name_hint, MutateType(v->type));
    fresh->set_span(v->span());
    map_[v.get()] = fresh;
    return fresh;
  }

  std::string prefix_;
  std::unordered_map<const ir::Var*, ir::VarPtr> map_;
};

}  // namespace

std::vector<ObservedFunction> ObserveScopes(const ir::ProgramPtr& program) {
  std::vector<ObservedFunction> out;
  for (const ir::FunctionPtr& f : program->functions) {
    if (!verify::IsHostOrchestrator(*f)) continue;
    ScopeReader reader;
    reader.VisitNode(f->body);
    ObservedFunction of{f->name, {}};
    for (const auto& s : reader.scopes) {
      ObservedScope os{s->name_hint, s->devices, {}, {}};
      for (const ir::WindowBufferPtr& wb : s->slots) {
        auto it =
            wb && wb->base ? reader.alloc_names.find(wb->base.get()) : reader.alloc_names.end();
        os.slots.push_back(it != reader.alloc_names.end() ? it->second : "<no alloc>");
        os.slot_vars.push_back(wb && wb->base ? wb->base->name_hint : "<null>");
      }
      of.scopes.push_back(std::move(os));
    }
    out.push_back(std::move(of));
  }
  return out;
}

std::vector<ObservedFunction> ExpectedScopes(const fuzz::Expectation& expect) {
  std::vector<ObservedFunction> out;
  for (const fuzz::FunctionExpect& f : expect.functions) {
    ObservedFunction of{f.name, {}};
    for (const fuzz::ScopeExpect& s : f.scopes) {
      of.scopes.push_back(ObservedScope{s.name, s.devices, s.slots, s.slot_vars});
    }
    out.push_back(std::move(of));
  }
  return out;
}

std::string ToString(const std::vector<ObservedFunction>& fns) {
  std::string s;
  for (const ObservedFunction& f : fns) {
    s += f.name + ":\n";
    for (const ObservedScope& sc : f.scopes) {
      s += fmt::format("  {} devices={} slots=[{}] vars=[{}]\n", sc.name, sc.devices.ToString(),
                       fmt::join(sc.slots, ", "), fmt::join(sc.slot_vars, ", "));
    }
  }
  return s;
}

ir::ProgramPtr RenamedCopy(const ir::ProgramPtr& program, const std::string& prefix) {
  Renamer r(prefix);
  return r.MutateAs(program);
}

std::string FailureMessage(const std::string& what, const fuzz::GeneratedProgram& p,
                           const std::vector<verify::Diagnostic>& diags) {
  std::string s = what + "\n";
  if (!diags.empty()) s += verify::FormatDiagnostics(diags);
  s += "--- program (RenderText) ---\n" + p.text;
  return s;
}

ir::ProgramPtr PipelineOrFail(const fuzz::GeneratedProgram& p) {
  RC_LOG() << p.text;
  if (!p.expect.problems.empty()) {
    RC_FAIL(FailureMessage("generator bug: a valid program has expectation problems: " +
                               fmt::format("{}", fmt::join(p.expect.problems, "; ")),
                           p));
  }
  try {
    return RunDefaultPipeline(p.ir);
  } catch (const ValueError& e) {
    RC_FAIL(FailureMessage("the pipeline rejected a valid program: " + e.Format(), p));
  }
}

}  // namespace cds::prop
