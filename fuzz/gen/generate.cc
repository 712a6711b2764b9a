#include "fuzz/gen/generate.h"

#include <fmt/format.h>

namespace cds::fuzz {

GeneratedProgram Finish(ProgramModel model, bool render_text) {
  GeneratedProgram p;
  p.model = std::move(model);
  p.ir = RenderIR(p.model);
  if (render_text) p.text = AssignLines(p.model);
  p.expect = ComputeExpectation(p.model);
  return p;
}

GeneratedProgram Finish(InvalidModel invalid) {
  GeneratedProgram p = Finish(std::move(invalid.model), /*render_text=*/false);
  p.text = std::move(invalid.text);
  p.invalid = std::move(invalid.spec);
  return p;
}

GeneratedProgram GenerateFromChoices(Choices& choices, const GenOptions& options,
                                     std::optional<InvalidKind> invalid) {
  if (invalid) {
    return Finish(GenerateInvalid(choices, *invalid, options));
  }
  return Finish(GenerateModel(choices, options), options.render_text);
}

GeneratedProgram Generate(uint64_t seed, const GenOptions& options,
                          std::optional<InvalidKind> invalid) {
  PrngChoices choices(seed);
  return GenerateFromChoices(choices, options, invalid);
}

GeneratedProgram GenerateFromDraws(const std::vector<uint64_t>& draws, const GenOptions& options,
                                   std::optional<InvalidKind> invalid) {
  ReplayChoices choices(draws);
  return GenerateFromChoices(choices, options, invalid);
}

GeneratedProgram GenerateFromBytes(const uint8_t* data, size_t size, const GenOptions& options,
                                   bool allow_invalid) {
  BytesChoices choices(data, size);
  std::optional<InvalidKind> invalid;
  if (allow_invalid) {
    const int64_t k = choices.Int(0, static_cast<int64_t>(kNumInvalidKinds) * 3 - 1);
    if (k >= static_cast<int64_t>(kNumInvalidKinds) * 2) {
      invalid = static_cast<InvalidKind>(k - static_cast<int64_t>(kNumInvalidKinds) * 2);
    }
  }
  return GenerateFromChoices(choices, options, invalid);
}

std::string Describe(const GeneratedProgram& p) {
  std::string s = p.text;
  if (p.invalid) {
    s += fmt::format("# invalid: {}\n", ToJson(*p.invalid).dump());
  } else {
    s += fmt::format("# expect: {}\n", ToJson(p.expect).dump());
  }
  return s;
}

void showValue(const GeneratedProgram& p, std::ostream& os) { os << "\n" << Describe(p); }

}  // namespace cds::fuzz
