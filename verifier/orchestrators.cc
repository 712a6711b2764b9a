#include "verifier/orchestrators.h"

#include <utility>

namespace cds::verify {

using ir::FunctionType;
using ir::Level;

namespace {

// The level each function type implies when none is declared; types not listed
// imply none.
constexpr std::pair<FunctionType, Level> kImpliedLevels[] = {
    {FunctionType::kOrchestration, Level::kChip},
    {FunctionType::kGraph, Level::kChip},
    {FunctionType::kInCore, Level::kChipDie},
    {FunctionType::kAIC, Level::kAIC},
    {FunctionType::kAIV, Level::kAIV},
    {FunctionType::kGroup, Level::kCoreGroup},
};

enum class Orchestrator { kNone, kHost, kChip };

Orchestrator Classify(const ir::Function& fn) {
  const bool orchestrates =
      fn.func_type == FunctionType::kOrchestration || fn.role == ir::Role::kOrchestrator;
  if (!orchestrates) return Orchestrator::kNone;
  const std::optional<Level> level = LevelOf(fn);
  if (level == Level::kHost) return Orchestrator::kHost;
  if (level == Level::kChip && fn.func_type != FunctionType::kGraph) return Orchestrator::kChip;
  return Orchestrator::kNone;
}

}  // namespace

std::optional<Level> LevelOf(const ir::Function& fn) {
  if (fn.level) return fn.level;
  for (const auto& [type, level] : kImpliedLevels) {
    if (type == fn.func_type) return level;
  }
  return std::nullopt;
}

bool IsHostOrchestrator(const ir::Function& fn) { return Classify(fn) == Orchestrator::kHost; }

bool IsChipOrchestrator(const ir::Function& fn) { return Classify(fn) == Orchestrator::kChip; }

}  // namespace cds::verify
