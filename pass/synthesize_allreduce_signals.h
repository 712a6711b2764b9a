#pragma once

// SynthesizeAllReduceSignals (docs/pass.md): gives every host-level
// pld.tensor.allreduce a signal window, so that MaterializeCommDomainScopes and
// the collective lowering always see two positional arguments.

#include <cstdint>

#include "ir/function.h"

namespace cds::pass {

struct SynthesizeOptions {
  // core_num used when a call carries no core_num= kwarg.
  int64_t default_core_num = 1;
};

// Runs on host orchestrators only; other functions come back as the same pointer,
// and so does the program when nothing changes. Throws cds::ValueError at the
// call's span for: arity other than 1 or 2, an allreduce nested inside another
// expression, a signal-less allreduce inside a for/while loop, core_num <= 0.
ir::ProgramPtr SynthesizeAllReduceSignals(const ir::ProgramPtr& program,
                                          const SynthesizeOptions& options = {});

}  // namespace cds::pass
