#include "pass/orchestrators.h"

namespace cds::pass {

using ir::FunctionType;
using ir::Level;

std::optional<Level> LevelOf(const ir::Function& f) {
  if (f.level) return f.level;
  switch (f.func_type) {
    case FunctionType::kOrchestration:
    case FunctionType::kGraph:
      return Level::kChip;
    case FunctionType::kInCore:
      return Level::kChipDie;
    case FunctionType::kAIC:
      return Level::kAIC;
    case FunctionType::kAIV:
      return Level::kAIV;
    case FunctionType::kGroup:
      return Level::kCoreGroup;
    default:
      return std::nullopt;
  }
}

namespace {
bool Orchestrates(const ir::Function& f) {
  return f.role == ir::Role::kOrchestrator || f.func_type == FunctionType::kOrchestration;
}
}  // namespace

bool IsHostOrchestrator(const ir::Function& f) {
  return LevelOf(f) == Level::kHost && Orchestrates(f);
}

bool IsChipOrchestrator(const ir::Function& f) {
  return LevelOf(f) == Level::kChip && f.func_type != FunctionType::kGraph && Orchestrates(f);
}

}  // namespace cds::pass
