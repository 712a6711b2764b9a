// Scope devices against coverage the verifier derives itself: device descriptors
// of dispatches, ALL-absorbing union per alloc, then one level of
// inheritance from a collective's data/target alloc to its signal (and
// all_to_all_v's recv_counts). Inheritance reads dispatch coverage only, so chains
// do not propagate and the order of collectives does not matter.

#include <optional>

#include <absl/container/flat_hash_map.h>
#include <fmt/format.h>

#include "ir/op_registry.h"
#include "verifier/checks.h"
#include "verifier/type_util.h"

namespace cds::verify {

using namespace cds::ir;

namespace {

std::optional<BoundValue> ResolveBound(const ExprPtr& e, const BoundEnv& bounds) {
  if (!e) return std::nullopt;
  if (e->kind() == NodeKind::kConstInt)
    return BoundValue{BoundKind::kConst, static_cast<const ConstInt&>(*e).value};
  if (e->kind() == NodeKind::kCall) {
    const auto& c = static_cast<const Call&>(*e);
    if (c.OpName() == ops::kWorldSize && c.args.empty())
      return BoundValue{BoundKind::kWorldSize, 0};
    return std::nullopt;
  }
  if (IsVarLikeKind(e->kind())) {
    auto it = bounds.find(static_cast<const Var*>(e.get()));
    if (it != bounds.end()) return it->second;
  }
  return std::nullopt;
}

Descriptor Bad(std::string why) { return Descriptor{false, {}, std::move(why)}; }

// The widest constant range the pass accepts as a device descriptor; it refuses
// wider ones rather than enumerate them.
constexpr int64_t kMaxRangeDevices = int64_t{1} << 16;

}  // namespace

Descriptor LoopDescriptor(const ForStmt& loop, const BoundEnv& bounds) {
  auto start = ResolveBound(loop.start, bounds);
  auto stop = ResolveBound(loop.stop, bounds);
  auto step = ResolveBound(loop.step, bounds);
  if (!step || step->kind != BoundKind::kConst || step->value != 1) {
    return Bad(fmt::format("has step {} (only a constant 1 is allowed)", ExprText(loop.step)));
  }
  if (!start || !stop) {
    return Bad(
        fmt::format("has bounds ({}, {}) that are neither constants nor pld.system.world_size()",
                    ExprText(loop.start), ExprText(loop.stop)));
  }
  if (stop->kind == BoundKind::kWorldSize) {
    if (start->kind != BoundKind::kConst || start->value != 0) {
      return Bad(
          "runs to world_size() from a start other than 0 (its coverage is not expressible)");
    }
    return Descriptor{true, Devices::All(), {}};
  }
  if (start->kind != BoundKind::kConst)
    return Bad("starts at world_size() and stops at a constant");
  const int64_t first = start->value;
  const int64_t end = stop->value;
  if (end > first && first < 0)
    return Bad(fmt::format("starts at the negative device id {}", first));
  if (end > first && end - first > kMaxRangeDevices) {
    return Bad(fmt::format("covers {} devices: more devices than the {} the pass accepts",
                           end - first, kMaxRangeDevices));
  }
  return Descriptor{true, Devices::Range(first, end), {}};
}

Descriptor DeviceDescriptor(const ExprPtr& device, const LoopEnv& loops) {
  // Only a caller that describes dispatches (tools/dot) asks about an absent
  // device=: such a dispatch is placed at run time and has no descriptor.
  if (!device) return Bad("is absent (placed at run time, no coverage)");
  if (device->kind() == NodeKind::kConstInt) {
    int64_t v = static_cast<const ConstInt&>(*device).value;
    if (v < 0) return Bad(fmt::format("is the negative constant {}", v));
    return Descriptor{true, Devices::One(v), {}};
  }
  if (IsVarLikeKind(device->kind())) {
    const auto& var = static_cast<const Var&>(*device);
    auto it = loops.find(&var);
    if (it == loops.end()) {
      return Bad(
          fmt::format("is '{}', not the induction variable of an enclosing loop", var.name_hint));
    }
    if (!it->second.ok)
      return Bad(fmt::format("is '{}', whose loop {}", var.name_hint, it->second.why));
    return it->second;
  }
  return Bad(fmt::format("is the expression {} (only a constant or a loop variable is allowed)",
                         ExprText(device)));
}

void CheckCoverage(HostAnalysis& a, DiagnosticSink& sink) {
  for (auto& alloc : a.allocs) {
    alloc.coverage = alloc.dispatch_cov;
    alloc.covered = alloc.dispatched;
  }
  for (const Inheritance& inh : a.inheritances) {
    const AllocInfo& from = a.allocs[inh.from];
    AllocInfo& to = a.allocs[inh.to];
    if (!from.dispatched) continue;
    if (to.covered) {
      to.coverage.Absorb(from.dispatch_cov);
    } else {
      to.coverage = from.dispatch_cov;
      to.covered = true;
    }
  }
  for (const auto& alloc : a.allocs) {
    if (!alloc.covered) {
      sink.Report(
          CheckId::kAllocWithoutCoverage,
          fmt::format("alloc '{}' in '{}' gets no devices: no dispatch {}consumes its views and no "
                      "collective pairs it with a dispatched alloc{}",
                      alloc.name, a.fn->name, alloc.unplaced ? "with a device= " : "",
                      alloc.unplaced ? " (dispatches without device= cover no device)" : ""),
          alloc.span);
    } else if (alloc.coverage.Empty()) {
      sink.Report(CheckId::kAllocWithoutCoverage,
                  fmt::format("alloc '{}' in '{}' is only dispatched to an empty device set",
                              alloc.name, a.fn->name),
                  alloc.span);
    }
  }

  // Scope devices as the verifier reads them; V019 compares sets, not their text.
  absl::flat_hash_map<Devices, size_t> seen_devices;
  for (size_t si = 0; si < a.scopes.size(); ++si) {
    const ScopeInfo& scope = a.scopes[si];
    const CommDomainScopeStmt& stmt = *scope.stmt;
    const Devices devices = Devices::FromScope(stmt.devices);
    if (!Devices::IsCanonical(stmt.devices)) {
      sink.Report(CheckId::kScopeDevicesMismatch,
                  fmt::format("scope '{}' in '{}' has devices {}; a scope lists \"all\" or its "
                              "device ids in increasing order without repeats",
                              stmt.name_hint, a.fn->name, BriefDeviceList(stmt.devices)),
                  stmt.span());
    }
    for (size_t k = 0; k < scope.slot_owner.size(); ++k) {
      size_t owner = scope.slot_owner[k];
      if (owner == kNone) continue;
      const AllocInfo& alloc = a.allocs[owner];
      if (!alloc.covered || alloc.coverage.Empty()) continue;  // already reported above
      if (alloc.coverage != devices) {
        sink.Report(
            CheckId::kScopeDevicesMismatch,
            fmt::format(
                "scope '{}' in '{}' has devices {} but its slot for alloc '{}' is used on {} "
                "(re-derived from dispatches and collectives)",
                stmt.name_hint, a.fn->name, BriefDeviceList(stmt.devices), alloc.name,
                alloc.coverage.Brief()),
            stmt.span());
      }
    }
    auto [it, inserted] = seen_devices.emplace(devices, si);
    if (!inserted) {
      sink.Report(
          CheckId::kDuplicateScopeDevices,
          fmt::format(
              "scopes '{}' and '{}' in '{}' both have devices {}; allocs with equal coverage "
              "belong in one scope",
              a.scopes[it->second].stmt->name_hint, stmt.name_hint, a.fn->name, devices.Brief()),
          stmt.span());
    }
  }
}

}  // namespace cds::verify
