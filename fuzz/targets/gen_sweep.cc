// gen_sweep: the property-style detector of the bug hunt. It walks seeds
// through cds::fuzz::Generate (every third seed with a planted defect, kinds in
// turn) and runs each program through the same oracle as fuzz_pipeline, until a
// time budget or a seed count runs out. A finding aborts after naming the seed.
//
//   gen_sweep [--seconds N] [--count N] [--start SEED] [--size S]
//   gen_sweep --emit-seeds DIR [--count N] [--start SEED]
//
// --emit-seeds writes fuzz_pipeline inputs instead: the byte string that makes
// GenerateFromBytes draw exactly what PrngChoices(seed) draws, so the seed corpus
// starts from the same spread of features as the seeded generator.

#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include <unistd.h>

#include "fuzz/gen/generate.h"
#include "fuzz/targets/pipeline_check.h"

namespace {

volatile uint64_t g_seed = 0;
volatile int g_kind = -1;

void OnAbort(int) {
  char buf[128];
  int n = std::snprintf(buf, sizeof buf, "gen_sweep: finding at seed %llu (invalid kind %d)\n",
                        static_cast<unsigned long long>(g_seed), g_kind);
  if (n > 0) (void)!write(2, buf, static_cast<size_t>(n));
}

// Records each draw with its range so that it can be re-encoded as the bytes
// FuzzedDataProvider::ConsumeIntegralInRange reads back into the same value: it
// takes ceil(bits(range) / 8) bytes from the end of the input, most significant
// first.
class ByteRecorder final : public cds::fuzz::Choices {
 public:
  explicit ByteRecorder(cds::fuzz::Choices& inner) : inner_(inner) {}
  int64_t Int(int64_t lo, int64_t hi) override {
    const int64_t v = inner_.Int(lo, hi);
    Record(static_cast<uint64_t>(v) - static_cast<uint64_t>(lo),
           static_cast<uint64_t>(hi) - static_cast<uint64_t>(lo));
    return v;
  }
  void Record(uint64_t value, uint64_t range) {
    int n = 0;
    while (n < 8 && (range >> (8 * n)) > 0) ++n;
    for (int i = n - 1; i >= 0; --i) stream_.push_back(static_cast<uint8_t>(value >> (8 * i)));
  }
  std::vector<uint8_t> Bytes() const { return {stream_.rbegin(), stream_.rend()}; }

 private:
  cds::fuzz::Choices& inner_;
  std::vector<uint8_t> stream_;
};

int EmitSeeds(const std::filesystem::path& dir, uint64_t start, uint64_t count, int size) {
  using cds::fuzz::kNumInvalidKinds;
  std::filesystem::create_directories(dir);
  cds::fuzz::GenOptions options;
  options.size = size;
  uint64_t written = 0;
  for (uint64_t seed = start; seed < start + count; ++seed) {
    std::optional<cds::fuzz::InvalidKind> kind;
    if (seed % 3 == 0) kind = static_cast<cds::fuzz::InvalidKind>((seed / 3) % kNumInvalidKinds);
    cds::fuzz::PrngChoices prng(seed);
    ByteRecorder rec(prng);
    // The first draw of GenerateFromBytes(allow_invalid) picks the kind.
    const uint64_t selector = kind ? 2 * kNumInvalidKinds + static_cast<uint64_t>(*kind) : seed % 7;
    rec.Record(selector, 3 * kNumInvalidKinds - 1);
    const auto direct = cds::fuzz::GenerateFromChoices(rec, options, kind);
    const std::vector<uint8_t> bytes = rec.Bytes();
    const auto decoded = cds::fuzz::GenerateFromBytes(bytes.data(), bytes.size(), options, true);
    if (decoded.text != direct.text) {
      std::fprintf(stderr, "gen_sweep: seed %llu does not re-encode; skipped\n",
                   static_cast<unsigned long long>(seed));
      continue;
    }
    const std::string name =
        kind ? fmt::format("seed_{:05}_{}", seed, cds::fuzz::InvalidKindName(*kind))
             : fmt::format("seed_{:05}_valid", seed);
    std::ofstream(dir / name, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes.data()),
               static_cast<std::streamsize>(bytes.size()));
    ++written;
  }
  std::printf("gen_sweep: wrote %llu seeds to %s\n", static_cast<unsigned long long>(written),
              dir.c_str());
  return written == count ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds = 60;
  uint64_t count = 0, start = 1;
  int size = 24;
  std::string emit;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--seconds")
      seconds = std::atof(argv[i + 1]);
    else if (flag == "--count")
      count = std::strtoull(argv[i + 1], nullptr, 10);
    else if (flag == "--start")
      start = std::strtoull(argv[i + 1], nullptr, 10);
    else if (flag == "--size")
      size = std::atoi(argv[i + 1]);
    else if (flag == "--emit-seeds")
      emit = argv[i + 1];
    else {
      std::fprintf(
          stderr,
          "usage: %s [--seconds N] [--count N] [--start SEED] [--size S] [--emit-seeds DIR]\n",
          argv[0]);
      return 2;
    }
  }
  if (!emit.empty()) return EmitSeeds(emit, start, count ? count : 60, size);
  std::signal(SIGABRT, OnAbort);
  cds::fuzz::GenOptions options;
  options.size = size;
  const auto t0 = std::chrono::steady_clock::now();
  uint64_t done = 0;
  for (uint64_t seed = start;; ++seed) {
    if (count && done >= count) break;
    if (!count &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() > seconds) {
      break;
    }
    std::optional<cds::fuzz::InvalidKind> kind;
    if (seed % 3 == 0) {
      kind = static_cast<cds::fuzz::InvalidKind>((seed / 3) % cds::fuzz::kNumInvalidKinds);
    }
    g_seed = seed;
    g_kind = kind ? static_cast<int>(*kind) : -1;
    cds::fuzz::check::CheckGenerated("gen_sweep", cds::fuzz::Generate(seed, options, kind));
    ++done;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("gen_sweep: %llu programs in %.1f s, no finding\n",
              static_cast<unsigned long long>(done), secs);
  return 0;
}
