#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/stmt.h"

namespace cds::ir {

enum class FunctionType : uint8_t {
  kOpaque,
  kOrchestration,
  kInCore,
  kAIC,
  kAIV,
  kGroup,
  kSpmd,
  kInline,
  kGraph
};
enum class Level : uint8_t {
  kAIV,
  kAIC,
  kCoreGroup,
  kChipDie,
  kChip,
  kHost,
  kCluster0,
  kCluster1,
  kCluster2,
  kGlobal
};
enum class Role : uint8_t { kOrchestrator, kSubWorker };
enum class ParamDirection : uint8_t { kIn, kOut, kInOut };

std::string_view FunctionTypeName(FunctionType t);  // "Orchestration" (as after pl.FunctionType.)
std::string_view LevelName(Level l);                // "HOST", "CORE_GROUP", "CLUSTER_0"
std::string_view RoleName(Role r);                  // "Orchestrator"
std::optional<FunctionType> FunctionTypeFromName(std::string_view s);
std::optional<Level> LevelFromName(std::string_view s);
std::optional<Role> RoleFromName(std::string_view s);

class Function final : public Node {
 public:
  Function(std::string n, NodeList<VarPtr> p, NodeList<ParamDirection> d, NodeList<TypePtr> r,
           StmtPtr b, FunctionType t, std::optional<Level> l = std::nullopt,
           std::optional<Role> ro = std::nullopt)
      : Node(NodeKind::kFunction),
        name(std::move(n)),
        params(std::move(p)),
        param_directions(std::move(d)),
        return_types(std::move(r)),
        body(std::move(b)),
        func_type(t),
        level(l),
        role(ro) {}
  std::string name;
  NodeList<VarPtr> params;
  NodeList<ParamDirection> param_directions;  // one per param
  NodeList<TypePtr> return_types;
  StmtPtr body;
  FunctionType func_type;
  std::optional<Level> level;  // as written; the level a missing one stands for is a pass rule
  std::optional<Role> role;
  // The body of a host SubWorker (`level=` HOST or above, `role=pl.Role.SubWorker`):
  // plain Python that PyPTO keeps as source text and never parses as DSL, nor does
  // the harness. Its lines as written, without the body's indentation; `body` is
  // then empty. Absent for every other function.
  std::optional<std::string> python_body;
  static constexpr auto Fields() {
    return std::make_tuple(
        UsualField("name", &Function::name), UsualField("func_type", &Function::func_type),
        UsualField("level", &Function::level), UsualField("role", &Function::role),
        DefField("params", &Function::params),
        UsualField("param_directions", &Function::param_directions),
        UsualField("return_types", &Function::return_types), UsualField("body", &Function::body),
        UsualField("python_body", &Function::python_body));
  }
};
using FunctionPtr = NodeRef<const Function>;

// Functions are kept sorted by name, as PyPTO's Program keeps them: passes visit
// them in that order.
class Program final : public Node {
 public:
  Program(std::string n, std::vector<VarPtr> dyn, std::vector<FunctionPtr> fns);
  std::string name;
  std::vector<VarPtr> dynamic_dims;  // module-level `NR = pl.dynamic("NR")`
  std::vector<FunctionPtr> functions;
  static constexpr auto Fields() {
    return std::make_tuple(UsualField("name", &Program::name),
                           DefField("dynamic_dims", &Program::dynamic_dims),
                           UsualField("functions", &Program::functions));
  }
  FunctionPtr FindFunction(std::string_view fname) const;
};
using ProgramPtr = NodeRef<const Program>;

}  // namespace cds::ir
