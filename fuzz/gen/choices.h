#pragma once

// The decision source behind the program generator. One generator function is
// driven by a seeded PRNG (cds-gen, benchmarks), a libFuzzer byte stream, or a
// vector of draws that RapidCheck shrinks. Every decision goes through Int(), so a
// run is fully described by the sequence of its draws (RecordingChoices keeps it,
// ReplayChoices plays it back).

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <random>
#include <span>
#include <vector>

class FuzzedDataProvider;

namespace cds::fuzz {

class Choices {
 public:
  virtual ~Choices() = default;
  // A value in [lo, hi] (inclusive; lo <= hi). An exhausted source returns lo, so
  // "lo" must always be the choice that makes the program smaller or simpler.
  virtual int64_t Int(int64_t lo, int64_t hi) = 0;

  bool Bool() { return Int(0, 1) == 1; }
  // True with probability num/den (false on an exhausted source).
  bool Chance(int64_t num, int64_t den) { return Int(0, den - 1) >= den - num; }
  size_t Index(size_t n) { return static_cast<size_t>(Int(0, static_cast<int64_t>(n) - 1)); }
  // An index drawn with the given integer weights (zero weights never win). The
  // first positive weight wins on an exhausted source.
  size_t Weighted(std::span<const int> weights);
  // An element of any indexable container (a std::vector, an array, an InlinedVector).
  template <typename C>
  const auto& Pick(const C& v) {
    return v[Index(v.size())];
  }
};

// std::mt19937_64 is specified bit-for-bit by the standard; the reduction to a
// range is ours (rejection sampling), so a seed gives the same draws everywhere.
class PrngChoices final : public Choices {
 public:
  explicit PrngChoices(uint64_t seed) : engine_(seed) {}
  int64_t Int(int64_t lo, int64_t hi) override;

 private:
  std::mt19937_64 engine_;
};

// Draws from a libFuzzer input; exhausted input yields lo for every draw.
class BytesChoices final : public Choices {
 public:
  BytesChoices(const uint8_t* data, size_t size);
  ~BytesChoices() override;
  int64_t Int(int64_t lo, int64_t hi) override;

 private:
  std::unique_ptr<FuzzedDataProvider> provider_;
};

// Plays back a vector of draws: draw i maps v[i] into [lo, hi] as lo + v[i] mod
// (hi - lo + 1); past the end every draw is lo. Shrinking the vector toward
// fewer, smaller elements therefore shrinks the program.
class ReplayChoices final : public Choices {
 public:
  explicit ReplayChoices(std::vector<uint64_t> draws) : draws_(std::move(draws)) {}
  int64_t Int(int64_t lo, int64_t hi) override;
  size_t consumed() const { return pos_; }

 private:
  std::vector<uint64_t> draws_;
  size_t pos_ = 0;
};

// Forwards to another source and records each draw as (value - lo), which is
// exactly what ReplayChoices needs to reproduce the run.
class RecordingChoices final : public Choices {
 public:
  explicit RecordingChoices(Choices& inner) : inner_(inner) {}
  int64_t Int(int64_t lo, int64_t hi) override;
  const std::vector<uint64_t>& draws() const { return draws_; }

 private:
  Choices& inner_;
  std::vector<uint64_t> draws_;
};

}  // namespace cds::fuzz
