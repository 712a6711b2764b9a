#pragma once

// RapidCheck generators over the program model. Header-only so that cds_fuzz
// itself never links librapidcheck (a non-PIC static archive): only test
// executables that include this header do.
//
// A program is drawn as a vector of raw draws replayed through ReplayChoices.
// RapidCheck shrinks the vector toward fewer and smaller elements, and an
// exhausted or zero draw is always the simplest choice, so counterexamples shrink
// toward small programs without any custom shrinker.

#include <rapidcheck.h>

#include "fuzz/gen/generate.h"

namespace cds::fuzz::rcgen {

inline rc::Gen<std::vector<uint64_t>> Draws() {
  // Programs need a few hundred draws at rc's default sizes; scale the length up.
  return rc::gen::scale(6.0,
                        rc::gen::container<std::vector<uint64_t>>(rc::gen::arbitrary<uint64_t>()));
}

// A valid program with its expectation.
inline rc::Gen<GeneratedProgram> ValidProgram(GenOptions options = {}) {
  return rc::gen::map(Draws(), [options](const std::vector<uint64_t>& draws) {
    return GenerateFromDraws(draws, options);
  });
}

// A program with one planted defect of `kind`.
inline rc::Gen<GeneratedProgram> InvalidProgram(InvalidKind kind, GenOptions options = {}) {
  return rc::gen::map(Draws(), [options, kind](const std::vector<uint64_t>& draws) {
    return GenerateFromDraws(draws, options, kind);
  });
}

}  // namespace cds::fuzz::rcgen
