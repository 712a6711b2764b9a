#pragma once

#include <string>
#include <string_view>

#include "ir/error.h"

namespace cds::ir {

// "FILE:LINE:COL: error: MESSAGE" followed by the offending source line and a
// caret under the column. `source` is the whole text the span's line refers to
// (for split-input-file chunks, the whole file).
std::string FormatDiagnostic(const ValueError& error, std::string_view source);
std::string FormatDiagnostic(std::string_view severity, const Span& span, std::string_view message,
                             std::string_view source);

}  // namespace cds::ir
