// The probe of independence.symbols_probe, compiled but never linked: a
// verifier-side size check that builds the expected WindowBuffer size with the
// IR builder, as the pass builds it, shares the pass's construction of the
// result it is meant to judge. check_symbols.sh must reject it.

#include "ir/builder.h"
#include "ir/dtype.h"

namespace cds::verify::probe {

ir::ExprPtr ExpectedSizeLikeThePass(const ir::ExprPtr& elements, ir::DataType dtype) {
  return ir::Mul(elements, ir::Int(ir::DataTypeBytes(dtype)));
}

}  // namespace cds::verify::probe
