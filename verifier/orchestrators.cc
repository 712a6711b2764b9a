#include "verifier/orchestrators.h"

namespace cds::verify {

using ir::FunctionType;
using ir::Level;

std::optional<Level> LevelOf(const ir::Function& fn) {
  if (fn.level) return fn.level;
  switch (fn.func_type) {
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
    case FunctionType::kOpaque:
    case FunctionType::kSpmd:
    case FunctionType::kInline:
      return std::nullopt;
  }
  return std::nullopt;
}

namespace {

bool Orchestrates(const ir::Function& fn) {
  return fn.role == ir::Role::kOrchestrator || fn.func_type == FunctionType::kOrchestration;
}

}  // namespace

bool IsHostOrchestrator(const ir::Function& fn) {
  return LevelOf(fn) == Level::kHost && Orchestrates(fn);
}

bool IsChipOrchestrator(const ir::Function& fn) {
  return LevelOf(fn) == Level::kChip && fn.func_type != FunctionType::kGraph && Orchestrates(fn);
}

}  // namespace cds::verify
