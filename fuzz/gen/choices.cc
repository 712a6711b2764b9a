#include "fuzz/gen/choices.h"

#include <fuzzer/FuzzedDataProvider.h>

#include "ir/error.h"

namespace cds::fuzz {

size_t Choices::Weighted(std::span<const int> weights) {
  int64_t total = 0;
  for (int w : weights) total += w > 0 ? w : 0;
  CDS_CHECK(total > 0, "Weighted() needs a positive weight");
  int64_t r = Int(0, total - 1);
  for (size_t i = 0; i < weights.size(); ++i) {
    if (weights[i] <= 0) continue;
    if (r < weights[i]) return i;
    r -= weights[i];
  }
  return weights.size() - 1;
}

int64_t PrngChoices::Int(int64_t lo, int64_t hi) {
  CDS_CHECK(lo <= hi, "Int(lo, hi) with lo > hi");
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  if (span == UINT64_MAX) return static_cast<int64_t>(engine_());
  const uint64_t range = span + 1;
  // Reject the top partial bucket so every value is equally likely.
  const uint64_t limit = UINT64_MAX - (UINT64_MAX % range);
  uint64_t r;
  do {
    r = engine_();
  } while (r >= limit);
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + r % range);
}

BytesChoices::BytesChoices(const uint8_t* data, size_t size)
    : provider_(std::make_unique<FuzzedDataProvider>(data, size)) {}
BytesChoices::~BytesChoices() = default;

int64_t BytesChoices::Int(int64_t lo, int64_t hi) {
  CDS_CHECK(lo <= hi, "Int(lo, hi) with lo > hi");
  return provider_->ConsumeIntegralInRange<int64_t>(lo, hi);
}

int64_t ReplayChoices::Int(int64_t lo, int64_t hi) {
  CDS_CHECK(lo <= hi, "Int(lo, hi) with lo > hi");
  if (pos_ >= draws_.size()) return lo;
  const uint64_t v = draws_[pos_++];
  const uint64_t span = static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo);
  if (span == UINT64_MAX) return static_cast<int64_t>(v);
  return static_cast<int64_t>(static_cast<uint64_t>(lo) + v % (span + 1));
}

int64_t RecordingChoices::Int(int64_t lo, int64_t hi) {
  const int64_t v = inner_.Int(lo, hi);
  draws_.push_back(static_cast<uint64_t>(v) - static_cast<uint64_t>(lo));
  return v;
}

}  // namespace cds::fuzz
