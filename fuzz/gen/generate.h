#pragma once

// One-call entry points: a generated program with its IR, its text and what the
// pipeline should make of it. Property tests and fuzz targets are meant to be
// one-liners over these.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "fuzz/gen/expect.h"
#include "fuzz/gen/model.h"
#include "fuzz/gen/render.h"

namespace cds::fuzz {

struct GeneratedProgram {
  ProgramModel model;
  ir::ProgramPtr ir;   // RenderIR(model)
  std::string text;    // RenderText(model); empty for a valid one when !GenOptions::render_text
  Expectation expect;  // ComputeExpectation(model); meaningful for valid programs
  std::optional<InvalidSpec> invalid;  // set for programs with a planted defect

  bool valid() const { return !invalid.has_value(); }
};

// Renders and computes everything for a finished valid model (its text and
// stmt_lines only with render_text).
GeneratedProgram Finish(ProgramModel model, bool render_text = true);
// The same for a model with a planted defect, whose text GenerateInvalid rendered.
GeneratedProgram Finish(InvalidModel invalid);

// A valid program (or, with `invalid`, one with that planted defect) from any source.
GeneratedProgram GenerateFromChoices(Choices& choices, const GenOptions& options = {},
                                     std::optional<InvalidKind> invalid = std::nullopt);
GeneratedProgram Generate(uint64_t seed, const GenOptions& options = {},
                          std::optional<InvalidKind> invalid = std::nullopt);
// Replays draws (see ReplayChoices): what the RapidCheck generator uses.
GeneratedProgram GenerateFromDraws(const std::vector<uint64_t>& draws,
                                   const GenOptions& options = {},
                                   std::optional<InvalidKind> invalid = std::nullopt);
// A libFuzzer input. With allow_invalid the first draw may pick an invalid kind
// (about a third of inputs); exhausted or empty input gives a small valid program.
GeneratedProgram GenerateFromBytes(const uint8_t* data, size_t size, const GenOptions& options = {},
                                   bool allow_invalid = false);

// For RapidCheck counterexamples and test failure messages.
void showValue(const GeneratedProgram& p, std::ostream& os);
std::string Describe(const GeneratedProgram& p);

}  // namespace cds::fuzz
