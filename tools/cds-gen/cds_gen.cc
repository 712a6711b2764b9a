// cds-gen: writes generated host-orchestration programs (user-form text), their
// expected comm-domain scopes, and feature statistics of the generator.

#include <cstdio>
#include <iostream>
#include <sstream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "fuzz/gen/generate.h"
#include "fuzz/gen/rule_reach.h"
#include "ir/error.h"
#include "tools/common/cli.h"
#include "tools/common/file_io.h"

namespace {

using cds::fuzz::Feature;
using cds::fuzz::FeatureSet;
using cds::fuzz::GeneratedProgram;
using cds::fuzz::GenOptions;
using cds::fuzz::InvalidKind;
namespace tools = cds::tools;

// A generated program that breaks the generator's own promises (it does not
// type-check, or a valid one has expectation problems).
constexpr int kExitGeneratorBug = 3;

std::vector<std::string> Split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

int PrintStats(uint64_t seed, int count, const GenOptions& options,
               std::optional<InvalidKind> invalid) {
  std::vector<int> used(cds::fuzz::kNumFeatures, 0), enabled(cds::fuzz::kNumFeatures, 0);
  size_t stmts = 0, problems = 0;
  for (int i = 0; i < count; ++i) {
    GeneratedProgram p = cds::fuzz::Generate(seed + static_cast<uint64_t>(i), options, invalid);
    const FeatureSet u = p.model.UsedFeatures();
    for (size_t f = 0; f < cds::fuzz::kNumFeatures; ++f) {
      used[f] += u.test(f);
      enabled[f] += p.model.enabled.test(f);
    }
    stmts += static_cast<size_t>(p.model.num_stmts);
    if (!p.invalid && !p.expect.problems.empty()) ++problems;
  }
  fmt::print("{} programs (seeds {}..{}), {:.1f} statements on average\n", count, seed,
             seed + static_cast<uint64_t>(count) - 1,
             static_cast<double>(stmts) / std::max(count, 1));
  fmt::print("{:<24} {:>8} {:>8} {:>8}\n", "feature", "present", "%", "enabled%");
  for (size_t f = 0; f < cds::fuzz::kNumFeatures; ++f) {
    const double pct = 100.0 * used[f] / std::max(count, 1);
    fmt::print("{:<24} {:>8} {:>7.1f}% {:>7.1f}%{}\n",
               cds::fuzz::FeatureName(static_cast<Feature>(f)), used[f], pct,
               100.0 * enabled[f] / std::max(count, 1), pct < 5.0 ? "  (< 5%)" : "");
  }
  if (problems > 0) {
    fmt::print(stderr,
               "cds-gen: error: {} valid programs have expectation problems (generator bug)\n",
               problems);
    return kExitGeneratorBug;
  }
  return 0;
}

// The rules and errors of docs/pass.md against the share of programs that exercise
// them, over gen_sweep's mix: seeds divisible by 3 plant a defect, the invalid kinds
// in turn; the others are valid. A markdown table (docs/generators.md quotes it).
int PrintRules(uint64_t seed, int count, GenOptions options) {
  options.fixed_size = false;
  std::vector<int> rules(cds::fuzz::kNumRules, 0), kinds(cds::fuzz::kNumInvalidKinds, 0);
  for (int i = 0; i < count; ++i) {
    const uint64_t s = seed + static_cast<uint64_t>(i);
    std::optional<InvalidKind> kind;
    if (s % 3 == 0) kind = static_cast<InvalidKind>((s / 3) % cds::fuzz::kNumInvalidKinds);
    const GeneratedProgram p = cds::fuzz::Generate(s, options, kind);
    if (kind) {
      ++kinds[static_cast<size_t>(*kind)];
      continue;
    }
    const cds::fuzz::RuleSet reached = cds::fuzz::RulesReached(p);
    for (size_t r = 0; r < cds::fuzz::kNumRules; ++r) rules[r] += reached.test(r);
  }
  const double n = std::max(count, 1);
  fmt::print("{} programs (seeds {}..{}, gen_sweep's mix)\n\n", count, seed,
             seed + static_cast<uint64_t>(count) - 1);
  fmt::print("| rule or error (docs/pass.md) | programs | share |\n|---|---:|---:|\n");
  int low = 0;
  for (size_t r = 0; r < cds::fuzz::kNumRules; ++r) {
    const double pct = 100.0 * rules[r] / n;
    low += pct < 1.0;
    fmt::print("| {} | {} | {:.1f}% |\n", cds::fuzz::RuleText(static_cast<cds::fuzz::Rule>(r)),
               rules[r], pct);
  }
  for (size_t k = 0; k < cds::fuzz::kNumInvalidKinds; ++k) {
    const double pct = 100.0 * kinds[k] / n;
    low += pct < 1.0;
    fmt::print("| error: {} (invalid kind) | {} | {:.1f}% |\n",
               cds::fuzz::InvalidKindName(static_cast<InvalidKind>(k)), kinds[k], pct);
  }
  if (low > 0) fmt::print("\n{} rows under 1%\n", low);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Generate host-orchestration programs for MaterializeCommDomainScopes "
      "(docs/generators.md).",
      "cds-gen"};
  tools::SetUpCommandLine(app,
                          "3 generator bug: a generated program breaks the generator's promises.");
  uint64_t seed = 1;
  int size = 24;
  std::string invalid_name, features, output = "-", expect_path;
  bool stats = false, rules = false, swarm_off = false, list = false;
  int count = 1000;
  app.add_option("--seed", seed, "PRNG seed (the same seed gives the same program everywhere)");
  app.add_option("--size", size, "Host statements over all host orchestrators")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--invalid", invalid_name, "Plant one defect of this kind (see --list)");
  app.add_option("--features", features,
                 "Comma-separated features to draw from (default: all; see --list)");
  app.add_flag("--no-swarm", swarm_off, "Enable every allowed feature instead of a random subset");
  app.add_option("-o,--output", output, "Program text file ('-' for stdout)");
  auto* expect_opt =
      app.add_option("--expect", expect_path,
                     "Also write the expected scopes as JSON (to FILE, or to stderr with no FILE)")
          ->expected(0, 1);
  app.add_flag("--stats", stats,
               "Print a feature histogram over --count programs instead of a program");
  app.add_flag("--rules", rules,
               "Print the share of --count programs (gen_sweep's mix) exercising each rule and "
               "error of docs/pass.md instead of a program");
  app.add_option("--count", count, "Programs for --stats and --rules")
      ->check(CLI::Range(1, 100000000));
  app.add_flag("--list", list, "List feature and invalid-kind names");
  if (auto rc = tools::ParseCommandLine(app, argc, argv)) return *rc;

  if (list) {
    fmt::print("features:");
    for (size_t f = 0; f < cds::fuzz::kNumFeatures; ++f) {
      fmt::print(" {}", cds::fuzz::FeatureName(static_cast<Feature>(f)));
    }
    fmt::print("\ninvalid kinds:");
    for (size_t k = 0; k < cds::fuzz::kNumInvalidKinds; ++k) {
      fmt::print(" {}", cds::fuzz::InvalidKindName(static_cast<InvalidKind>(k)));
    }
    fmt::print("\n");
    return 0;
  }

  GenOptions options;
  options.size = size;
  options.fixed_size = true;
  options.swarm = !swarm_off;
  if (!features.empty()) {
    options.features.reset();
    for (const std::string& name : Split(features)) {
      auto f = cds::fuzz::FeatureFromName(name);
      if (!f) {
        tools::PrintError(app, fmt::format("unknown feature '{}' (see --list)", name));
        return tools::kExitUsage;
      }
      options.features.set(static_cast<size_t>(*f));
    }
  }
  std::optional<InvalidKind> invalid;
  if (!invalid_name.empty()) {
    invalid = cds::fuzz::InvalidKindFromName(invalid_name);
    if (!invalid) {
      tools::PrintError(app, fmt::format("unknown invalid kind '{}' (see --list)", invalid_name));
      return tools::kExitUsage;
    }
  }

  try {
    if (stats) return PrintStats(seed, count, options, invalid);
    if (rules) return PrintRules(seed, count, options);
    GeneratedProgram p = cds::fuzz::Generate(seed, options, invalid);
    std::string error;
    if (!tools::WriteOutputFile(output, p.text, &error)) {
      tools::PrintError(app, error);
      return tools::kExitInputProblem;
    }
    if (expect_opt->count() > 0) {
      nlohmann::json j = p.invalid ? nlohmann::json{{"invalid", cds::fuzz::ToJson(*p.invalid)}}
                                   : cds::fuzz::ToJson(p.expect);
      j["seed"] = seed;
      j["size"] = size;
      // The features the program holds (not the ones it was allowed), so that a
      // campaign can say how many programs with each one it compared.
      nlohmann::json used = nlohmann::json::array();
      const cds::fuzz::FeatureSet set = p.model.UsedFeatures();
      for (size_t f = 0; f < cds::fuzz::kNumFeatures; ++f) {
        if (set[f]) used.push_back(cds::fuzz::FeatureName(static_cast<cds::fuzz::Feature>(f)));
      }
      j["features"] = std::move(used);
      const std::string text = j.dump(2) + "\n";
      if (expect_path.empty()) {
        std::cerr << text;
      } else if (!tools::WriteOutputFile(expect_path, text, &error)) {
        tools::PrintError(app, error);
        return tools::kExitInputProblem;
      }
    }
  } catch (const cds::ValueError& e) {
    // Building the IR type-checks every op call; a failure is a generator bug.
    tools::PrintError(
        app, fmt::format("generated program does not type-check (generator bug): {}", e.what()));
    return kExitGeneratorBug;
  }
  return 0;
}
