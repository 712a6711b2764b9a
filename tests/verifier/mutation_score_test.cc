// Mutation score of the verifier: every output mutator is run on
// every program of a test set made of real pipeline outputs (generated programs and
// the `# EXPECT: ok` corpus files) plus the hand-built fixtures. The verifier must
// stay silent on each clean output and report the mutator's own code on each mutant.
//
// CDS_PROP_SCALE multiplies the number of generated programs (default 1).

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "driver/driver.h"
#include "fuzz/gen/generate.h"
#include "ir/parser.h"
#include "tests/verifier/fixtures.h"
#include "tests/verifier/mutators.h"
#include "verifier/verifier.h"

namespace cds::verify::testing {
namespace {

namespace fs = std::filesystem;
using ir::ProgramPtr;

// Generated programs per scale unit. Together with the targeted ones below this
// keeps the dev (Debug) build well under a minute.
constexpr int kBaseGenerated = 200;
// Programs drawn with every feature on (no swarm): they are the ones with several
// scopes, ALL next to subsets, collectives of every kind, so the mutators that
// need such shapes have enough material.
constexpr int kBaseDense = 24;
constexpr int kMinApplicable = 10;

int Scale() {
  const char* env = std::getenv("CDS_PROP_SCALE");
  const int v = env != nullptr ? std::atoi(env) : 1;
  return v > 0 ? v : 1;
}

enum Source { kGenerated, kCorpus, kFixture };

struct Case {
  std::string name;
  ProgramPtr input;
  ProgramPtr output;
  // Mutants of generated programs skip the round trip: it is most of the cost, no
  // mutator targets it, and the corpus and fixture mutants still show that it does
  // not mask the intended code.
  bool mutant_round_trip = true;
  Source source = kGenerated;
};

using Clock = std::chrono::steady_clock;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

struct TestSet {
  std::vector<Case> cases;
  std::vector<std::string> pipeline_failures;  // inputs the pipeline rejected
  int generated = 0, corpus = 0, fixtures = 0;
};

bool ExpectsOk(const std::string& text) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("#", 0) != 0) break;  // headers end at the first code line
    if (line.rfind("# EXPECT: ok", 0) == 0) return true;
  }
  return false;
}

void AddPipelineCase(TestSet& set, std::string name, const ProgramPtr& input, Source source) {
  driver::PipelineOptions options;
  options.verify_each = true;
  try {
    ProgramPtr output = driver::RunPipeline(input, options);
    set.cases.push_back({std::move(name), input, output, source != kGenerated, source});
  } catch (const driver::VerificationError& e) {
    set.pipeline_failures.push_back(fmt::format("{}: verify-each after {}:\n{}", name,
                                                e.pass_name(), FormatDiagnostics(e.diagnostics())));
  } catch (const std::exception& e) {
    set.pipeline_failures.push_back(fmt::format("{}: {}", name, e.what()));
  }
}

TestSet BuildTestSet() {
  TestSet set;
  const int scale = Scale();
  // Sizes cycle so that small programs (one scope, few views) and large ones
  // (several hosts, nested loops) are both represented.
  static constexpr int kSizes[] = {6, 12, 24, 40, 64};
  for (int i = 0; i < kBaseGenerated * scale; ++i) {
    fuzz::GenOptions o;
    o.size = kSizes[i % std::size(kSizes)];
    o.fixed_size = true;
    const uint64_t seed = 0x5eed0000u + static_cast<uint64_t>(i);
    AddPipelineCase(set, fmt::format("gen seed={} size={}", seed, o.size),
                    fuzz::Generate(seed, o).ir, kGenerated);
    ++set.generated;
  }
  for (int i = 0; i < kBaseDense * scale; ++i) {
    fuzz::GenOptions o;
    o.size = 16 + 8 * (i % 4);
    o.fixed_size = true;
    o.swarm = false;
    const uint64_t seed = 0xde115e00u + static_cast<uint64_t>(i);
    AddPipelineCase(set, fmt::format("gen dense seed={} size={}", seed, o.size),
                    fuzz::Generate(seed, o).ir, kGenerated);
    ++set.generated;
  }
  const fs::path root = fs::path(CDS_SOURCE_DIR) / "corpus";
  for (const char* dir : {"regressions", "real"}) {
    std::vector<fs::path> files;
    for (const auto& e : fs::directory_iterator(root / dir)) {
      if (e.path().extension() == ".pyir") files.push_back(e.path());
    }
    std::sort(files.begin(), files.end());
    for (const auto& f : files) {
      std::ifstream in(f);
      std::stringstream buf;
      buf << in.rdbuf();
      const std::string text = buf.str();
      if (!ExpectsOk(text)) continue;
      const std::string rel = fs::relative(f, root.parent_path()).string();
      ir::ParseOptions po;
      po.filename = rel;
      ProgramPtr input;
      try {
        input = ir::ParseProgram(text, po);
      } catch (const std::exception& e) {
        set.pipeline_failures.push_back(fmt::format("{}: parse: {}", rel, e.what()));
        continue;
      }
      AddPipelineCase(set, rel, input, kCorpus);
      ++set.corpus;
    }
  }
  for (const auto& f : AllFixtures()) {
    set.cases.push_back({"fixture " + f.name, f.before, f.after, true, kFixture});
    ++set.fixtures;
  }
  return set;
}

struct Score {
  int applicable = 0;
  int caught = 0;
  int by_source[3] = {0, 0, 0};      // applicable, per Source
  std::set<std::string> collateral;  // other codes some mutant also drew
};

std::string Table(const std::map<std::string, Score>& scores) {
  std::string s =
      "| mutator | code | applicable (generated / corpus / fixtures) | caught | also seen |\n"
      "|---|---|---|---|---|\n";
  for (const auto& m : AllMutators()) {
    const Score& sc = scores.at(m.name);
    std::string also;
    for (const auto& code : sc.collateral) also += (also.empty() ? "" : ", ") + code;
    s += fmt::format("| {} | {} | {} ({} / {} / {}) | {} | {} |\n", m.name, m.code, sc.applicable,
                     sc.by_source[kGenerated], sc.by_source[kCorpus], sc.by_source[kFixture],
                     sc.caught, also.empty() ? "-" : also);
  }
  return s;
}

TEST(VerifierMutationScore, EveryMutantCaughtAndCleanOutputsSilent) {
  const auto start = Clock::now();
  const TestSet set = BuildTestSet();
  const double build_secs = Since(start);
  double clean_secs = 0, mutant_secs = 0;
  for (const auto& f : set.pipeline_failures) ADD_FAILURE() << "pipeline: " << f;
  EXPECT_GE(set.generated, kBaseGenerated);
  EXPECT_GT(set.corpus, 0);

  std::map<std::string, Score> scores;
  for (const auto& m : AllMutators()) scores[m.name];
  int clean_failures = 0;
  for (const Case& c : set.cases) {
    // Round trip on (the default): the clean output must print and parse back too.
    auto t = Clock::now();
    const auto clean = VerifyAll(c.input, c.output);
    clean_secs += Since(t);
    if (!clean.empty()) {
      ++clean_failures;
      ADD_FAILURE() << c.name << ": diagnostics on the clean output:\n" << FormatDiagnostics(clean);
      continue;  // a mutant of a rejected output proves nothing
    }
    for (const auto& m : AllMutators()) {
      const auto mutant = m.apply(c.output);
      if (!mutant) continue;
      Score& sc = scores[m.name];
      ++sc.applicable;
      ++sc.by_source[c.source];
      t = Clock::now();
      VerifyOptions options;
      options.round_trip = c.mutant_round_trip;
      const auto diags = VerifyAll(c.input, *mutant, options);
      mutant_secs += Since(t);
      for (const auto& d : diags) {
        if (d.code != m.code) sc.collateral.insert(d.code);
      }
      if (HasCode(diags, m.code)) {
        ++sc.caught;
      } else {
        ADD_FAILURE() << c.name << " / " << m.name << ": expected " << m.code << ", got:\n"
                      << FormatDiagnostics(diags);
      }
    }
  }

  std::cout << fmt::format(
                   "test set: {} outputs ({} generated, {} corpus, {} fixtures), {} clean "
                   "failures; {:.1f} s (pipeline {:.1f}, clean verify {:.1f}, mutants {:.1f})\n",
                   set.cases.size(), set.generated, set.corpus, set.fixtures, clean_failures,
                   Since(start), build_secs, clean_secs, mutant_secs)
            << Table(scores);
  for (const auto& m : AllMutators()) {
    const Score& sc = scores[m.name];
    EXPECT_GE(sc.applicable, kMinApplicable) << m.name << " applies to too few programs";
    EXPECT_EQ(sc.caught, sc.applicable) << m.name << " (" << m.code << ") missed";
  }
}

}  // namespace
}  // namespace cds::verify::testing
