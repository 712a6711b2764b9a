#pragma once

// IR rewriting the verifier needs for relational mode (and the verifier tests
// reuse to build broken outputs). ir::IRMutator keeps Vars as leaves; here a Var
// whose type changes is rebuilt once and every def and use maps to the new one.

#include <absl/container/flat_hash_map.h>

#include "ir/mutator.h"

namespace cds::verify {

class RetypingMutator : public ir::IRMutator {
 public:
  ir::VarPtr MutateDef(const ir::VarPtr& v) override { return Retype(v); }
  ir::NodePtr MutateVar(const ir::NodeRef<const ir::Var>& n) override { return Retype(n); }
  ir::NodePtr MutateIterArg(const ir::NodeRef<const ir::IterArg>& n) override { return Retype(n); }

  // Forces `from` to become `to` at its definition and every use.
  void MapVar(const ir::Var* from, ir::VarPtr to) { var_memo_[from] = std::move(to); }

 protected:
  ir::VarPtr Retype(const ir::VarPtr& v);

 private:
  absl::flat_hash_map<const ir::Var*, ir::VarPtr> var_memo_;
};

// Drops every window_buffer back-reference (Var types, Call types, parameters).
class WindowBufferEraser : public RetypingMutator {
 public:
  ir::NodePtr MutateDistributedTensorType(
      const ir::NodeRef<const ir::DistributedTensorType>& n) override;
};

}  // namespace cds::verify
