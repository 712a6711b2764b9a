#pragma once

// Two independent renderings of one ProgramModel: the IR, built with the builder
// as docs/ir-conventions.md fixes it, and user-form DSL text written as a PyPTO
// user writes it. Neither goes through the printer or the parser, so
// ParseProgram(RenderText(m)) vs RenderIR(m) cross-checks the parser.

#include <string>

#include "fuzz/gen/model.h"
#include "ir/function.h"

namespace cds::fuzz {

ir::ProgramPtr RenderIR(const ProgramModel& m);
std::string RenderText(const ProgramModel& m);

// Fills m.stmt_lines with each statement's 1-based line in RenderText(m), and
// returns that text (it has to be rendered to count the lines).
std::string AssignLines(ProgramModel& m);

}  // namespace cds::fuzz
