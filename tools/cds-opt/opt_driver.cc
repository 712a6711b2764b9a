#include "tools/cds-opt/opt_driver.h"

#include <ostream>

#include <fmt/format.h>

#include "driver/driver.h"
#include "ir/diagnostics.h"
#include "ir/error.h"
#include "ir/op_registry.h"
#include "ir/printer.h"
#include "ir/visitor.h"
#include "pass/pass_manager.h"
#include "tools/common/cli.h"
#include "tools/dot/emit_dot.h"
#include "verifier/verifier.h"

namespace cds::tools {

bool VerifyEachEnabled(const OptOptions& options) {
  return options.verify_each.value_or(driver::kVerifyEachByDefault);
}

ir::ProgramPtr ProcessProgram(const ir::ProgramPtr& program, const OptOptions& options) {
  if (!options.pipeline) return program;
  driver::PipelineOptions pipeline;
  pipeline.pipeline = *options.pipeline;
  pipeline.verify_each = VerifyEachEnabled(options);
  return driver::RunPipeline(program, pipeline);
}

namespace {

// The text a span's line refers to: the input, BEFORE, or nothing (a span built in
// code, or one into a text cds-opt does not hold, such as the verifier's round trip),
// so a caret is never drawn under an unrelated line.
struct Sources {
  std::string input_name;
  std::string_view input;
  std::string before_name;
  std::string_view before;

  std::string_view For(const ir::Span& span) const {
    std::string file = span.FileName();
    if (file == input_name) return input;
    if (!before_name.empty() && file == before_name) return before;
    return {};
  }
};

std::string Emit(const ir::ProgramPtr& program, EmitKind kind, std::string_view input) {
  if (kind == EmitKind::kDot) return dot::EmitDot(program);
  // The pipeline's output of a dispatch-heavy host orchestrator is about 2.5 times
  // its input (window declarations, scopes, typed views); reserving 4 times costs
  // address space, not memory.
  return ir::PrintProgram(program, 4 * input.size());
}

std::string VerifierMessage(const verify::Diagnostic& d) {
  return fmt::format("[{} {}] {}", d.code, d.name, d.message);
}

std::string_view TrimRight(std::string_view s) {
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::string DisplayName(const std::string& input) { return input == "-" ? "<stdin>" : input; }

}  // namespace

std::vector<Chunk> SplitInput(std::string_view whole, bool split) {
  if (!split) return {Chunk{whole, 0}};
  std::vector<Chunk> chunks;
  size_t chunk_begin = 0;
  int chunk_line = 0;  // lines before the current chunk
  int line = 0;
  size_t pos = 0;
  while (pos < whole.size()) {
    size_t nl = whole.find('\n', pos);
    size_t end = nl == std::string_view::npos ? whole.size() : nl;
    std::string_view text = TrimRight(whole.substr(pos, end - pos));
    size_t next = nl == std::string_view::npos ? whole.size() : nl + 1;
    ++line;
    if (text == "# -----") {
      chunks.push_back(Chunk{whole.substr(chunk_begin, pos - chunk_begin), chunk_line});
      chunk_begin = next;
      chunk_line = line;
    }
    pos = next;
  }
  chunks.push_back(Chunk{whole.substr(chunk_begin), chunk_line});
  return chunks;
}

std::vector<ExpectedDiagnostic> ParseExpectations(const Chunk& chunk, const std::string& filename) {
  std::vector<ExpectedDiagnostic> out;
  const ir::FileId file = ir::InternFileName(filename);
  int line = chunk.line_offset;
  size_t pos = 0;
  std::string_view text = chunk.text;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    size_t end = nl == std::string_view::npos ? text.size() : nl;
    std::string_view l = text.substr(pos, end - pos);
    ++line;
    size_t at = l.find("expected-error");
    size_t hash = l.find('#');
    if (at != std::string_view::npos && hash != std::string_view::npos && hash < at) {
      ExpectedDiagnostic e;
      e.comment_line = line;
      e.line = line;
      size_t p = at + std::string_view("expected-error").size();
      ir::Span span{file, line, static_cast<int32_t>(at) + 1};
      if (p < l.size() && l[p] == '@') {
        ++p;
        if (p >= l.size() || (l[p] != '+' && l[p] != '-')) {
          throw ValueError("expected '@+N' or '@-N' after expected-error", span);
        }
        bool minus = l[p] == '-';
        ++p;
        int n = 0;
        size_t digits = 0;
        while (p < l.size() && l[p] >= '0' && l[p] <= '9' && digits < 6) {
          n = n * 10 + (l[p] - '0');
          ++p;
          ++digits;
        }
        if (digits == 0) throw ValueError("expected a line offset after '@+' / '@-'", span);
        e.line = minus ? line - n : line + n;
      }
      size_t open = l.find("{{", p);
      size_t close = open == std::string_view::npos ? open : l.find("}}", open + 2);
      if (open == std::string_view::npos || close == std::string_view::npos) {
        throw ValueError("expected '{{message}}' in expected-error", span);
      }
      e.substring = std::string(l.substr(open + 2, close - open - 2));
      out.push_back(std::move(e));
    }
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return out;
}

bool VerifyDiagnostics(const std::vector<Diagnostic>& emitted,
                       std::vector<ExpectedDiagnostic>& expected, const std::string& filename,
                       std::string_view whole, std::ostream& err) {
  bool ok = true;
  Sources sources{filename, whole, "", {}};
  for (const Diagnostic& d : emitted) {
    bool found = false;
    for (auto& e : expected) {
      if (!e.matched && e.severity == d.severity && e.line == d.span.line &&
          d.message.find(e.substring) != std::string::npos) {
        e.matched = true;
        found = true;
        break;
      }
    }
    if (!found) {
      ok = false;
      err << ir::FormatDiagnostic("error", d.span,
                                  fmt::format("unexpected {}: {}", d.severity, d.message),
                                  sources.For(d.span));
    }
  }
  const ir::FileId file = ir::InternFileName(filename);
  for (const auto& e : expected) {
    if (e.matched) continue;
    ok = false;
    err << ir::FormatDiagnostic("error", ir::Span{file, e.comment_line, 1},
                                fmt::format("expected {} \"{}\" at line {} was not produced",
                                            e.severity, e.substring, e.line),
                                whole);
  }
  return ok;
}

int RunOpt(std::string_view whole, const OptOptions& options, const ProcessFn& process,
           std::string* out, std::ostream& err) {
  const std::string filename = DisplayName(options.input);
  Sources sources{filename, whole, "", {}};
  std::vector<Chunk> before_chunks;
  if (options.verify_only && options.verify_relational_before) {
    sources.before_name = options.verify_relational_path;
    sources.before = *options.verify_relational_before;
    before_chunks = SplitInput(sources.before, options.split_input_file);
  }
  bool ok = true;
  std::vector<Chunk> chunks = SplitInput(whole, options.split_input_file);
  if (!before_chunks.empty() && before_chunks.size() != chunks.size()) {
    err << fmt::format("cds-opt: error: '{}' has {} input(s) but '{}' has {}\n",
                       sources.before_name, before_chunks.size(), filename, chunks.size());
    return kExitInputProblem;
  }
  for (size_t i = 0; i < chunks.size(); ++i) {
    if (i && !options.verify_only) out->append("# -----\n");
    std::vector<Diagnostic> diags;
    // Printed only when the diagnostics themselves are not being matched.
    std::string header;
    try {
      ir::ParseOptions po = options.parse;
      po.filename = filename;
      po.line_offset = chunks[i].line_offset;
      ir::ProgramPtr program = ir::ParseProgram(chunks[i].text, po);
      if (options.verify_only) {
        verify::VerifyOptions vo;
        vo.contract = options.contract;
        std::vector<verify::Diagnostic> found;
        if (before_chunks.empty()) {
          found = verify::VerifyProgram(program, vo);
        } else {
          ir::ParseOptions bo = options.parse;
          bo.filename = sources.before_name;
          bo.line_offset = before_chunks[i].line_offset;
          found = verify::VerifyAll(ir::ParseProgram(before_chunks[i].text, bo), program, vo);
        }
        for (const auto& d : found) {
          diags.push_back(Diagnostic{d.span, std::string(verify::SeverityName(d.severity)),
                                     VerifierMessage(d)});
        }
      } else {
        program = process ? process(program, options) : ProcessProgram(program, options);
        if (out->empty()) {
          *out = Emit(program, options.emit, chunks[i].text);
        } else {
          out->append(Emit(program, options.emit, chunks[i].text));
        }
      }
    } catch (const driver::VerificationError& e) {
      header = fmt::format("{}: error: {}\n", filename, e.what());
      for (const auto& d : e.diagnostics()) {
        diags.push_back(Diagnostic{d.span, "error", VerifierMessage(d)});
      }
      // A verifier that rejects without saying why must still fail the run.
      if (diags.empty()) diags.push_back(Diagnostic{ir::Span{}, "error", e.what()});
    } catch (const ValueError& e) {
      diags.push_back(Diagnostic{e.span(), "error", e.message()});
    }
    if (options.verify_diagnostics) {
      try {
        auto expected = ParseExpectations(chunks[i], filename);
        ok &= VerifyDiagnostics(diags, expected, filename, whole, err);
      } catch (const ValueError& e) {
        err << ir::FormatDiagnostic(e, whole);
        ok = false;
      }
    } else {
      err << header;
      for (const auto& d : diags) {
        err << ir::FormatDiagnostic(d.severity, d.span, d.message, sources.For(d.span));
        // Warnings and notes inform; only errors fail the run.
        if (d.severity == "error") ok = false;
      }
    }
  }
  return ok ? kExitOk : kExitInputProblem;
}

int RunOpt(std::string_view whole, const OptOptions& options, const ProcessFn& process,
           std::ostream& out, std::ostream& err) {
  std::string text;
  int rc = RunOpt(whole, options, process, &text, err);
  out << text;
  out.flush();
  return rc;
}

}  // namespace cds::tools
