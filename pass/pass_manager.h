#pragma once

// Named passes, their IR properties, and a manager that runs a pipeline of them
// with instrumentation hooks (the verifier plugs in through PassInstrumentation;
// this library never depends on it).

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ir/function.h"

namespace cds::pass {

enum class IRProperty : uint8_t {
  kAllReduceSignalsSynthesized,
  kCommDomainScopesMaterialized,
};
std::string_view IRPropertyName(IRProperty p);  // "AllReduceSignalsSynthesized"

// A small set of IRProperty values.
class IRPropertySet {
 public:
  IRPropertySet() = default;
  IRPropertySet(std::initializer_list<IRProperty> props) {
    for (IRProperty p : props) Insert(p);
  }
  bool Contains(IRProperty p) const { return (bits_ >> static_cast<unsigned>(p)) & 1u; }
  void Insert(IRProperty p) { bits_ |= 1u << static_cast<unsigned>(p); }
  bool Empty() const { return bits_ == 0; }
  // Properties of `this` missing from `other`.
  IRPropertySet Minus(const IRPropertySet& other) const { return Bits(bits_ & ~other.bits_); }
  IRPropertySet Union(const IRPropertySet& other) const { return Bits(bits_ | other.bits_); }
  std::string ToString() const;  // "{A, B}"
  bool operator==(const IRPropertySet& o) const { return bits_ == o.bits_; }

 private:
  static IRPropertySet Bits(uint32_t bits) {
    IRPropertySet s;
    s.bits_ = bits;
    return s;
  }
  uint32_t bits_ = 0;
};

using PassFunction = std::function<ir::ProgramPtr(const ir::ProgramPtr&)>;

struct PassInfo {
  std::string name;  // "materialize-comm-domain-scopes"
  IRPropertySet required;
  IRPropertySet produced;
  IRPropertySet invalidated;
  PassFunction run;
};

inline constexpr std::string_view kSynthesizeAllReduceSignalsPass = "synthesize-allreduce-signals";
inline constexpr std::string_view kMaterializeCommDomainScopesPass =
    "materialize-comm-domain-scopes";
inline constexpr std::string_view kDefaultPipeline =
    "synthesize-allreduce-signals,materialize-comm-domain-scopes";

// Every known pass, in pipeline order.
const std::vector<PassInfo>& RegisteredPasses();
// Null when unknown.
const PassInfo* FindPass(std::string_view name);
// "a,b" -> the passes in order (spaces around names are ignored). Throws
// cds::ValueError naming an unknown pass (and listing the known ones) or an empty name.
std::vector<const PassInfo*> ParsePipeline(std::string_view pipeline);

// Hooks around every pass. Either hook may throw to stop the pipeline; the
// exception reaches PassManager::Run's caller unchanged.
class PassInstrumentation {
 public:
  virtual ~PassInstrumentation() = default;
  virtual void BeforePass(std::string_view pass_name, const ir::ProgramPtr& program) {}
  virtual void AfterPass(std::string_view pass_name, const ir::ProgramPtr& before,
                         const ir::ProgramPtr& after) {}
};
using PassInstrumentationPtr = std::shared_ptr<PassInstrumentation>;

class PassManager {
 public:
  PassManager() = default;
  // The passes of a pipeline string (see ParsePipeline).
  static PassManager FromPipeline(std::string_view pipeline);

  // Throws cds::ValueError for an unknown name.
  void AddPass(std::string_view name);
  void AddPass(const PassInfo& pass);
  void AddInstrumentation(PassInstrumentationPtr instrumentation);

  // Runs the passes in order. Before each pass its required properties must hold
  // (cds::ValueError otherwise); afterwards the invalidated ones are dropped and the
  // produced ones added. `initial` is what the input is known to satisfy.
  ir::ProgramPtr Run(const ir::ProgramPtr& program, IRPropertySet initial = {});

  const std::vector<PassInfo>& passes() const { return passes_; }
  const std::vector<PassInstrumentationPtr>& instrumentations() const { return instrumentations_; }
  // The properties after the last Run.
  const IRPropertySet& properties() const { return properties_; }

 private:
  std::vector<PassInfo> passes_;
  std::vector<PassInstrumentationPtr> instrumentations_;
  IRPropertySet properties_;
};

}  // namespace cds::pass
