#include "tools/cds-replay/replay.h"

#include <algorithm>
#include <charconv>
#include <exception>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "driver/driver.h"
#include "ir/error.h"
#include "ir/op_registry.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural_equal.h"
#include "ir/structural_hash.h"
#include "ir/visitor.h"
#include "verifier/checks.h"
#include "verifier/host_analysis.h"
#include "verifier/orchestrators.h"
#include "verifier/verifier.h"

namespace cds::replay {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::vector<std::string_view> SplitLines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) {
      if (start < text.size()) lines.push_back(text.substr(start));
      break;
    }
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::optional<int64_t> ParseInt(std::string_view s) {
  s = Trim(s);
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// "all", or a canonical subset: the spelling DeviceSet::ToString produces, so a
// header and a printed scope compare as strings.
bool CanonicalDevices(std::string_view d, std::string* why) {
  if (d == "all") return true;
  if (d.size() < 2 || d.front() != '[' || d.back() != ']') {
    *why = fmt::format("devices '{}' is neither 'all' nor a [a, b] list", d);
    return false;
  }
  std::vector<int64_t> ids;
  std::string_view body = d.substr(1, d.size() - 2);
  if (!body.empty()) {
    size_t pos = 0;
    while (true) {
      size_t comma = body.find(',', pos);
      auto id =
          ParseInt(body.substr(pos, comma == std::string_view::npos ? body.npos : comma - pos));
      if (!id || *id < 0) {
        *why = fmt::format("devices '{}' holds a non-integer or negative entry", d);
        return false;
      }
      ids.push_back(*id);
      if (comma == std::string_view::npos) break;
      pos = comma + 1;
    }
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::string canon = ir::DeviceSet{false, ids}.ToString();
  if (canon != d) {
    *why = fmt::format("devices '{}' is not canonical (sorted, no repeats, \", \"-separated: {})",
                       d, canon);
    return false;
  }
  return true;
}

template <typename T>
const T* As(const ir::NodePtr& n, ir::NodeKind kind) {
  return n && n->kind() == kind ? static_cast<const T*>(n.get()) : nullptr;
}

std::string LogicalAllocName(const ir::Call& call, const ir::Var& lhs) {
  if (const ir::AttrValue* v = ir::FindKwarg(call.kwargs, "name")) {
    if (const auto* s = std::get_if<std::string>(v)) return *s;
  }
  return lhs.name_hint;
}

// Allocs (LHS -> logical name) and comm-domain scopes (pre-order, so outer first)
// of one function.
class ScopeCollector final : public ir::IRVisitor {
 public:
  std::unordered_map<const ir::Var*, std::string> alloc_names;
  std::vector<const ir::CommDomainScopeStmt*> scopes;

  void VisitAssignStmt(const ir::NodeRef<const ir::AssignStmt>& n) override {
    const auto* call = As<ir::Call>(n->value, ir::NodeKind::kCall);
    if (call && n->var && call->OpName() == ir::ops::kAllocWindowBuffer) {
      alloc_names.emplace(n->var.get(), LogicalAllocName(*call, *n->var));
    }
    VisitChildren(*n);
  }
  void VisitCommDomainScopeStmt(const ir::NodeRef<const ir::CommDomainScopeStmt>& n) override {
    scopes.push_back(n.get());
    VisitChildren(*n);
  }
};

void CheckRoundTrip(const ir::ProgramPtr& program, std::string_view which,
                    std::vector<Finding>& findings) {
  const std::string sig = fmt::format("round-trip-{}", which);
  std::string printed;
  try {
    printed = ir::PrintProgram(program);
  } catch (const std::exception& e) {
    findings.push_back({sig + " print-error", e.what()});
    return;
  }
  ir::ProgramPtr reparsed;
  try {
    ir::ParseOptions options;
    options.filename = fmt::format("<printed {}>", which);
    reparsed = ir::ParseProgram(printed, options);
  } catch (const ValueError& e) {
    findings.push_back({sig + " parse-error", e.Format()});
    return;
  }
  ir::EqualityResult eq = ir::StructuralEqualWhere(program, reparsed);
  if (!eq.equal) {
    findings.push_back({sig + " mismatch", eq.path + ": " + eq.reason});
  } else if (ir::StructuralHash(program) != ir::StructuralHash(reparsed)) {
    findings.push_back({sig + " hash-mismatch", "parse(print(P)) equals P but hashes differently"});
  }
}

void AddVerifierFindings(const std::vector<verify::Diagnostic>& diags, std::vector<Finding>& out) {
  for (const auto& d : diags) out.push_back({d.code + " " + d.name, verify::FormatDiagnostic(d)});
}

std::string DescribeScopeDifference(const std::vector<ScopeLine>& expected,
                                    const std::vector<ScopeLine>& actual) {
  const size_t n = std::min(expected.size(), actual.size());
  for (size_t i = 0; i < n; ++i) {
    if (!(expected[i] == actual[i])) {
      return fmt::format("scope {} differs: expected '{}', got '{}'", i,
                         FormatScopeLine(expected[i]), FormatScopeLine(actual[i]));
    }
  }
  if (expected.size() > n) {
    return fmt::format("expected {} scope(s), got {}: missing '{}'", expected.size(), actual.size(),
                       FormatScopeLine(expected[n]));
  }
  return fmt::format("expected {} scope(s), got {}: unexpected '{}'", expected.size(),
                     actual.size(), FormatScopeLine(actual[n]));
}

std::string ExpectedErrorText(const Header& h) {
  return fmt::format("an error at line {} containing '{}'", h.error_line, h.error_substring);
}

bool MatchesExpectedError(const Header& h, const ValueError& e) {
  return h.kind == ExpectKind::kError && e.span().line == h.error_line &&
         e.message().find(h.error_substring) != std::string::npos;
}

// The collective calls of a host body with the argument roles that must be views
// (DESIGN §4 sanity errors) and, for all_to_all_v, whether it sits in a loop.
class CollectiveScan final : public ir::IRVisitor {
 public:
  struct Use {
    const ir::Call* call;
    bool in_loop;
  };
  std::vector<Use> calls;

  void VisitForStmt(const ir::NodeRef<const ir::ForStmt>& n) override {
    ++loops_;
    VisitChildren(*n);
    --loops_;
  }
  void VisitWhileStmt(const ir::NodeRef<const ir::WhileStmt>& n) override {
    ++loops_;
    VisitChildren(*n);
    --loops_;
  }
  void VisitCall(const ir::NodeRef<const ir::Call>& n) override {
    const std::string& op = n->OpName();
    if (op == ir::ops::kAllReduce || op == ir::ops::kBroadcast || op == ir::ops::kReduceScatter ||
        op == ir::ops::kBarrier || op == ir::ops::kAllGather || op == ir::ops::kAllToAll ||
        op == ir::ops::kAllToAllV) {
      calls.push_back({n.get(), loops_ > 0});
    }
    VisitChildren(*n);
  }

 private:
  int loops_ = 0;
};

// Positional indices that must resolve to a window view, per collective.
std::vector<size_t> ViewArgs(const std::string& op, size_t arity) {
  std::vector<size_t> idx;
  if (op == ir::ops::kBarrier) {
    idx = {0};
  } else if (op == ir::ops::kAllGather || op == ir::ops::kAllToAll) {
    idx = {1, 2};  // target, signal
  } else if (op == ir::ops::kAllToAllV) {
    idx = {1, 2, 4};  // target, signal, recv_counts
  } else {
    idx = {0, 1};  // data, signal
  }
  std::erase_if(idx, [&](size_t i) { return i >= arity; });
  return idx;
}

// Why the correct pass would reject this host orchestrator, or "" when it would
// not; fills `scopes` with the clustering of the re-derived coverage.
std::string DeriveForHost(const ir::Program& program, const ir::Function& fn,
                          std::vector<ScopeLine>& scopes) {
  verify::DiagnosticSink sink;
  verify::HostAnalysis a = verify::AnalyzeHostOrchestrator(program, fn, sink);
  if (a.allocs.empty()) return "";  // no allocs: unchanged, no scopes
  verify::CheckCoverage(a, sink);
  for (const auto& d : sink.Take()) {
    if (d.code == "CDS-V021" || d.code == "CDS-V029") return d.message;
  }
  CollectiveScan scan;
  scan.VisitNode(fn.body);
  for (const auto& use : scan.calls) {
    const std::string& op = use.call->OpName();
    if (op == ir::ops::kAllToAllV && use.in_loop) return fmt::format("{} inside a loop", op);
    for (size_t i : ViewArgs(op, use.call->args.size())) {
      if (a.ViewAlloc(use.call->args[i]) == verify::kNone) {
        return fmt::format("argument {} of {} is not a window view", i, op);
      }
    }
    if (op == ir::ops::kBarrier) {
      const auto& sig = a.allocs[a.ViewAlloc(use.call->args[0])];
      if (!sig.dispatched || sig.dispatch_cov.Empty()) {
        return fmt::format("barrier signal '{}' has no dispatch coverage of its own", sig.name);
      }
    }
  }
  for (const auto& inh : a.inheritances) {
    if (inh.from == verify::kNone || inh.to == verify::kNone) continue;
    const auto& from = a.allocs[inh.from];
    if (!from.dispatched || from.dispatch_cov.Empty()) {
      return fmt::format("collective data/target '{}' has no dispatch coverage to pass on",
                         from.name);
    }
  }
  std::vector<std::pair<verify::Devices, size_t>> domains;  // devices -> index into scopes
  for (const auto& alloc : a.allocs) {
    if (alloc.views.empty()) return fmt::format("alloc '{}' has no view (dead)", alloc.name);
    if (!alloc.covered || alloc.coverage.Empty()) {
      return fmt::format("alloc '{}' gets no devices", alloc.name);
    }
    auto it = std::find_if(domains.begin(), domains.end(),
                           [&](const auto& d) { return d.first == alloc.coverage; });
    if (it == domains.end()) {
      domains.emplace_back(alloc.coverage, scopes.size());
      scopes.push_back(
          {fn.name, fmt::format("comm_d{}", domains.size() - 1), alloc.coverage.ToString(), {}});
      it = domains.end() - 1;
    }
    auto& slots = scopes[it->second].slots;
    if (std::find(slots.begin(), slots.end(), alloc.name) != slots.end()) {
      return fmt::format("duplicate alloc name '{}' in one domain", alloc.name);
    }
    slots.push_back(alloc.name);
  }
  return "";
}

}  // namespace

std::string FormatScopeLine(const ScopeLine& s) {
  std::string slots;
  for (size_t i = 0; i < s.slots.size(); ++i) slots += (i ? "," : "") + s.slots[i];
  return fmt::format("{} {} devices={} slots={}", s.function, s.name, s.devices, slots);
}

std::optional<ScopeLine> ParseScopeLine(std::string_view text, std::string* why) {
  text = Trim(text);
  ScopeLine out;
  size_t sp1 = text.find(' ');
  size_t sp2 = sp1 == text.npos ? text.npos : text.find(' ', sp1 + 1);
  if (sp2 == text.npos) {
    *why = "expected '<function> <scope> devices=<d> slots=<s>'";
    return std::nullopt;
  }
  out.function = std::string(text.substr(0, sp1));
  out.name = std::string(text.substr(sp1 + 1, sp2 - sp1 - 1));
  std::string_view rest = text.substr(sp2 + 1);
  size_t slots_at = rest.find(" slots=");
  if (!StartsWith(rest, "devices=") || slots_at == rest.npos) {
    *why = "expected 'devices=<d> slots=<s>' after the scope name";
    return std::nullopt;
  }
  std::string_view devices = rest.substr(8, slots_at - 8);
  if (!CanonicalDevices(devices, why)) return std::nullopt;
  out.devices = std::string(devices);
  std::string_view slots = rest.substr(slots_at + 7);
  if (slots.find(' ') != slots.npos) {
    *why = "slots= must be comma-separated without spaces";
    return std::nullopt;
  }
  size_t pos = 0;
  while (pos <= slots.size() && !slots.empty()) {
    size_t comma = slots.find(',', pos);
    std::string_view item = slots.substr(pos, comma == slots.npos ? slots.npos : comma - pos);
    if (item.empty()) {
      *why = "empty slot name in slots=";
      return std::nullopt;
    }
    out.slots.emplace_back(item);
    if (comma == slots.npos) break;
    pos = comma + 1;
  }
  return out;
}

Header ParseHeader(std::string_view text) {
  Header h;
  const auto lines = SplitLines(text);
  int expect_lines = 0;
  size_t i = 0;
  for (; i < lines.size(); ++i) {
    std::string_view line = Trim(lines[i]);
    if (line.empty()) continue;
    if (line.front() != '#') break;
    std::string_view body = Trim(line.substr(1));
    if (StartsWith(body, "SOURCE:")) {
      h.source = std::string(Trim(body.substr(7)));
    } else if (StartsWith(body, "EXPECT-SCOPE:")) {
      std::string why;
      if (auto s = ParseScopeLine(body.substr(13), &why)) {
        h.scopes.push_back(std::move(*s));
      } else {
        h.problems.push_back(fmt::format("line {}: malformed EXPECT-SCOPE: {}", i + 1, why));
      }
    } else if (StartsWith(body, "EXPECT:")) {
      ++expect_lines;
      std::string_view v = Trim(body.substr(7));
      if (v == "ok") {
        h.kind = ExpectKind::kOk;
      } else if (StartsWith(v, "TODO")) {
        h.kind = ExpectKind::kTodo;
        h.todo_note = std::string(Trim(v.substr(4)));
      } else if (StartsWith(v, "error ") || v == "error") {
        h.kind = ExpectKind::kError;
        std::string_view rest = Trim(v.substr(5));
        size_t sp = rest.find(' ');
        auto line_no = ParseInt(rest.substr(0, sp));
        std::string_view sub = sp == rest.npos ? std::string_view() : Trim(rest.substr(sp + 1));
        if (!line_no || *line_no <= 0 || sub.empty()) {
          h.problems.push_back(
              fmt::format("line {}: EXPECT: error needs '<line> <substring>'", i + 1));
        } else {
          h.error_line = static_cast<int>(*line_no);
          h.error_substring = std::string(sub);
        }
      } else {
        h.problems.push_back(fmt::format(
            "line {}: unknown EXPECT value (expected 'ok', 'error <line> <substring>' or 'TODO')",
            i + 1));
      }
    } else if (StartsWith(body, "EXPECT")) {
      h.problems.push_back(fmt::format(
          "line {}: unknown header key (expected EXPECT:, EXPECT-SCOPE: or SOURCE:)", i + 1));
    }
  }
  // An expectation below the code would be silently ignored by a reader that
  // stops at the first statement; reject it instead.
  for (; i < lines.size(); ++i) {
    std::string_view line = Trim(lines[i]);
    if (!line.empty() && line.front() == '#' && StartsWith(Trim(line.substr(1)), "EXPECT")) {
      h.problems.push_back(fmt::format("line {}: EXPECT line after the code", i + 1));
    }
  }
  if (expect_lines == 0) h.problems.push_back("missing '# EXPECT:' header line");
  if (expect_lines > 1) h.problems.push_back("more than one '# EXPECT:' line");
  if (h.source.empty()) h.problems.push_back("missing '# SOURCE:' header line");
  if (h.kind != ExpectKind::kOk && !h.scopes.empty()) {
    h.problems.push_back("EXPECT-SCOPE lines need '# EXPECT: ok'");
  }
  if (h.kind == ExpectKind::kError && h.error_line > static_cast<int>(lines.size())) {
    h.problems.push_back(fmt::format("EXPECT: error line {} is past the end of the file ({} lines)",
                                     h.error_line, lines.size()));
  }
  return h;
}

std::vector<ScopeLine> CollectScopes(const ir::Program& program) {
  std::vector<ScopeLine> out;
  for (const auto& fn : program.functions) {
    if (!fn || !fn->body) continue;
    ScopeCollector c;
    c.VisitNode(fn->body);
    for (const auto* scope : c.scopes) {
      ScopeLine line{fn->name, scope->name_hint, scope->devices.ToString(), {}};
      for (const auto& wb : scope->slots) {
        auto it = wb && wb->base ? c.alloc_names.find(wb->base.get()) : c.alloc_names.end();
        line.slots.push_back(it != c.alloc_names.end()
                                 ? it->second
                                 : fmt::format("<no alloc: {}>", wb ? wb->name_hint : "null"));
      }
      out.push_back(std::move(line));
    }
  }
  return out;
}

DerivedExpectation DeriveExpectation(const ir::ProgramPtr& input) {
  DerivedExpectation out;
  ir::ProgramPtr synthesized;
  try {
    driver::PipelineOptions options;
    options.pipeline = std::string(pass::kSynthesizeAllReduceSignalsPass);
    options.verify_each = true;
    synthesized = driver::RunPipeline(input, options);
  } catch (const driver::VerificationError& e) {
    out.why = fmt::format("the verifier rejects SynthesizeAllReduceSignals' output: {}",
                          verify::FormatDiagnostics(e.diagnostics()));
    return out;
  } catch (const ValueError& e) {
    out.why = "SynthesizeAllReduceSignals rejects the program: " + e.Format();
    return out;
  }
  for (const auto& fn : synthesized->functions) {
    if (!verify::IsHostOrchestrator(*fn)) continue;
    std::string why = DeriveForHost(*synthesized, *fn, out.scopes);
    if (!why.empty()) {
      out.why = fmt::format("in '{}': {} (the correct pass rejects the program)", fn->name, why);
      out.scopes.clear();
      return out;
    }
  }
  out.ok = true;
  return out;
}

Outcome ReplayText(std::string_view text, const std::string& filename,
                   const ReplayOptions& options) {
  Outcome out;
  const Header header = ParseHeader(text);
  std::vector<std::string> expectation_reasons;

  ir::ProgramPtr input;
  ir::ProgramPtr output;
  try {
    ir::ParseOptions po;
    po.filename = filename;
    input = ir::ParseProgram(text, po);
  } catch (const ValueError& e) {
    out.diagnostics.push_back(e.Format());
    if (header.kind == ExpectKind::kOk) {
      expectation_reasons.push_back("parse error: " + e.Format());
    } else if (header.kind == ExpectKind::kError && !MatchesExpectedError(header, e)) {
      expectation_reasons.push_back(
          fmt::format("expected {}, got parse error: {}", ExpectedErrorText(header), e.Format()));
    }
  }

  if (input) {
    CheckRoundTrip(input, "input", out.findings);
    try {
      driver::PipelineOptions po;
      po.pipeline = options.pipeline;
      po.verify_each = true;
      output = driver::RunPipeline(input, po);
    } catch (const driver::VerificationError& e) {
      AddVerifierFindings(e.diagnostics(), out.findings);
    } catch (const ValueError& e) {
      out.diagnostics.push_back(e.Format());
      if (header.kind == ExpectKind::kOk) {
        expectation_reasons.push_back("pipeline rejected the program: " + e.Format());
      } else if (header.kind == ExpectKind::kError && !MatchesExpectedError(header, e)) {
        expectation_reasons.push_back(
            fmt::format("expected {}, got: {}", ExpectedErrorText(header), e.Format()));
      }
    } catch (const std::exception& e) {
      out.findings.push_back({"exception pipeline", e.what()});
    }
  }

  // VerifyAll judges a materialized program; a pipeline without the pass (a
  // parse-only replay) gets the round trips only.
  const bool materializes =
      options.pipeline.find(pass::kMaterializeCommDomainScopesPass) != std::string::npos;
  if (output && materializes) {
    try {
      AddVerifierFindings(verify::VerifyAll(input, output), out.findings);
    } catch (const std::exception& e) {
      out.findings.push_back({"exception verifier", e.what()});
    }
  }
  if (output) {
    CheckRoundTrip(output, "output", out.findings);
    if (header.kind == ExpectKind::kError) {
      expectation_reasons.push_back(fmt::format(
          "expected {}, but the pipeline accepted the program", ExpectedErrorText(header)));
    } else if (header.kind == ExpectKind::kOk) {
      std::vector<ScopeLine> actual = CollectScopes(*output);
      if (actual != header.scopes) {
        expectation_reasons.push_back(DescribeScopeDifference(header.scopes, actual));
      }
    }
  }

  for (const auto& f : out.findings)
    out.reasons.push_back(fmt::format("{}: {}", f.signature, f.detail));
  for (const auto& p : header.problems) out.reasons.push_back("malformed header: " + p);
  if (header.kind == ExpectKind::kTodo) {
    out.reasons.push_back(
        "expectation is TODO: a human must derive the EXPECT lines from DESIGN §4");
  }
  if (header.problems.empty()) {
    for (auto& r : expectation_reasons) out.reasons.push_back(std::move(r));
  }
  out.pass = out.reasons.empty();
  return out;
}

}  // namespace cds::replay
