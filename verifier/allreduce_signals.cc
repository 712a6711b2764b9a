// After SynthesizeAllReduceSignals every host allreduce has two arguments and the
// second is a window view (a synthesized one or the user's own).

#include <fmt/format.h>

#include "verifier/checks.h"
#include "verifier/type_util.h"

namespace cds::verify {

using namespace cds::ir;

void CheckAllReduceSignals(const HostAnalysis& a, DiagnosticSink& sink) {
  for (const Call* c : a.allreduces) {
    std::string data = c->args.empty() ? std::string("<none>") : ExprText(c->args[0]);
    if (c->args.size() != 2) {
      sink.Report(
          CheckId::kAllReduceMissingSignal,
          fmt::format(
              "pld.tensor.allreduce of '{}' in '{}' has {} argument(s); after signal synthesis "
              "every host allreduce has two (data, signal)",
              data, a.fn->name, c->args.size()),
          c->span());
      continue;
    }
    if (a.ViewAlloc(c->args[1]) == kNone) {
      sink.Report(
          CheckId::kAllReduceSignalNotWindow,
          fmt::format(
              "the signal {} of pld.tensor.allreduce of '{}' in '{}' is not a window view of an "
              "alloc",
              ExprText(c->args[1]), data, a.fn->name),
          c->span());
    }
  }
}

}  // namespace cds::verify
