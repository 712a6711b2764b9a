#pragma once

// The program generators the properties use: fuzz::rcgen's, with draws bounded
// to [0, 1024). ReplayChoices maps a draw by `lo + v % span`, and nearly every
// span the model asks for is far below 1024, so the programs are the same
// family; but RapidCheck shrinks each element of a 64-bit draw through ~64
// candidates and a 10-bit one through ~10, which took a failing ScopesMatchModel
// case (injected bug 3) from >10 minutes of shrinking to seconds.

#include <vector>

#include <rapidcheck.h>

#include "fuzz/gen/generate.h"

namespace cds::prop {

inline rc::Gen<std::vector<uint64_t>> BoundedDraws() {
  return rc::gen::scale(
      6.0, rc::gen::container<std::vector<uint64_t>>(rc::gen::inRange<uint64_t>(0, 1024)));
}

inline rc::Gen<fuzz::GeneratedProgram> ValidProgram(fuzz::GenOptions options = {}) {
  return rc::gen::map(BoundedDraws(), [options](const std::vector<uint64_t>& draws) {
    return fuzz::GenerateFromDraws(draws, options);
  });
}

inline rc::Gen<fuzz::GeneratedProgram> InvalidProgram(fuzz::InvalidKind kind,
                                                      fuzz::GenOptions options = {}) {
  return rc::gen::map(BoundedDraws(), [options, kind](const std::vector<uint64_t>& draws) {
    return fuzz::GenerateFromDraws(draws, options, kind);
  });
}

}  // namespace cds::prop
