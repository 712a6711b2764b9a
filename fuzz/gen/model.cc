#include "fuzz/gen/model.h"

#include <array>

#include "ir/op_registry.h"

namespace cds::fuzz {

using ir::DataType;

// ---------------------------------------------------------------------------
// Names

namespace {
struct FeatureEntry {
  Feature f;
  std::string_view name;
};
constexpr FeatureEntry kFeatureNames[] = {
#define CDS_GEN_FEATURE_NAME(N, S) {Feature::k##N, S},
    CDS_GEN_FEATURES(CDS_GEN_FEATURE_NAME)
#undef CDS_GEN_FEATURE_NAME
};
struct InvalidEntry {
  InvalidKind k;
  std::string_view name;
};
constexpr InvalidEntry kInvalidNames[] = {
#define CDS_GEN_INVALID_NAME(N, S) {InvalidKind::k##N, S},
    CDS_GEN_INVALID_KINDS(CDS_GEN_INVALID_NAME)
#undef CDS_GEN_INVALID_NAME
};
}  // namespace

std::string_view FeatureName(Feature f) { return kFeatureNames[static_cast<size_t>(f)].name; }
std::optional<Feature> FeatureFromName(std::string_view name) {
  for (const auto& e : kFeatureNames) {
    if (e.name == name) return e.f;
  }
  return std::nullopt;
}
FeatureSet AllFeatures() { return FeatureSet().set(); }

std::string_view InvalidKindName(InvalidKind k) {
  return kInvalidNames[static_cast<size_t>(k)].name;
}
std::optional<InvalidKind> InvalidKindFromName(std::string_view name) {
  for (const auto& e : kInvalidNames) {
    if (e.name == name) return e.k;
  }
  return std::nullopt;
}

std::string_view StageName(Stage s) {
  switch (s) {
    case Stage::kParse:
      return "parse";
    case Stage::kSynthesize:
      return "synthesize";
    case Stage::kMaterialize:
      return "materialize";
  }
  return "?";
}

std::string_view CollOpName(CollKind k) {
  switch (k) {
    case CollKind::kAllReduce:
      return ir::ops::kAllReduce;
    case CollKind::kBroadcast:
      return ir::ops::kBroadcast;
    case CollKind::kReduceScatter:
      return ir::ops::kReduceScatter;
    case CollKind::kBarrier:
      return ir::ops::kBarrier;
    case CollKind::kAllGather:
      return ir::ops::kAllGather;
    case CollKind::kAllToAll:
      return ir::ops::kAllToAll;
    case CollKind::kAllToAllV:
      return ir::ops::kAllToAllV;
  }
  return "?";
}

// ---------------------------------------------------------------------------
// ProgramModel queries

bool IsCollectiveKernel(const FunctionModel& f) {
  return f.role == FuncRole::kInCore && !f.body.empty();
}

std::vector<int> ProgramModel::HostFunctions() const {
  std::vector<int> out;
  for (size_t i = 0; i < functions.size(); ++i) {
    if (functions[i].role == FuncRole::kHostOrch) out.push_back(static_cast<int>(i));
  }
  return out;
}

int ProgramModel::FindFunction(std::string_view fname) const {
  for (size_t i = 0; i < functions.size(); ++i) {
    if (functions[i].name == fname) return static_cast<int>(i);
  }
  return -1;
}

namespace {
const StmtModel* FindIn(const std::vector<StmtModel>& body, int id) {
  for (const StmtModel& s : body) {
    if (s.id == id) return &s;
    if (const StmtModel* r = FindIn(s.body, id)) return r;
    if (const StmtModel* r = FindIn(s.orelse, id)) return r;
  }
  return nullptr;
}
}  // namespace

const StmtModel* ProgramModel::FindStmt(int id) const {
  for (const FunctionModel& f : functions) {
    if (const StmtModel* s = FindIn(f.body, id)) return s;
  }
  return nullptr;
}
}  // namespace cds::fuzz
