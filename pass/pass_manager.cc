#include "pass/pass_manager.h"

#include <algorithm>
#include <iterator>

#include <fmt/format.h>

#include "ir/error.h"
#include "pass/materialize_comm_domain_scopes.h"
#include "pass/synthesize_allreduce_signals.h"

namespace cds::pass {

namespace {
// Every IRProperty, in the order of the enum.
constexpr IRProperty kAllProperties[] = {IRProperty::kAllReduceSignalsSynthesized,
                                         IRProperty::kCommDomainScopesMaterialized};
constexpr std::string_view kPropertyNames[] = {"AllReduceSignalsSynthesized",
                                               "CommDomainScopesMaterialized"};
static_assert(std::size(kPropertyNames) == std::size(kAllProperties));
}  // namespace

std::string_view IRPropertyName(IRProperty p) { return kPropertyNames[static_cast<size_t>(p)]; }

std::string IRPropertySet::ToString() const {
  std::vector<std::string_view> names;
  for (IRProperty p : kAllProperties) {
    if (Contains(p)) names.push_back(IRPropertyName(p));
  }
  return fmt::format("{{{}}}", fmt::join(names, ", "));
}

const std::vector<PassInfo>& RegisteredPasses() {
  static const std::vector<PassInfo> passes = {
      {std::string(kSynthesizeAllReduceSignalsPass),
       {},
       {IRProperty::kAllReduceSignalsSynthesized},
       {},
       [](const ir::ProgramPtr& p) { return SynthesizeAllReduceSignals(p); }},
      {std::string(kMaterializeCommDomainScopesPass),
       {},
       {IRProperty::kCommDomainScopesMaterialized},
       {},
       [](const ir::ProgramPtr& p) { return MaterializeCommDomainScopes(p); }},
  };
  return passes;
}

const PassInfo* FindPass(std::string_view name) {
  for (const auto& p : RegisteredPasses()) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

namespace {
std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The pass of that name; a ValueError listing the known ones when there is none.
const PassInfo& KnownPass(std::string_view name) {
  if (const PassInfo* pass = FindPass(name)) return *pass;
  std::vector<std::string_view> names;
  for (const auto& p : RegisteredPasses()) names.push_back(p.name);
  throw ValueError(
      fmt::format("unknown pass '{}' (known passes: {})", name, fmt::join(names, ", ")), {});
}
}  // namespace

std::vector<const PassInfo*> ParsePipeline(std::string_view pipeline) {
  std::vector<const PassInfo*> out;
  if (Trim(pipeline).empty()) return out;
  for (size_t begin = 0, end = 0; begin <= pipeline.size(); begin = end + 1) {
    end = std::min(pipeline.find(',', begin), pipeline.size());
    const std::string_view name = Trim(pipeline.substr(begin, end - begin));
    if (name.empty()) {
      throw ValueError(fmt::format("empty pass name in pipeline '{}'", pipeline), ir::Span{});
    }
    out.push_back(&KnownPass(name));
  }
  return out;
}

PassManager PassManager::FromPipeline(std::string_view pipeline) {
  PassManager pm;
  for (const PassInfo* p : ParsePipeline(pipeline)) pm.AddPass(*p);
  return pm;
}

void PassManager::AddPass(std::string_view name) { AddPass(KnownPass(name)); }

void PassManager::AddPass(const PassInfo& pass) { passes_.push_back(pass); }

void PassManager::AddInstrumentation(PassInstrumentationPtr instrumentation) {
  if (instrumentation) instrumentations_.push_back(std::move(instrumentation));
}

ir::ProgramPtr PassManager::Run(const ir::ProgramPtr& program, IRPropertySet initial) {
  properties_ = initial;
  ir::ProgramPtr current = program;
  for (const PassInfo& pass : passes_) {
    IRPropertySet missing = pass.required.Minus(properties_);
    if (!missing.Empty()) {
      throw ValueError(
          fmt::format("pass '{}' requires {} which the pipeline does not provide at that point",
                      pass.name, missing.ToString()),
          program ? program->span() : ir::Span{});
    }
    for (const auto& inst : instrumentations_) inst->BeforePass(pass.name, current);
    ir::ProgramPtr next = pass.run(current);
    for (const auto& inst : instrumentations_) inst->AfterPass(pass.name, current, next);
    properties_ = properties_.Minus(pass.invalidated).Union(pass.produced);
    current = std::move(next);
  }
  return current;
}

}  // namespace cds::pass
