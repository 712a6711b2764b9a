#pragma once

// Correct MaterializeCommDomainScopes outputs built by hand with the IR builder,
// following docs/ir-conventions.md to the letter, each beside the pipeline input it
// comes from. They are written from the rules, not from any pass run.

#include <string>
#include <vector>

#include "ir/ir.h"

namespace cds::verify::testing {

struct Fixture {
  std::string name;
  ir::ProgramPtr before;  // pipeline input: no scopes, no back-references, no synthesized signals
  ir::ProgramPtr after;   // the correct materialized output
};

std::vector<Fixture> AllFixtures();

// Builds one host orchestrator body in either form from one recipe, so the input
// and the output of a fixture cannot drift apart.
class HostBuilder {
 public:
  HostBuilder(bool materialized, std::string file);

  ir::VarPtr Alloc(const std::string& name, ir::ExprPtr size_bytes);
  ir::VarPtr AllocShape(const std::string& name, std::vector<int64_t> shape, ir::DataType dt);
  ir::VarPtr Window(const std::string& name, const ir::VarPtr& alloc,
                    std::vector<ir::ExprPtr> shape, ir::DataType dt);
  // `name = value` with the Var typed as the value (aliases, collective results, scalars).
  ir::VarPtr Let(const std::string& name, ir::ExprPtr value);
  void Dispatch(const std::string& callee, std::vector<ir::ExprPtr> args, ir::ExprPtr device,
                ir::TypePtr result_type);
  void Eval(ir::ExprPtr e);
  void Return(std::vector<ir::ExprPtr> values);
  ir::VarPtr BeginFor(const std::string& var, ir::ExprPtr start, ir::ExprPtr stop,
                      ir::ExprPtr step = nullptr, ir::ForKind kind = ir::ForKind::kRange);
  void EndFor();
  void BeginIf(ir::ExprPtr cond);
  void EndIf();

  // The statements SynthesizeAllReduceSignals inserts (output form only); returns the
  // signal view, null in input form.
  ir::VarPtr SynthesizedSignal(int k, int64_t core_num = 1);
  ir::CallPtr AllReduce(const ir::VarPtr& data, const ir::VarPtr& signal);
  // `return pld.tensor.allreduce(data)` in input form; in output form the signal
  // triple numbered K, `__allreduce_result_<K+1> = allreduce(data, sig)` (the result
  // takes the number after its signal's, docs/pass.md "Numbering") and `return` of it.
  void ReturnAllReduce(int k, const ir::VarPtr& data);

  ir::Span NextSpan();
  bool materialized() const { return materialized_; }
  // The allocs SynthesizedSignal created, in order.
  const std::vector<ir::VarPtr>& synthesized_allocs() const { return synthesized_allocs_; }
  ir::WindowBufferPtr WindowBufferOf(const ir::VarPtr& alloc) const;

  struct ScopeSpec {
    std::string name;
    ir::DeviceSet devices;
    std::vector<ir::VarPtr> allocs;
  };
  // The function body: in output form wrapped in the given scopes (outer first).
  ir::StmtPtr Body(const std::vector<ScopeSpec>& scopes);

 private:
  struct Frame {
    enum Kind { kTop, kFor, kIf } kind = kTop;
    ir::VarPtr loop_var;
    ir::ExprPtr start, stop, step, cond;
    ir::ForKind for_kind = ir::ForKind::kRange;
    ir::Span span;
    std::vector<ir::StmtPtr> stmts;
  };
  void Emit(ir::StmtPtr s) { frames_.back().stmts.push_back(std::move(s)); }

  bool materialized_;
  ir::FileId file_;
  int line_ = 1;
  std::vector<Frame> frames_;
  std::vector<std::pair<const ir::Var*, ir::WindowBufferPtr>> wbs_;
  std::vector<ir::VarPtr> synthesized_allocs_;
};

// Small helpers shared with the tests.
ir::FunctionPtr ChipOrch(const std::string& name, std::vector<std::vector<int64_t>> param_shapes);
ir::FunctionPtr HostFunction(const std::string& name, ir::StmtPtr body,
                             std::vector<ir::TypePtr> ret = {});
ir::TypePtr ChipReturnType(const ir::FunctionPtr& chip);

}  // namespace cds::verify::testing
