// Text-format throughput: parse and print of generated host programs of about
// 1, 10 and 100 MB (bytes processed -> MB/s). The goal is parse >= 100 MB/s in
// a release build.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "ir/parser.h"
#include "ir/printer.h"

namespace {

// A program of many host orchestrators in the user form plus materialized
// functions in the pl._dump form, about `bytes` long.
std::string MakeProgram(size_t bytes) {
  std::string s =
      "import pypto.language as pl\n"
      "import pypto.language.distributed as pld\n\n"
      "@pl.program\n"
      "class Big:\n"
      "    @pl.function(type=pl.FunctionType.Orchestration)\n"
      "    def chip_orch(self, data: pld.DistributedTensor[[256], pl.FP32]) -> "
      "pld.DistributedTensor[[256], "
      "pl.FP32]:\n"
      "        return data\n";
  for (int k = 0; s.size() < bytes; ++k) {
    s += fmt::format(
        "\n    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)\n"
        "    def host_{0}(self):\n"
        "        # user form\n"
        "        buf_{0} = pld.alloc_window_buffer(256 * pl.FP32.get_byte())\n"
        "        sig_{0} = pld.alloc_window_buffer(4 * pl.INT32.get_byte())\n"
        "        data = pld.window(buf_{0}, [256], dtype=pl.FP32)\n"
        "        signal = pld.window(sig_{0}, [pld.world_size(), 1], dtype=pl.INT32)\n"
        "        n: pl.Scalar[pl.INDEX] = pld.world_size()\n"
        "        for r in pl.range(n):\n"
        "            self.chip_orch(data, device=r)\n"
        "        i = 0\n"
        "        while i < 4 and not i == 3:\n"
        "            i = (i + 1) * 2 // 3 - 1 % 7\n"
        "        if i >= 2:\n"
        "            data = pld.tensor.allreduce(data, signal, op=pld.ReduceOp.Sum)\n"
        "        else:\n"
        "            pass\n"
        "        return 0\n"
        "\n    @pl.function(level=pl.Level.HOST, role=pl.Role.Orchestrator)\n"
        "    def mat_{0}(self) -> None:\n"
        "        pl._dump.window_buffer(\"b_window\", base=\"b\", size=1024, load_from_host=False, "
        "store_to_host=False)\n"
        "        with pl._dump.comm_domain(name=\"comm_d0\", devices=[0, 1], slots=[\"b_window\"], "
        "attrs={{}}):\n"
        "            b: pl.Ptr = pl._dump.alloc_window_buffer(1024, name=\"b\")\n"
        "            v: pld.DistributedTensor[[256], pl.FP32, pl._dump.window_ref(\"b_window\")] = "
        "pl._dump.call(\"pld.tensor.window\", [b, [256]], pld.DistributedTensor[[256], pl.FP32, "
        "pl._dump.window_ref(\"b_window\")], kwargs={{\"dtype\": pl.FP32}})\n"
        "            self.chip_orch(v, device=0)\n",
        k);
  }
  return s;
}

const std::string& ProgramOfMB(int mb) {
  static std::unordered_map<int, std::string> cache;
  auto it = cache.find(mb);
  if (it == cache.end()) it = cache.emplace(mb, MakeProgram(static_cast<size_t>(mb) << 20)).first;
  return it->second;
}

cds::ir::ParseOptions Options() {
  cds::ir::ParseOptions o;
  o.max_input_bytes = size_t{1} << 30;
  return o;
}

void BM_Parse(benchmark::State& state) {
  const std::string& text = ProgramOfMB(static_cast<int>(state.range(0)));
  // As BM_Print's first print and pipeline_bench's first run: a parse before the
  // clock faults in the memory the timed parses reuse, which 1 MB amortizes over
  // hundreds of parses and 100 MB, with two or three in its 3 s, does not.
  cds::ir::ParseProgram(text, Options());
  for (auto _ : state) {
    auto p = cds::ir::ParseProgram(text, Options());
    benchmark::DoNotOptimize(p);
    // Freeing the IR is not parsing: keep it out of the figure.
    state.PauseTiming();
    p.reset();
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(text.size()));
}

void BM_Print(benchmark::State& state) {
  const std::string& text = ProgramOfMB(static_cast<int>(state.range(0)));
  auto p = cds::ir::ParseProgram(text, Options());
  // The caller's guess of the output size, as a tool makes it from its input; the
  // user-form functions print longer than they are written, so this one is exact.
  const size_t expected = cds::ir::PrintProgram(p).size();
  size_t out_bytes = 0;
  for (auto _ : state) {
    std::string out = cds::ir::PrintProgram(p, expected);
    out_bytes = out.size();
    benchmark::DoNotOptimize(out);
    // As for the parse: freeing the text is not printing. A 100 MB text goes back
    // to the OS (an munmap of 28k pages), a 1 MB one to malloc's free list.
    state.PauseTiming();
    std::string().swap(out);
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(out_bytes));
}

// The whole programs of corpus/real that PyPTO and the pipeline accept (header
// `# EXPECT: ok`: kernels, opaque calls, subscripts, generic scopes): real text
// rather than the synthetic host-only program above. The folder is found from the
// source tree the build was configured from, so the figure does not depend on
// the working directory.
const std::vector<std::string>& RealCorpus() {
  static const std::vector<std::string> files = [] {
    std::vector<std::string> out;
    const auto dir = std::filesystem::path(CDS_SOURCE_DIR) / "corpus" / "real";
    std::error_code error;
    std::vector<std::filesystem::path> paths;
    for (const auto& e : std::filesystem::directory_iterator(dir, error)) {
      if (e.path().extension() == ".pyir") paths.push_back(e.path());
    }
    std::sort(paths.begin(), paths.end());
    for (const auto& path : paths) {
      std::ifstream in(path, std::ios::binary);
      std::ostringstream text;
      text << in.rdbuf();
      if (text.str().find("\n# EXPECT: ok") == std::string::npos) continue;
      out.push_back(text.str());
    }
    return out;
  }();
  return files;
}

void BM_ParseCorpusReal(benchmark::State& state) {
  const auto& files = RealCorpus();
  if (files.empty()) {
    state.SkipWithError("no program with `# EXPECT: ok` in CDS_SOURCE_DIR/corpus/real");
    return;
  }
  int64_t bytes = 0;
  for (const auto& f : files) bytes += static_cast<int64_t>(f.size());
  std::vector<cds::ir::ProgramPtr> programs;
  programs.reserve(files.size());
  for (auto _ : state) {
    for (const auto& f : files) programs.push_back(cds::ir::ParseProgram(f, Options()));
    benchmark::DoNotOptimize(programs.data());
    state.PauseTiming();
    programs.clear();
    state.ResumeTiming();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * bytes);
  state.counters["files"] = static_cast<double>(files.size());
}

BENCHMARK(BM_ParseCorpusReal)->Unit(benchmark::kMicrosecond)->UseRealTime();
// Every size is averaged over at least 3 s of parsing or printing: otherwise the
// 100 MB cases are a single sample, which a short slowdown of a shared machine
// decides. A per-benchmark minimum also overrides --benchmark_min_time, so
// bench/run.sh's short default does not bring the single sample back.
void OverTextSizes(benchmark::internal::Benchmark* b) {
  b->Arg(1)->Arg(10)->Arg(100)->MinTime(3.0)->Unit(benchmark::kMillisecond)->UseRealTime();
}
BENCHMARK(BM_Parse)->Apply(OverTextSizes);
BENCHMARK(BM_Print)->Apply(OverTextSizes);

}  // namespace
