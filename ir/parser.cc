#include "ir/parser.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstring>
#include <deque>
#include <limits>
#include <optional>
#include <span>

#include <fmt/format.h>

#include "ir/builder.h"
#include "ir/diagnostics.h"
#include "ir/error.h"
#include "ir/lexer.h"
#include "ir/op_registry.h"
#include "ir/printer.h"
#include "ir/string_hash.h"
#include "ir/structural_equal.h"

namespace cds::ir {

namespace {

// A dotted name such as pld.tensor.window, without allocation.
struct Path {
  static constexpr int kMax = 8;
  std::string_view parts[kMax];
  int n = 0;
  Token first;
  template <size_t... N>
  bool Is(const char (&... want)[N]) const {
    if (n != static_cast<int>(sizeof...(N))) return false;
    int i = 0;
    return (TextIs(parts[i++], want) && ...);
  }
  std::string Join() const {
    std::string s(parts[0]);
    for (int i = 1; i < n; ++i) s.append(".").append(parts[i]);
    return s;
  }
};

// A window declared by pl._dump.window_buffer: built when its base is bound.
struct WindowDecl {
  std::string name;
  std::string base;
  std::optional<Lexer> size;  // where the size expression starts
  bool load = false;
  bool store = false;
  Span span;
  WindowBufferPtr wb;
};

struct FuncSig {
  std::string name;
  Span span;
  FunctionType type = FunctionType::kOpaque;
  std::optional<Level> level;
  std::optional<Role> role;
  // A host SubWorker: no `self`, and a body of plain Python kept as text.
  bool python = false;
  std::optional<std::string> python_body;
  std::vector<VarPtr> params;
  std::vector<ParamDirection> dirs;
  size_t param_count = 0;  // params moves into the Function when it is built
  bool has_ret_annot = false;
  // A return annotation naming windows is read after the body has declared them.
  std::unique_ptr<Lexer> deferred_ret;
  std::vector<TypePtr> ret_types;
  std::unique_ptr<Lexer> body;  // a body read ahead, where it starts
  enum State { kPending, kParsing, kDone } state = kPending;
  FunctionPtr result;
};

// The loop whose direct body is being parsed, when it carries init_values: its
// body must end with the one pl.yield_ that feeds the carried values back.
struct YieldFrame {
  std::vector<IterArgPtr> iter_args;
  std::vector<VarPtr> return_vars;
  bool yielded = false;
};

struct FuncState {
  // For the next body (one state per nesting level serves every function): vectors
  // and small tables keep their memory; absl frees a table of over 127 slots on clear().
  void Reset() {
    sig = nullptr;
    vars.clear();
    windows.clear();
    window_index.clear();
    windows_by_base.clear();
    saw_return = false;
    first_return_types.clear();
  }
  FuncSig* sig = nullptr;
  // Keys view the source text, a parameter's or a dimension's own name: all
  // outlive the function's parse.
  StringViewMap<VarPtr> vars;
  std::vector<WindowDecl> windows;
  StringMap<size_t> window_index;
  StringMap<std::vector<size_t>> windows_by_base;
  bool saw_return = false;
  std::vector<TypePtr> first_return_types;
};

// Gives *slot `value` for the guard's lifetime (parsing from a checkpoint
// without disturbing the current position, a nested function state, ...).
template <typename T>
struct Rebind {
  T* slot;
  T saved;
  Rebind(T* s, T value) : slot(s), saved(*s) { *slot = value; }
  ~Rebind() { *slot = saved; }
};

class Parser {
 public:
  Parser(std::string_view text, const ParseOptions& opts)
      : opts_(opts),
        file_(InternFileName(opts.filename)),
        main_(text, file_, opts.line_offset, LexerLimits{opts.max_nesting_depth}),
        lex_(&main_) {}

  ProgramPtr Run();

 private:
  // ---- nodes (ir/builder.h builds most of them)
  const OpInfo* AllocInfo() {
    if (!alloc_info_) alloc_info_ = OpRegistry::Get().Find(ops::kAllocWindowBuffer);
    return alloc_info_;
  }

  // ---- tokens
  const Token& Peek(int k = 0) { return lex_->Peek(k); }
  Token Next() { return lex_->Next(); }
  Span SpanOf(const Token& t) const { return lex_->SpanOf(t); }
  bool At(Tok k, int ahead = 0) { return Peek(ahead).kind == k; }
  template <size_t N>
  bool AtName(const char (&s)[N], int ahead = 0) {
    const Token& t = Peek(ahead);
    return t.kind == Tok::kName && TextIs(t.text, s);
  }
  bool Accept(Tok k) {
    if (!At(k)) return false;
    Next();
    return true;
  }
  // `item()` for each element of a comma-separated list (a trailing comma
  // allowed), then the `close` token.
  template <typename Item>
  void ParseList(Tok close, Item item) {
    while (!At(close)) {
      item();
      if (!Accept(Tok::kComma)) break;
    }
    Expect(close);
  }
  // A call's arguments after its '(', up to and including the ')':
  // `keyword(key)` for `key=...`, at the value; `positional()` for the others,
  // which may not follow a keyword argument.
  template <typename Keyword, typename Positional>
  void ParseArgs(Keyword keyword, Positional positional) {
    bool after_keyword = false;
    ParseList(Tok::kRParen, [&] {
      if (At(Tok::kName) && At(Tok::kAssign, 1)) {
        const Token key = Next();
        Next();
        keyword(key);
        after_keyword = true;
      } else {
        if (after_keyword) Fail(Peek(), "positional argument after keyword argument");
        positional();
      }
    });
  }
  [[noreturn]] void Fail(const Token& t, const std::string& msg) {
    throw ValueError(msg, SpanOf(t));
  }
  std::string Describe(const Token& t) {
    switch (t.kind) {
      case Tok::kName:
      case Tok::kInt:
      case Tok::kFloat:
        return fmt::format("'{}'", Echo(t.text));
      case Tok::kString:
        return "a string";
      default:
        return std::string(TokName(t.kind));
    }
  }
  // Expect and ExpectIdent run on most tokens: their failures are out of line so
  // that the checks inline into the callers.
  [[gnu::always_inline]] Token Expect(Tok k, std::string_view what = {}) {
    if (!At(k)) [[unlikely]]
      FailExpected(k, what);
    return Next();
  }
  [[noreturn, gnu::noinline, gnu::cold]] void FailExpected(Tok k, std::string_view what) {
    FailExpecting(what.empty() ? std::string(TokName(k)) : fmt::format("{} {}", TokName(k), what));
  }
  // "expected <what>, got <the next token>".
  [[noreturn, gnu::noinline, gnu::cold]] void FailExpecting(std::string_view what) {
    Fail(Peek(), fmt::format("expected {}, got {}", what, Describe(Peek())));
  }
  template <size_t N>
  Token ExpectName(const char (&s)[N]) {
    if (!AtName(s)) FailExpecting(fmt::format("'{}'", s));
    return Next();
  }
  [[gnu::always_inline]] Token ExpectIdent(std::string_view what) {
    const Token& t = Peek();
    if (t.kind != Tok::kName || IsKeyword(t.text)) [[unlikely]]
      FailExpecting(what);
    return Next();
  }
  void ExpectEndOfStmt() {
    if (At(Tok::kNewline)) {
      Next();
      return;
    }
    FailAtEndOfStmt();
  }
  [[noreturn, gnu::noinline, gnu::cold]] void FailAtEndOfStmt();
  // Python that the text format does not take: "<construct> is not supported".
  [[noreturn, gnu::noinline, gnu::cold]] void FailUnsupported(const Token& at,
                                                              std::string_view construct) {
    Fail(at, fmt::format("{} is not supported", construct));
  }
  // After a whole expression: Python operators and forms the format lacks.
  void RejectAfterExpr();
  [[noreturn, gnu::noinline, gnu::cold]] void FailUndefinedName(const Token& t);

  // Depth guard for every recursive production.
  struct DepthGuard {
    Parser* p;
    DepthGuard(Parser* parser, const Token& at) : p(parser) {
      if (++p->depth_ > p->opts_.max_nesting_depth) {
        p->Fail(at,
                fmt::format(
                    "expression or block nested deeper than {} levels (limit max_nesting_depth)",
                    p->opts_.max_nesting_depth));
      }
    }
    ~DepthGuard() { --p->depth_; }
  };

  // ---- program structure
  void SkipImportLine();
  void ParseDecorator(FuncSig* sig);
  // Reads a decorator (if any) and a signature and enters it in sig_by_name_;
  // `skip_body`: also skips the body, keeping its position.
  FuncSig* ParseFunctionHeader(bool skip_body);
  void ParseSignature(FuncSig* sig, bool skip_body);
  void TakePythonBody(FuncSig* sig, const Token& newline);
  void ReadSignaturesAhead();
  void ExpectEndOfClass();
  void SkipBlock();
  void EnsureParsed(FuncSig* sig);
  void ParseFunctionBody(FuncSig* sig);
  std::span<const TypePtr> ReturnTypesOf(FuncSig* sig, const Token& at);
  std::vector<TypePtr> ParseReturnAnnotation();

  // ---- statements
  SeqStmtsPtr ParseBlock(const Token& header, YieldFrame* frame = nullptr);
  void ParseStmt();  // onto stmt_scratch_
  // A string alone on its line (a docstring), which means nothing.
  bool AcceptDocstring() {
    if (!At(Tok::kString) || !At(Tok::kNewline, 1)) return false;
    Next();
    Next();
    return true;
  }
  // `pass` as a whole statement.
  bool AcceptPass() {
    if (!AtName("pass")) return false;
    Next();
    ExpectEndOfStmt();
    return true;
  }
  StmtPtr ParseSimpleStmt();
  StmtPtr ParseAssign();
  StmtPtr ParseUnpackAssign();
  bool AtYield() {
    return AtName("pl") && At(Tok::kDot, 1) && AtName("yield_", 2) && At(Tok::kLParen, 3);
  }
  StmtPtr ParseYield(const std::vector<std::pair<Token, TypePtr>>& targets);
  void ParseDynamicDim();
  bool AtInlineDynamicDim() {
    return AtName("pl") && At(Tok::kDot, 1) && AtName("dynamic", 2) && At(Tok::kLParen, 3) &&
           At(Tok::kString, 4) && At(Tok::kRParen, 5) &&
           (At(Tok::kComma, 6) || At(Tok::kRBracket, 6));
  }
  ExprPtr ParseInlineDynamicDim();
  ExprPtr ParsePostfix(ExprPtr base);
  ExprPtr ParseIndex();
  ExprPtr MakeBinary(BinaryOp op, ExprPtr a, ExprPtr b, const Token& at);
  ExprPtr MakeUnary(UnaryOp op, ExprPtr x, const Token& at);
  StmtPtr ParseGenericWith(const Token& at, const Path& p);
  StmtPtr ParseReturn();
  StmtPtr ParseFor();
  StmtPtr ParseWhile();
  StmtPtr ParseIf();
  StmtPtr ParseWith();
  bool AtWindowDecl() {
    return AtName("pl") && At(Tok::kDot, 1) && AtName("_dump", 2) && At(Tok::kDot, 3) &&
           AtName("window_buffer", 4);
  }
  void ParseWindowDecl();
  void DefineVar(std::string_view name, const VarPtr& var);
  void BindWindow(WindowDecl& d, const VarPtr& base);
  WindowBufferPtr LookupWindow(const Token& at, bool by_index, std::string_view name,
                               int64_t index);

  // ---- expressions
  ExprPtr ParseExpr();
  ExprPtr ParseBinary(int min_prec);
  ExprPtr ParseUnary();
  ExprPtr ParsePrimary();
  ExprPtr ParseDispatch();
  ExprPtr ParseDslCall(const Path& path);
  ExprPtr ParseConst(const Token& at);
  ExprPtr ParseDumpCall(const Token& at);
  ExprPtr ParseWindowRefExpr();
  CallPtr ParseUserAlloc(std::string_view lhs);
  void RequireHostLevel(const Token& at, std::string_view op);
  Path ParsePath();
  bool AtUserAlloc();
  std::vector<ExprPtr> ParseExprList(Tok close);
  // The same list left on expr_scratch_, from the returned index on.
  size_t ParseExprsOntoScratch(Tok close);
  // A call's arguments left on the scratch stacks, positional ones on expr_scratch_
  // from `args` on and keyword ones on kwarg_scratch_ from `kwargs` on (ExprsFrom,
  // KwargsFrom): a call node takes them from there without a vector of its own.
  struct ScratchArgs {
    size_t args;
    size_t kwargs;
  };
  ScratchArgs ParseCallArgsOntoScratch(bool kwargs_allowed, std::vector<Token>* kwarg_tokens);
  // A call of a modelled op on the arguments parsed onto the scratch stacks.
  CallPtr MakeOpCall(const OpInfo* info, const ScratchArgs& args, const Span& span);
  // The same, moved into vectors; `kwargs` null: keyword arguments are an error.
  void ParseCallArgs(std::vector<ExprPtr>* args, KwargList* kwargs);
  AttrValue ParseAttrValue();
  // `{"key": value, ...}` with string keys, no repeats; parse_value reads one value.
  template <typename Value>
  std::vector<std::pair<std::string, Value>> ParseStringKeyedDict(Value (Parser::*parse_value)());
  int64_t ParseIntToken(const Token& t, bool negative);
  double ParseFloatToken(const Token& t);
  // A string token (`what` names it in the error).
  Token ExpectString(std::string_view what);
  std::string ParseStringLit(std::string_view what) {
    return Lexer::DecodeString(ExpectString(what).text);
  }

  // ---- types
  TypePtr ParseType();
  // A shape list, left on expr_scratch_ from the returned index (ExprsFrom).
  size_t ParseShapeOntoScratch();
  std::optional<DataType> ParseDTypeName();
  DataType ExpectDType();

  const ParseOptions& opts_;
  FileId file_;
  Lexer main_;
  Lexer* lex_;
  int depth_ = 0;
  // How many enclosing with-scopes run on the device side (pl.at(level=CORE_GROUP),
  // pl.spmd, pl.incore): a host resource cannot be made there.
  int device_scopes_ = 0;
  // Whether every signature has been read (ReadSignaturesAhead), and how many
  // indented blocks of the body being parsed on main_ are open (0: not in a body).
  bool sigs_known_ = false;
  int block_depth_ = 0;
  // A deque: records stay put as functions are added, and the records (destroyed
  // with the parser, inside the parse) are read in order rather than one heap
  // block per function scattered over the heap.
  std::deque<FuncSig> sigs_;
  // Keys view the records' names (the deque keeps records in place).
  StringViewMap<FuncSig*> sig_by_name_;
  FuncState* fs_ = nullptr;
  FuncState sig_state_;  // a signature's parameters (signatures do not nest)
  std::vector<std::unique_ptr<FuncState>> body_states_;
  size_t body_states_used_ = 0;
  YieldFrame* yield_frame_ = nullptr;
  std::vector<VarPtr> dyn_dims_;
  StringMap<VarPtr> dyn_by_name_;
  // Dims written `pl.dynamic("NR")` inside a type: one Var per name for the
  // whole program, as PyPTO's parser keeps them.
  StringMap<VarPtr> inline_dims_;
  // Views into the source text, which outlives the parser.
  StringViewSet user_alloc_names_;
  const OpInfo* alloc_info_ = nullptr;
  // Lists under construction, innermost last: a finished list is copied out at its
  // exact size (one allocation instead of one per doubling).
  std::vector<ExprPtr> expr_scratch_;
  std::vector<StmtPtr> stmt_scratch_;
  KwargList kwarg_scratch_;
  template <typename T>
  static std::vector<T> TakeScratch(std::vector<T>* scratch, size_t base) {
    std::vector<T> out(std::make_move_iterator(scratch->begin() + static_cast<ptrdiff_t>(base)),
                       std::make_move_iterator(scratch->end()));
    scratch->resize(base);
    return out;
  }

  // The top of a scratch stack from `base` on, for the list of the node about to
  // be built (moved into it, then erased): no vector in between.
  VectorTail<ExprPtr> ExprsFrom(size_t base) { return {&expr_scratch_, base}; }
  VectorTail<Kwarg> KwargsFrom(size_t base) { return {&kwarg_scratch_, base}; }
  VectorTail<StmtPtr> StmtsFrom(size_t base) { return {&stmt_scratch_, base}; }
};

// ---------------------------------------------------------------------------
// Program structure

void Parser::SkipImportLine() {
  while (!At(Tok::kNewline) && !At(Tok::kEof)) Next();
  Accept(Tok::kNewline);
}

ProgramPtr Parser::Run() {
  // Module level: imports, docstrings, then exactly one @pl.program class.
  while (true) {
    if (Accept(Tok::kNewline)) continue;
    if (AtName("import") || AtName("from")) {
      SkipImportLine();
      continue;
    }
    if (AcceptDocstring()) continue;
    if (At(Tok::kName) && At(Tok::kAssign, 1) && AtName("pl", 2) && At(Tok::kDot, 3) &&
        AtName("dynamic", 4)) {
      ParseDynamicDim();
      continue;
    }
    break;
  }
  if (At(Tok::kIndent)) Fail(Peek(), "unexpected indent");
  if (!At(Tok::kAt)) FailExpecting("'@pl.program'");
  Token at = Next();
  Path deco = ParsePath();
  if (!deco.Is("pl", "program")) Fail(deco.first, "expected '@pl.program'");
  if (Accept(Tok::kLParen)) Expect(Tok::kRParen, "(@pl.program takes no arguments)");
  Expect(Tok::kNewline);
  ExpectName("class");
  Token name = ExpectIdent("a class name");
  if (Accept(Tok::kLParen)) Expect(Tok::kRParen);
  Expect(Tok::kColon);
  Expect(Tok::kNewline);
  if (!At(Tok::kIndent)) Fail(Peek(), "expected an indented class body");
  Next();
  AcceptDocstring();
  // Functions in text order, each signature followed by its body, on one lexer.
  // A body that calls a function not defined yet reads every remaining signature
  // ahead (ReadSignaturesAhead); the bodies after it are then parsed from the
  // positions kept there, below.
  while (!sigs_known_ && !At(Tok::kDedent) && !At(Tok::kEof)) {
    if (AcceptPass()) continue;
    FuncSig* sig = ParseFunctionHeader(/*skip_body=*/false);
    Rebind in_body(&block_depth_, 1);
    ParseFunctionBody(sig);
  }
  if (!sigs_known_) ExpectEndOfClass();
  // The bodies read ahead, in order (a call of a function whose return type is not
  // annotated parses the callee first).
  std::vector<FunctionPtr> fns;
  fns.reserve(sigs_.size());
  for (auto& s : sigs_) {
    EnsureParsed(&s);
    fns.push_back(std::move(s.result));
  }
  return WithSpan(MakeNode<Program>(std::string(name.text), dyn_dims_, std::move(fns)), SpanOf(at));
}

FuncSig* Parser::ParseFunctionHeader(bool skip_body) {
  FuncSig* sig = &sigs_.emplace_back();
  if (At(Tok::kAt)) {
    ParseDecorator(sig);
  } else if (!AtName("def")) {
    FailExpecting("'@pl.function' or 'def' in the class body");
  }
  ParseSignature(sig, skip_body);
  if (!sig_by_name_.emplace(sig->name, sig).second) {
    throw ValueError(fmt::format("function '{}' is defined twice", Echo(sig->name)), sig->span);
  }
  return sig;
}

void Parser::ExpectEndOfClass() {
  Accept(Tok::kDedent);
  while (Accept(Tok::kNewline)) {
  }
  if (!At(Tok::kEof)) FailExpecting("end of input after the program class");
}

// Inside the body of the function being parsed on main_: reads the signatures of
// every later function on a copy of the lexer (skipping the rest of the current
// body first, and every later body), so that a call may name any of them.
void Parser::ReadSignaturesAhead() {
  Lexer ahead = main_;
  Token eof;
  if (!ahead.SkipBlock(&eof, block_depth_)) Fail(eof, "unexpected end of input inside a block");
  Rebind swap(&lex_, &ahead);
  Rebind depth(&depth_, 0);
  while (!At(Tok::kDedent) && !At(Tok::kEof)) {
    if (!AcceptPass()) ParseFunctionHeader(/*skip_body=*/true);
  }
  ExpectEndOfClass();
  sigs_known_ = true;
}

// `NR = pl.dynamic("NR")`: a program-level symbolic dimension, visible in every
// function (a local binding of the same name shadows it).
void Parser::ParseDynamicDim() {
  Token name = ExpectIdent("a dimension name");
  Expect(Tok::kAssign);
  ParsePath();
  Expect(Tok::kLParen);
  if (!At(Tok::kString)) Fail(Peek(), "pl.dynamic expects the dimension's name as a string");
  Next();
  Expect(Tok::kRParen, "(pl.dynamic takes one string argument)");
  ExpectEndOfStmt();
  if (dyn_by_name_.count(name.text)) {
    Fail(name, fmt::format("dynamic dimension '{}' is defined twice", Echo(name.text)));
  }
  VarPtr v = MakeVar(std::string(name.text), ScalarTy(DataType::kIndex), SpanOf(name));
  dyn_dims_.push_back(v);
  dyn_by_name_.emplace(std::string(name.text), v);
}

void Parser::ParseDecorator(FuncSig* sig) {
  Expect(Tok::kAt);
  Path p = ParsePath();
  if (!p.Is("pl", "function"))
    Fail(p.first, fmt::format("unknown decorator '@{}'", Echo(p.Join())));
  if (Accept(Tok::kLParen)) {
    ParseList(Tok::kRParen, [&] {
      Token key = ExpectIdent("a decorator argument");
      Expect(Tok::kAssign);
      Path v = ParsePath();
      // `pl.<Enum>.<member>`, the member read by from_name.
      auto member = [&](std::string_view enum_name, std::string_view placeholder, auto from_name) {
        auto m = v.n == 3 && TextIs(v.parts[0], "pl") && v.parts[1] == enum_name
                     ? from_name(v.parts[2])
                     : std::nullopt;
        if (!m) {
          Fail(v.first, fmt::format("{}= expects pl.{}.{}, got '{}'", Echo(key.text), enum_name,
                                    placeholder, Echo(v.Join())));
        }
        return *m;
      };
      if (TextIs(key.text, "type")) {
        sig->type = member("FunctionType", "<Kind>", FunctionTypeFromName);
      } else if (TextIs(key.text, "level")) {
        sig->level = member("Level", "<LEVEL>", LevelFromName);
      } else if (TextIs(key.text, "role")) {
        sig->role = member("Role", "<Role>", RoleFromName);
      } else {
        Fail(key,
             fmt::format("unknown @pl.function argument '{}' (expected type=, level= or role=)",
                         Echo(key.text)));
      }
    });
  }
  Expect(Tok::kNewline);
}

void Parser::ParseSignature(FuncSig* sig, bool skip_body) {
  Token def = ExpectName("def");
  Token name = ExpectIdent("a function name");
  sig->name = std::string(name.text);
  sig->span = SpanOf(def);
  Expect(Tok::kLParen);
  // PyPTO keeps the body of a SubWorker at HOST level or above as Python source,
  // and such a function takes no `self`.
  sig->python = sig->role == Role::kSubWorker && sig->level && *sig->level >= Level::kHost;
  if (sig->python) {
    if (AtName("self")) {
      Fail(Peek(), fmt::format("the host SubWorker '{}' must not declare 'self' (its body is plain "
                               "Python, kept as text)",
                               Echo(sig->name)));
    }
  } else {
    if (!AtName("self")) Fail(Peek(), "the first parameter of a program function must be 'self'");
    Next();
  }
  FuncState& fs = sig_state_;  // parameters may be used in later parameter types
  fs.Reset();
  for (const auto& d : dyn_dims_) fs.vars.insert_or_assign(d->name_hint, d);
  Rebind in_signature(&fs_, &fs);
  // A SubWorker's first parameter comes without a comma before it.
  for (bool first = sig->python; first ? !At(Tok::kRParen) : Accept(Tok::kComma); first = false) {
    if (At(Tok::kRParen)) break;
    Token pname = ExpectIdent("a parameter name");
    if (!At(Tok::kColon))
      Fail(Peek(), fmt::format("parameter '{}' needs a type annotation", Echo(pname.text)));
    Next();
    ParamDirection dir = ParamDirection::kIn;
    const bool directed = AtName("pl") && At(Tok::kDot, 1) &&
                          (AtName("Out", 2) || AtName("InOut", 2)) && At(Tok::kLBracket, 3);
    if (directed) {
      Next();
      Next();
      dir = TextIs(Next().text, "Out") ? ParamDirection::kOut : ParamDirection::kInOut;
      Next();
    }
    TypePtr type = ParseType();
    if (directed) Expect(Tok::kRBracket);
    for (const auto& p : sig->params) {
      if (p->name_hint == pname.text)
        Fail(pname, fmt::format("duplicate parameter '{}'", Echo(pname.text)));
    }
    VarPtr v = MakeVar(std::string(pname.text), type, SpanOf(pname));
    sig->params.push_back(v);
    sig->dirs.push_back(dir);
    fs.vars.insert_or_assign(pname.text, v);
  }
  sig->param_count = sig->params.size();
  Expect(Tok::kRParen);
  if (Accept(Tok::kArrow)) {
    sig->has_ret_annot = true;
    Lexer ret_at = *lex_;
    bool names_window = false;
    for (int depth = 0;;) {
      const Token& t = Peek();
      if (t.kind == Tok::kEof || t.kind == Tok::kNewline || (depth == 0 && t.kind == Tok::kColon))
        break;
      if (t.kind == Tok::kLParen || t.kind == Tok::kLBracket) ++depth;
      if (t.kind == Tok::kRParen || t.kind == Tok::kRBracket) --depth;
      if (t.kind == Tok::kName && TextIs(t.text, "window_ref")) names_window = true;
      Next();
    }
    if (names_window) {
      sig->deferred_ret = std::make_unique<Lexer>(ret_at);
    } else {
      Rebind swap(&lex_, &ret_at);
      sig->ret_types = ParseReturnAnnotation();
    }
  }
  Expect(Tok::kColon);
  if (!At(Tok::kNewline)) Fail(Peek(), "expected a new line after the function signature");
  const Token newline = Next();
  if (!At(Tok::kIndent))
    Fail(Peek(), fmt::format("expected an indented body for function '{}'", Echo(sig->name)));
  Next();
  if (sig->python) TakePythonBody(sig, newline);
  if (!skip_body) return;
  sig->body = std::make_unique<Lexer>(*lex_);
  SkipBlock();
}

// The body's lines without its indentation, so that the printer indents them as it
// indents every body. A line indented less than the body (a comment, or inside
// brackets or a string) could not be printed back as written.
void Parser::TakePythonBody(FuncSig* sig, const Token& newline) {
  const Lexer::RawBlock block = lex_->TakeRawBlock(newline);
  std::string body;
  body.reserve(block.text.size());
  int32_t line = block.line;
  for (size_t at = 0; at < block.text.size(); ++line) {
    size_t nl = block.text.find('\n', at);
    if (nl == std::string_view::npos) nl = block.text.size();
    std::string_view text = block.text.substr(at, nl - at);
    at = nl + 1;
    if (!text.empty() && text.back() == '\r') text.remove_suffix(1);
    if (line != block.line) body += '\n';
    if (text.find_first_not_of(' ') == std::string_view::npos) continue;
    const auto indent = static_cast<size_t>(block.indent);
    if (text.size() < indent ||
        text.substr(0, indent).find_first_not_of(' ') != std::string_view::npos) {
      throw ValueError(
          fmt::format("a line of the SubWorker '{}' is indented less than its body (its body is "
                      "kept as text, re-indented when printed)",
                      Echo(sig->name)),
          Span{file_, line, 1});
    }
    body.append(text.substr(indent));
  }
  sig->python_body = std::move(body);
}

std::vector<TypePtr> Parser::ParseReturnAnnotation() {
  std::vector<TypePtr> types;
  if (AtName("None")) {
    Next();
  } else if (AtName("tuple") && At(Tok::kLBracket, 1)) {
    Next();
    Next();
    ParseList(Tok::kRBracket, [&] { types.push_back(ParseType()); });
  } else {
    types.push_back(ParseType());
  }
  if (!At(Tok::kColon)) FailExpecting("':' after the return type");
  return types;
}

// Skips the rest of an indented block whose INDENT was consumed.
void Parser::SkipBlock() {
  Token eof;
  if (!lex_->SkipBlock(&eof)) Fail(eof, "unexpected end of input inside a block");
}

// A body read ahead, from the position kept when it was skipped.
void Parser::EnsureParsed(FuncSig* sig) {
  if (sig->state == FuncSig::kDone) return;
  const std::unique_ptr<Lexer> body = std::move(sig->body);
  Rebind swap(&lex_, body.get());
  ParseFunctionBody(sig);
}

std::span<const TypePtr> Parser::ReturnTypesOf(FuncSig* sig, const Token& at) {
  if ((sig->has_ret_annot && !sig->deferred_ret) || sig->state == FuncSig::kDone)
    return sig->ret_types;
  if (sig->state == FuncSig::kParsing) {
    Fail(at,
         fmt::format(
             "cannot deduce the return type of '{}' here (recursive call); annotate it with '->'",
             Echo(sig->name)));
  }
  EnsureParsed(sig);
  return sig->ret_types;
}

// The body of `sig` from the current lexer, which stands just after its INDENT.
void Parser::ParseFunctionBody(FuncSig* sig) {
  sig->state = FuncSig::kParsing;
  // Bodies nest (a call of a function whose return type is not annotated parses
  // the callee first): one reused state per level.
  if (body_states_used_ == body_states_.size())
    body_states_.push_back(std::make_unique<FuncState>());
  FuncState& fs = *body_states_[body_states_used_];
  Rebind nested(&body_states_used_, body_states_used_ + 1);
  fs.Reset();
  fs.sig = sig;
  for (const auto& d : dyn_dims_) fs.vars.insert_or_assign(d->name_hint, d);
  for (const auto& v : sig->params) fs.vars.insert_or_assign(v->name_hint, v);
  Rebind in_body(&fs_, &fs);
  Rebind depth(&depth_, 0);
  Rebind scopes(&device_scopes_, 0);

  AcceptDocstring();
  while (AtWindowDecl()) ParseWindowDecl();
  for (auto& d : fs.windows) {
    for (const auto& v : sig->params) {
      if (v->name_hint == d.base && !d.wb) BindWindow(d, v);
    }
  }
  const size_t stmts_base = stmt_scratch_.size();
  Token first = Peek();
  while (!At(Tok::kDedent) && !At(Tok::kEof)) ParseStmt();
  Accept(Tok::kDedent);
  // The body stays on stmt_scratch_ until the Seq is built (the return annotation
  // below parses types, not statements).
  for (auto& d : fs.windows) {
    if (!d.wb) {
      throw ValueError(
          fmt::format("window '{}': its base variable '{}' is never assigned in function '{}'",
                      Echo(d.name), Echo(d.base), Echo(sig->name)),
          d.span);
    }
  }
  if (sig->deferred_ret) {
    Rebind ret_swap(&lex_, sig->deferred_ret.get());
    sig->ret_types = ParseReturnAnnotation();
  } else if (!sig->has_ret_annot) {
    sig->ret_types = std::move(fs.first_return_types);
  }
  auto fn = WithSpan(MakeNode<Function>(sig->name, std::move(sig->params), std::move(sig->dirs),
                                        sig->ret_types, Seq(StmtsFrom(stmts_base), SpanOf(first)),
                                        sig->type, sig->level, sig->role),
                     sig->span);
  fn->python_body = std::move(sig->python_body);
  sig->result = fn;
  sig->state = FuncSig::kDone;
}

// ---------------------------------------------------------------------------
// Windows

void Parser::ParseWindowDecl() {
  Token at = Peek();
  for (int i = 0; i < 5; ++i) Next();
  Expect(Tok::kLParen);
  WindowDecl d;
  d.span = SpanOf(at);
  d.name = ParseStringLit("the window name");
  bool have_base = false;
  while (Accept(Tok::kComma)) {
    if (At(Tok::kRParen)) break;
    Token key = ExpectIdent("a window_buffer argument");
    Expect(Tok::kAssign);
    if (TextIs(key.text, "base")) {
      d.base = ParseStringLit("the base variable name");
      have_base = true;
    } else if (TextIs(key.text, "size")) {
      if (AtName("None") && (At(Tok::kComma, 1) || At(Tok::kRParen, 1))) {
        Next();
        continue;
      }
      d.size.emplace(*lex_);
      // Skip the expression: it may use variables defined later in the body.
      int depth = 0;
      while (true) {
        const Token& t = Peek();
        if (t.kind == Tok::kEof || t.kind == Tok::kNewline)
          Fail(t, "unterminated window_buffer size");
        if (depth == 0 && (t.kind == Tok::kComma || t.kind == Tok::kRParen)) break;
        if (t.kind == Tok::kLParen || t.kind == Tok::kLBracket || t.kind == Tok::kLBrace) ++depth;
        if (t.kind == Tok::kRParen || t.kind == Tok::kRBracket || t.kind == Tok::kRBrace) --depth;
        Next();
      }
    } else if (TextIs(key.text, "load_from_host") || TextIs(key.text, "store_to_host")) {
      bool v = false;
      if (AtName("True")) {
        v = true;
      } else if (!AtName("False")) {
        Fail(Peek(), fmt::format("{}= expects True or False", Echo(key.text)));
      }
      Next();
      (TextIs(key.text, "load_from_host") ? d.load : d.store) = v;
    } else {
      Fail(key, fmt::format("unknown window_buffer argument '{}'", Echo(key.text)));
    }
  }
  Expect(Tok::kRParen);
  ExpectEndOfStmt();
  if (!have_base)
    throw ValueError(fmt::format("window '{}' needs base=\"VAR\"", Echo(d.name)), d.span);
  if (fs_->window_index.count(d.name)) {
    throw ValueError(fmt::format("window '{}' is declared twice", Echo(d.name)), d.span);
  }
  size_t idx = fs_->windows.size();
  fs_->window_index.emplace(d.name, idx);
  fs_->windows_by_base[d.base].push_back(idx);
  fs_->windows.push_back(std::move(d));
}

void Parser::BindWindow(WindowDecl& d, const VarPtr& base) {
  ExprPtr size;
  if (d.size) {
    Rebind swap(&lex_, &*d.size);
    size = ParseExpr();
  }
  d.wb = WithSpan(MakeNode<WindowBuffer>(base, size, d.load, d.store), d.span);
}

void Parser::DefineVar(std::string_view name, const VarPtr& var) {
  fs_->vars.insert_or_assign(name, var);
  if (fs_->windows_by_base.empty()) return;
  auto w = fs_->windows_by_base.find(name);
  if (w == fs_->windows_by_base.end()) return;
  for (size_t idx : w->second) {
    if (!fs_->windows[idx].wb) BindWindow(fs_->windows[idx], var);
  }
}

WindowBufferPtr Parser::LookupWindow(const Token& at, bool by_index, std::string_view name,
                                     int64_t index) {
  if (!fs_ || !fs_->sig) Fail(at, "pl._dump.window_ref is only allowed inside a function body");
  const WindowDecl* d = nullptr;
  if (by_index) {
    if (index < 0 || index >= static_cast<int64_t>(fs_->windows.size())) {
      Fail(at,
           fmt::format(
               "window_ref({}) refers to no window_buffer declaration (the function declares {})",
               index, fs_->windows.size()));
    }
    d = &fs_->windows[static_cast<size_t>(index)];
  } else {
    auto it = fs_->window_index.find(name);
    if (it == fs_->window_index.end())
      Fail(at, fmt::format("window_ref to undeclared window '{}'", Echo(name)));
    d = &fs_->windows[it->second];
  }
  if (!d->wb) {
    Fail(at, fmt::format("window '{}' is used before its base variable '{}' is assigned",
                         Echo(d->name), Echo(d->base)));
  }
  return d->wb;
}

// ---------------------------------------------------------------------------
// Statements

SeqStmtsPtr Parser::ParseBlock(const Token& header, YieldFrame* frame) {
  DepthGuard g(this, header);
  Expect(Tok::kColon);
  // Only the direct body of an init_values loop may yield; nested blocks may not.
  Rebind yields_to(&yield_frame_, frame);
  auto check_end = [&] {
    if (frame && !frame->yielded) {
      Fail(header, fmt::format("a loop with init_values must end with pl.yield_(...) of its {} "
                               "carried value{}",
                               frame->iter_args.size(), frame->iter_args.size() == 1 ? "" : "s"));
    }
  };
  const size_t base = stmt_scratch_.size();
  if (!At(Tok::kNewline)) {
    // `else: pass` on one line.
    if (StmtPtr s = ParseSimpleStmt()) stmt_scratch_.push_back(std::move(s));
    check_end();
    return Seq(StmtsFrom(base), SpanOf(header));
  }
  Next();
  if (!At(Tok::kIndent)) Fail(Peek(), "expected an indented block");
  Token first = Next();
  ++block_depth_;
  while (!At(Tok::kDedent) && !At(Tok::kEof)) {
    if (frame && frame->yielded) {
      Fail(Peek(), "pl.yield_ must be the last statement of the loop body");
    }
    ParseStmt();
  }
  if (Accept(Tok::kDedent)) --block_depth_;
  check_end();
  return Seq(StmtsFrom(base), SpanOf(first));
}

void Parser::ParseStmt() {
  const Token& t = Peek();
  if (t.kind == Tok::kIndent) Fail(t, "unexpected indent");
  const std::string_view word = t.kind == Tok::kName ? t.text : std::string_view();
  StmtPtr s;
  if (TextIs(word, "for")) {
    s = ParseFor();
  } else if (TextIs(word, "while")) {
    s = ParseWhile();
  } else if (TextIs(word, "if")) {
    s = ParseIf();
  } else if (TextIs(word, "with")) {
    s = ParseWith();
  } else if (TextIs(word, "elif") || TextIs(word, "else")) {
    Fail(t, fmt::format("'{}' without a matching 'if'", Echo(word)));
  } else if (TextIs(word, "def") || TextIs(word, "class")) {
    Fail(t, fmt::format("nested '{}' is not supported", Echo(word)));
  } else {
    s = ParseSimpleStmt();
  }
  if (s) stmt_scratch_.push_back(std::move(s));
}

// One line's statement (null for `pass`), up to and including its NEWLINE.
StmtPtr Parser::ParseSimpleStmt() {
  const Token t = Peek();
  StmtPtr s;
  if (t.kind == Tok::kName) {
    if (AcceptPass()) return nullptr;
    if (TextIs(t.text, "import") || TextIs(t.text, "from"))
      Fail(t, "import statements are only allowed at module level");
    if (TextIs(t.text, "break") || TextIs(t.text, "continue") || TextIs(t.text, "assert") ||
        TextIs(t.text, "raise") || TextIs(t.text, "try") || TextIs(t.text, "global") ||
        TextIs(t.text, "nonlocal") || TextIs(t.text, "del") || TextIs(t.text, "async")) {
      FailUnsupported(t, fmt::format("the '{}' statement", t.text));
    }
    if (AtWindowDecl()) {
      Fail(t, "pl._dump.window_buffer declarations must come first in the function body");
    }
    if (TextIs(t.text, "return")) {
      s = ParseReturn();
    } else if (!IsKeyword(t.text) && (At(Tok::kColon, 1) || At(Tok::kAssign, 1))) {
      s = ParseAssign();
    } else if (!IsKeyword(t.text) && At(Tok::kComma, 1)) {
      s = ParseUnpackAssign();
    } else if (AtYield()) {
      s = ParseYield({});
    }
  }
  if (!s) {
    ExprPtr e = ParseExpr();
    if (At(Tok::kAssign)) {
      if (e->kind() != NodeKind::kSubscript) {
        Fail(Peek(), "only a name, names separated by commas or a subscript can be assigned to");
      }
      Next();
      ExprPtr value = ParseExpr();
      s = WithSpan(MakeNode<SubscriptAssignStmt>(e, value), SpanOf(t));
    } else {
      s = Eval(e, SpanOf(t));
    }
  }
  ExpectEndOfStmt();
  return s;
}

// `a, b = value`: each name gets the matching element type of a tuple-typed value,
// UnknownType when the value's type says nothing (an opaque call).
StmtPtr Parser::ParseUnpackAssign() {
  std::vector<Token> names;
  names.push_back(Next());
  while (Accept(Tok::kComma)) {
    if (At(Tok::kAssign)) break;
    names.push_back(ExpectIdent("a name to unpack into"));
  }
  if (At(Tok::kColon)) Fail(Peek(), "an unpacking assignment cannot be annotated");
  Token eq = Expect(Tok::kAssign, "(unpacking assignment)");
  if (AtYield()) {
    std::vector<std::pair<Token, TypePtr>> targets;
    for (const auto& n : names) targets.emplace_back(n, nullptr);
    return ParseYield(targets);
  }
  ExprPtr value = ParseExpr();
  std::vector<TypePtr> types(names.size(), UnknownType::Get());
  if (value->type && value->type->kind() == NodeKind::kTupleType) {
    const auto& tt = static_cast<const TupleType&>(*value->type);
    if (tt.types.size() != names.size()) {
      Fail(eq, fmt::format("cannot unpack {} value{} into {} names", tt.types.size(),
                           tt.types.size() == 1 ? "" : "s", names.size()));
    }
    types = tt.types.ToVector();
  }
  std::vector<VarPtr> vars;
  vars.reserve(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    vars.push_back(MakeVar(std::string(names[i].text), types[i], SpanOf(names[i])));
  }
  StmtPtr s = WithSpan(MakeNode<UnpackAssignStmt>(vars, value), SpanOf(names[0]));
  for (size_t i = 0; i < names.size(); ++i) DefineVar(names[i].text, vars[i]);
  return s;
}

// `pl.yield_(v, ...)`, bare or as the value of `r = ...` / `r1, r2 = ...`: the
// targets become the loop's return_vars (bound after the loop, PyPTO's reading).
StmtPtr Parser::ParseYield(const std::vector<std::pair<Token, TypePtr>>& targets) {
  Token at = Peek();
  ParsePath();
  std::vector<ExprPtr> values;
  ParseCallArgs(&values, nullptr);
  YieldFrame* frame = yield_frame_;
  if (!frame) {
    Fail(at,
         "pl.yield_ is only allowed as a statement directly in the body of a loop with "
         "init_values");
  }
  if (values.size() != frame->iter_args.size()) {
    Fail(at, fmt::format("pl.yield_ yields {} value{}, but the loop carries {} (init_values)",
                         values.size(), values.size() == 1 ? "" : "s", frame->iter_args.size()));
  }
  if (!targets.empty() && targets.size() != values.size()) {
    Fail(targets[0].first, fmt::format("cannot bind {} yielded value{} to {} names", values.size(),
                                       values.size() == 1 ? "" : "s", targets.size()));
  }
  frame->yielded = true;
  for (size_t i = 0; i < targets.size(); ++i) {
    const auto& [tok, ann] = targets[i];
    TypePtr t = ann ? ann : frame->iter_args[i]->type;
    VarPtr v = MakeVar(std::string(tok.text), t, SpanOf(tok));
    frame->return_vars.push_back(v);
    DefineVar(tok.text, v);
  }
  return WithSpan(MakeNode<YieldStmt>(std::move(values)), SpanOf(at));
}

bool Parser::AtUserAlloc() {
  if (!AtName("pld") || !At(Tok::kDot, 1)) return false;
  if (AtName("alloc_window_buffer", 2) && At(Tok::kLParen, 3)) return true;
  return AtName("tensor", 2) && At(Tok::kDot, 3) && AtName("alloc_window_buffer", 4) &&
         At(Tok::kLParen, 5);
}

StmtPtr Parser::ParseAssign() {
  Token name = Next();
  TypePtr ann;
  Token ann_tok;
  if (Accept(Tok::kColon)) {
    ann_tok = Peek();
    ann = ParseType();
    if (!At(Tok::kAssign))
      Fail(Peek(), fmt::format("annotated name '{}' needs a value ('= ...')", Echo(name.text)));
  }
  Expect(Tok::kAssign);
  if (AtYield()) return ParseYield({{name, ann}});
  // pl._dump.call records its result type as written, so that IR whose variable
  // and call types differ (built by a pass, for the verifier to judge) prints and
  // reads back as it is.
  const bool dump_call = ann && AtName("pl") && At(Tok::kDot, 1) && AtName("_dump", 2) &&
                         At(Tok::kDot, 3) && AtName("call", 4);
  ExprPtr value;
  if (AtUserAlloc()) {
    value = ParseUserAlloc(name.text);
  } else {
    value = ParseExpr();
  }
  // An opaque call takes its result type from the annotation of the assignment
  // it is the whole value of; the printer relies on exactly this rule.
  if (ann && value->kind() == NodeKind::kCall && value->type->kind() == NodeKind::kUnknownType) {
    const auto& c = static_cast<const Call&>(*value);
    if (c.op && c.op->kind() == NodeKind::kOp && !static_cast<const Op&>(*c.op).info) {
      auto typed = MakeNode<Call>(c);
      typed->type = ann;
      value = typed;
    }
  }
  // A call's or a variable's type is what the verifier holds the annotation to
  // (CDS-V006): a contradiction is the input's error, so it is reported here, at
  // the annotation. Other values (constants, arithmetic) keep their annotation
  // as written, as in PyPTO (`i: pl.Scalar[pl.INDEX] = 0`).
  if (ann && !dump_call && (value->kind() == NodeKind::kCall || IsVarLikeKind(value->kind())) &&
      !AnnotationAgrees(ann, value->type)) {
    Fail(ann_tok, fmt::format("'{}' is annotated {}, but the assigned value has type {}",
                              Echo(name.text), PrintNode(ann), PrintNode(value->type)));
  }
  VarPtr var = MakeVar(std::string(name.text), ann ? ann : value->type, SpanOf(name));
  StmtPtr s = Assign(var, value, SpanOf(name));
  DefineVar(name.text, var);
  return s;
}

StmtPtr Parser::ParseReturn() {
  Token at = Next();
  const size_t base = expr_scratch_.size();
  if (!At(Tok::kNewline)) {
    expr_scratch_.push_back(ParseExpr());
    while (Accept(Tok::kComma)) {
      if (At(Tok::kNewline)) break;
      expr_scratch_.push_back(ParseExpr());
    }
  }
  if (!fs_->saw_return) {
    fs_->saw_return = true;
    for (size_t i = base; i < expr_scratch_.size(); ++i)
      fs_->first_return_types.push_back(expr_scratch_[i]->type);
  }
  return WithSpan(MakeNode<ReturnStmt>(ExprsFrom(base)), SpanOf(at));
}

StmtPtr Parser::ParseFor() {
  Token at = Next();
  Token var_name = ExpectIdent("a loop variable name");
  std::vector<Token> carried;
  bool has_carried = false;
  if (Accept(Tok::kComma)) {
    has_carried = true;
    Token lp = Expect(Tok::kLParen, "(loop-carried names: for i, (x, y) in ...)");
    ParseList(Tok::kRParen, [&] { carried.push_back(ExpectIdent("a loop-carried name")); });
    if (carried.empty()) Fail(lp, "empty list of loop-carried names");
  }
  ExpectName("in");
  Path p = ParsePath();
  const std::optional<ForKind> for_kind =
      p.n == 2 && TextIs(p.parts[0], "pl") ? ForKindFromName(p.parts[1]) : std::nullopt;
  if (!for_kind) {
    Fail(p.first,
         fmt::format(
             "expected pl.range(...), pl.unroll(...) or pl.parallel(...) after 'in', got '{}'",
             Echo(p.Join())));
  }
  const ForKind kind = *for_kind;
  Token lp = Expect(Tok::kLParen);
  std::array<ExprPtr, 3> args;
  size_t arg_count = 0;
  std::vector<ExprPtr> inits;
  bool have_inits = false;
  Token inits_tok;
  auto keyword = [&](const Token& key) {
    if (!TextIs(key.text, "init_values")) {
      Fail(key, fmt::format("pl.{}: keyword argument '{}' is not supported (only init_values=)",
                            ForKindName(kind), Echo(key.text)));
    }
    if (have_inits) Fail(key, "keyword argument 'init_values' repeated");
    have_inits = true;
    inits_tok = key;
    if (!At(Tok::kLParen) && !At(Tok::kLBracket)) {
      Fail(Peek(), "init_values= expects a tuple or list of initial values, e.g. (a, b)");
    }
    Token open = Next();
    DepthGuard g(this, open);
    inits = ParseExprList(open.kind == Tok::kLParen ? Tok::kRParen : Tok::kRBracket);
  };
  ParseArgs(keyword, [&] {
    // Arguments past the third are still parsed, so that their own errors come
    // first, and only counted for the arity error below.
    ExprPtr a = ParseExpr();
    if (arg_count < args.size()) args[arg_count] = std::move(a);
    ++arg_count;
  });
  if (arg_count == 0 || arg_count > 3) {
    Fail(lp, fmt::format("pl.{} takes 1 to 3 arguments, got {}", ForKindName(kind), arg_count));
  }
  if (has_carried && !have_inits) {
    Fail(carried[0], "loop-carried names (for i, (x, ...) in ...) need init_values=(...)");
  }
  if (have_inits && !has_carried) {
    Fail(inits_tok, "init_values= needs loop-carried names: for i, (x, ...) in ...");
  }
  if (has_carried && carried.size() != inits.size()) {
    Fail(inits_tok, fmt::format("{} loop-carried name{} but {} init_values", carried.size(),
                                carried.size() == 1 ? "" : "s", inits.size()));
  }
  Span sp = SpanOf(at);
  ExprPtr start = arg_count == 1 ? Int(0, DataType::kInt64, sp) : args[0];
  ExprPtr stop = arg_count == 1 ? args[0] : args[1];
  ExprPtr step = arg_count == 3 ? args[2] : Int(1, DataType::kInt64, sp);
  VarPtr lv = MakeVar(std::string(var_name.text), ScalarTy(DataType::kIndex), SpanOf(var_name));
  DefineVar(var_name.text, lv);
  YieldFrame frame;
  for (size_t i = 0; i < carried.size(); ++i) {
    frame.iter_args.push_back(
        WithSpan(MakeNode<IterArg>(std::string(carried[i].text), inits[i]->type, inits[i]),
                 SpanOf(carried[i])));
    DefineVar(carried[i].text, frame.iter_args.back());
  }
  SeqStmtsPtr body = ParseBlock(at, has_carried ? &frame : nullptr);
  if (AtName("else")) FailUnsupported(Peek(), "'else' after a loop");
  auto f = WithSpan(MakeNode<ForStmt>(lv, start, stop, step, body, kind), sp);
  f->iter_args = std::move(frame.iter_args);
  f->return_vars = std::move(frame.return_vars);
  return f;
}

StmtPtr Parser::ParseWhile() {
  Token at = Next();
  ExprPtr cond = ParseExpr();
  SeqStmtsPtr body = ParseBlock(at);
  if (AtName("else")) FailUnsupported(Peek(), "'else' after a loop");
  return While(cond, body, SpanOf(at));
}

StmtPtr Parser::ParseIf() {
  Token at = Next();
  DepthGuard g(this, at);
  ExprPtr cond = ParseExpr();
  SeqStmtsPtr then_body = ParseBlock(at);
  StmtPtr else_body;
  if (AtName("elif")) {
    Token e = Peek();
    StmtPtr nested = ParseIf();
    else_body = Seq({nested}, SpanOf(e));
  } else if (AtName("else")) {
    Token e = Next();
    else_body = ParseBlock(e);
  }
  return If(cond, then_body, else_body, SpanOf(at));
}

StmtPtr Parser::ParseWith() {
  Token at = Next();
  Path p = ParsePath();
  if (!p.Is("pl", "_dump", "comm_domain")) return ParseGenericWith(at, p);
  Expect(Tok::kLParen);
  std::string name;
  bool have_name = false, have_devices = false;
  DeviceSet devices;
  std::vector<std::pair<std::string, Token>> slot_names;
  KwargList attrs;
  ParseList(Tok::kRParen, [&] {
    Token key = ExpectIdent("a comm_domain argument");
    Expect(Tok::kAssign);
    if (TextIs(key.text, "name")) {
      name = ParseStringLit("the domain name");
      have_name = true;
    } else if (TextIs(key.text, "devices")) {
      have_devices = true;
      if (At(Tok::kString)) {
        Token s = Next();
        if (Lexer::DecodeString(s.text) != "all")
          Fail(s, "devices= expects \"all\" or a list of device ids");
        devices = DeviceSet::All();
      } else {
        Expect(Tok::kLBracket, "(devices= expects \"all\" or a list of device ids)");
        devices = DeviceSet{false, {}};
        ParseList(Tok::kRBracket, [&] {
          bool neg = Accept(Tok::kMinus);
          Token n = Peek();
          if (n.kind != Tok::kInt) Fail(n, "device ids must be integer literals");
          Next();
          devices.ids.push_back(ParseIntToken(n, neg));
        });
      }
    } else if (TextIs(key.text, "slots")) {
      Expect(Tok::kLBracket);
      ParseList(Tok::kRBracket, [&] {
        Token s = Peek();
        slot_names.emplace_back(ParseStringLit("a window name"), s);
      });
    } else if (TextIs(key.text, "attrs")) {
      attrs = ParseStringKeyedDict(&Parser::ParseAttrValue);
    } else {
      Fail(key, fmt::format("unknown comm_domain argument '{}'", Echo(key.text)));
    }
  });
  if (!have_name) Fail(at, "pl._dump.comm_domain needs name=");
  if (!have_devices) Fail(at, "pl._dump.comm_domain needs devices=");
  if (AtName("as")) Fail(Peek(), "pl._dump.comm_domain takes no 'as' target");
  SeqStmtsPtr body = ParseBlock(at);
  // Slots are resolved after the body: their bases are usually assigned inside it.
  std::vector<WindowBufferPtr> slots;
  for (const auto& [n, tok] : slot_names) slots.push_back(LookupWindow(tok, false, n, 0));
  return WithSpan(MakeNode<CommDomainScopeStmt>(std::move(name), std::move(devices),
                                                std::move(slots), std::move(attrs), body),
                  SpanOf(at));
}

namespace {
// pl.at(level=pl.Level.CORE_GROUP): PyPTO makes it an InCore scope (other levels
// give a hierarchy scope).
bool AtCoreGroup(const KwargList& kwargs) {
  const AttrValue* level = FindKwarg(kwargs, "level");
  return level && std::holds_alternative<EnumAttr>(*level) &&
         std::get<EnumAttr>(*level).qualified == "pl.Level.CORE_GROUP";
}
}  // namespace

// `with pl.manual_scope():`, `with pl.at(level=..., deps=[t]) as t:`: a ScopeStmt
// keeping the callee, arguments and keyword arguments as written.
StmtPtr Parser::ParseGenericWith(const Token& at, const Path& p) {
  if (!TextIs(p.parts[0], "pl") && !TextIs(p.parts[0], "pld")) {
    Fail(p.first, fmt::format("'with {}': expected a pl.* or pld.* scope", Echo(p.Join())));
  }
  if (p.n >= 2 && TextIs(p.parts[1], "_dump")) {
    Fail(p.first, fmt::format("unknown pl._dump scope '{}'", Echo(p.Join())));
  }
  if (!At(Tok::kLParen))
    Fail(Peek(), fmt::format("expected a call of '{}' after 'with'", Echo(p.Join())));
  std::vector<ExprPtr> args;
  KwargList kwargs;
  ParseCallArgs(&args, &kwargs);
  if (At(Tok::kComma)) FailUnsupported(Peek(), "a with statement of several context managers");
  VarPtr as_var;
  if (AtName("as")) {
    Next();
    const Token& n = Peek();
    if (n.kind != Tok::kName || IsKeyword(n.text) || !At(Tok::kColon, 1)) {
      Fail(n, "the 'as' target of a with scope must be a plain name");
    }
    Token name = Next();
    as_var = MakeVar(std::string(name.text), UnknownType::Get(), SpanOf(name));
    DefineVar(name.text, as_var);
  }
  const bool device_side =
      p.Is("pl", "spmd") || p.Is("pl", "incore") || (p.Is("pl", "at") && AtCoreGroup(kwargs));
  Rebind scopes(&device_scopes_, device_scopes_ + (device_side ? 1 : 0));
  SeqStmtsPtr body = ParseBlock(at);
  return WithSpan(MakeNode<ScopeStmt>(p.Join(), std::move(args), std::move(kwargs), as_var, body),
                  SpanOf(at));
}

// ---------------------------------------------------------------------------
// Expressions

// Kernel code computes on results of opaque calls (`me = pld.rank(ctx)`, then
// `(me + 1) % n`): an operand of unknown type is let through, and the result is
// BOOL for comparisons and logic, unknown otherwise. Deterministic, so a reparse
// rebuilds the same types.
ExprPtr Parser::MakeBinary(BinaryOp op, ExprPtr a, ExprPtr b, const Token& at) {
  const bool a_unknown = HasTypeKind(a, NodeKind::kUnknownType);
  const bool b_unknown = HasTypeKind(b, NodeKind::kUnknownType);
  if ((a_unknown || b_unknown) && (a_unknown || HasTypeKind(a, NodeKind::kScalarType)) &&
      (b_unknown || HasTypeKind(b, NodeKind::kScalarType))) {
    // Comparisons and logic give BOOL whatever their operands (the builder's rule).
    const bool logical =
        PromoteDataTypes(op, DataType::kIndex, DataType::kIndex) == DataType::kBool;
    TypePtr t = logical ? ScalarTy(DataType::kBool) : TypePtr(UnknownType::Get());
    return WithSpan(MakeNode<BinaryExpr>(op, std::move(a), std::move(b), std::move(t)), SpanOf(at));
  }
  return Binary(op, std::move(a), std::move(b), SpanOf(at));
}

ExprPtr Parser::MakeUnary(UnaryOp op, ExprPtr x, const Token& at) {
  if (HasTypeKind(x, NodeKind::kUnknownType)) {
    TypePtr t = op == UnaryOp::kNot ? ScalarTy(DataType::kBool) : TypePtr(UnknownType::Get());
    return WithSpan(MakeNode<UnaryExpr>(op, std::move(x), std::move(t)), SpanOf(at));
  }
  return Unary(op, std::move(x), SpanOf(at));
}

// The registry's MakeOpCall for a modelled op (same checks, same messages, same
// span), without looking the op up by name: the call is built first and its type
// deduced from it.
CallPtr Parser::MakeOpCall(const OpInfo* info, const ScratchArgs& args, const Span& span) {
  auto call = WithSpan(MakeNode<Call>(info->op, ExprsFrom(args.args), KwargsFrom(args.kwargs),
                                      ExprAttrList{}, nullptr),
                       span);
  call->type = DeduceCallType(*call);
  return call;
}

ExprPtr Parser::ParseExpr() {
  DepthGuard g(this, Peek());
  ExprPtr e = ParseBinary(1);
  RejectAfterExpr();
  return e;
}

namespace {
// Whether `b` starts right where `a` ends (two tokens written as one operator).
bool Adjacent(const Token& a, const Token& b) {
  return a.line == b.line && a.col + static_cast<int32_t>(a.text.size()) == b.col;
}
}  // namespace

void Parser::RejectAfterExpr() {
  const Token& t = Peek();
  if (t.kind == Tok::kAt) FailUnsupported(t, "the matrix multiplication operator '@'");
  if (t.kind != Tok::kName) return;
  if (TextIs(t.text, "if")) FailUnsupported(t, "a conditional expression (x if c else y)");
  if (TextIs(t.text, "for")) FailUnsupported(t, "a comprehension ([x for x in ...])");
  if (TextIs(t.text, "is")) FailUnsupported(t, "the 'is' operator");
  if (TextIs(t.text, "in")) FailUnsupported(t, "the 'in' operator");
  if (TextIs(t.text, "not") && AtName("in", 1)) FailUnsupported(t, "the 'not in' operator");
}

void Parser::FailAtEndOfStmt() {
  const Token& t = Peek();
  if (t.kind == Tok::kSemicolon) FailUnsupported(t, "more than one statement on a line (';')");
  if (t.kind == Tok::kComma)
    Fail(t, "a tuple without parentheses is not supported here; write (a, b)");
  if (t.kind == Tok::kString) FailUnsupported(t, "implicit concatenation of string literals");
  FailExpecting("end of line");
}

// A name that is no variable: say what Python construct it starts, when it
// plainly is one the format lacks.
void Parser::FailUndefinedName(const Token& t) {
  const Token& next = Peek();
  if (next.kind == Tok::kString && Adjacent(t, next) && t.text.size() <= 2) {
    FailUnsupported(
        t, fmt::format("the string prefix '{}' (f-strings, byte and raw strings)", Echo(t.text)));
  }
  if (next.kind == Tok::kColon && At(Tok::kAssign, 1) && Adjacent(next, Peek(1))) {
    FailUnsupported(next, "an assignment expression (:=)");
  }
  if (next.kind == Tok::kLParen) {
    Fail(t, fmt::format("calls of '{}' are not supported: only pl.* and pld.* ops and "
                        "self.<function> can be called",
                        Echo(t.text)));
  }
  // The loop variable of a comprehension is used before its `for`.
  for (int k = 0, depth = 0; k < Lexer::kLookahead; ++k) {
    const Token& u = Peek(k);
    if (u.kind == Tok::kNewline || u.kind == Tok::kEof) break;
    if (u.kind == Tok::kLParen || u.kind == Tok::kLBracket || u.kind == Tok::kLBrace) ++depth;
    if (u.kind == Tok::kRParen || u.kind == Tok::kRBracket || u.kind == Tok::kRBrace) {
      if (--depth < 0) break;
    }
    if (depth == 0 && u.kind == Tok::kName && TextIs(u.text, "for")) {
      FailUnsupported(u, "a comprehension ([x for x in ...])");
    }
  }
  Fail(t, fmt::format("undefined variable '{}'", Echo(t.text)));
}

namespace {
// Binary operators by precedence, loosest first: 1 `or`, 2 `and`, (3 is `not`,
// a prefix operator), 4 comparisons, 5 `+ -`, 6 `* / // %`. 0: not a binary operator.
struct BinaryOpAt {
  int prec = 0;
  BinaryOp op{};
};
constexpr auto kBinaryOpOfTok = [] {
  std::array<BinaryOpAt, static_cast<size_t>(Tok::kGe) + 1> t{};
  auto set = [&](Tok k, int prec, BinaryOp op) { t[static_cast<size_t>(k)] = {prec, op}; };
  set(Tok::kLt, 4, BinaryOp::kLt);
  set(Tok::kLe, 4, BinaryOp::kLe);
  set(Tok::kEqEq, 4, BinaryOp::kEq);
  set(Tok::kNe, 4, BinaryOp::kNe);
  set(Tok::kGt, 4, BinaryOp::kGt);
  set(Tok::kGe, 4, BinaryOp::kGe);
  set(Tok::kPlus, 5, BinaryOp::kAdd);
  set(Tok::kMinus, 5, BinaryOp::kSub);
  set(Tok::kStar, 6, BinaryOp::kMul);
  set(Tok::kSlash, 6, BinaryOp::kDiv);
  set(Tok::kSlashSlash, 6, BinaryOp::kFloorDiv);
  set(Tok::kPercent, 6, BinaryOp::kFloorMod);
  return t;
}();
BinaryOpAt BinaryOpOf(const Token& t) {
  if (t.kind != Tok::kName) return kBinaryOpOfTok[static_cast<size_t>(t.kind)];
  if (TextIs(t.text, "or")) return {1, BinaryOp::kOr};
  if (TextIs(t.text, "and")) return {2, BinaryOp::kAnd};
  return {};
}
}  // namespace

// Precedence climbing over the levels above (one call per operand instead of one
// per level): binary operators are left-associative, `not` applies to a whole
// comparison, and comparisons do not chain. The trees, the depth accounting and
// the diagnostics are those of one recursive function per level.
ExprPtr Parser::ParseBinary(int min_prec) {
  ExprPtr l;
  if (min_prec <= 3 && AtName("not")) {
    Token op = Next();
    DepthGuard g(this, op);
    ExprPtr x = ParseBinary(3);
    l = MakeUnary(UnaryOp::kNot, std::move(x), op);
  } else {
    l = ParseUnary();
  }
  while (true) {
    const auto [prec, op] = BinaryOpOf(Peek());
    if (prec == 0 || prec < min_prec) return l;
    Token t = Next();
    const Token& after = Peek();
    if (Adjacent(t, after)) {
      if (after.kind == Tok::kAssign) {
        FailUnsupported(t, fmt::format("augmented assignment ('{}=')", t.text));
      }
      if (t.kind == Tok::kStar && after.kind == Tok::kStar) {
        FailUnsupported(t, "the power operator '**'");
      }
      if ((t.kind == Tok::kLt || t.kind == Tok::kGt) && after.kind == t.kind) {
        FailUnsupported(t, fmt::format("the shift operator '{0}{0}'", t.text));
      }
    }
    ExprPtr r = ParseBinary(prec + 1);
    l = MakeBinary(op, std::move(l), std::move(r), t);
    if (prec == 4 && BinaryOpOf(Peek()).prec == 4)
      Fail(Peek(), "chained comparisons are not supported; combine them with 'and'");
  }
}

ExprPtr Parser::ParseUnary() {
  if (At(Tok::kMinus)) {
    Token op = Next();
    // `-5` is the constant -5 (so -9223372036854775808 fits); `-(5)` is a negation.
    if (At(Tok::kInt)) {
      Token n = Next();
      return Int(ParseIntToken(n, true), DataType::kInt64, SpanOf(op));
    }
    if (At(Tok::kFloat)) {
      Token n = Next();
      return Float(-ParseFloatToken(n), DataType::kFP32, SpanOf(op));
    }
    DepthGuard g(this, op);
    ExprPtr x = ParseUnary();
    return MakeUnary(UnaryOp::kNeg, x, op);
  }
  if (At(Tok::kPlus)) Fail(Peek(), "unary '+' is not supported");
  return ParsePrimary();
}

int64_t Parser::ParseIntToken(const Token& t, bool negative) {
  const uint64_t limit = negative ? (uint64_t{1} << 63) : static_cast<uint64_t>(INT64_MAX);
  uint64_t v = 0;
  const auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
  if (r.ec != std::errc() || v > limit) {
    Fail(t, fmt::format("integer literal {}{} does not fit in 64 bits (int64 range)",
                        negative ? "-" : "", Echo(t.text)));
  }
  return static_cast<int64_t>(negative ? 0 - v : v);
}

double Parser::ParseFloatToken(const Token& t) {
  double v = 0;
  auto r = std::from_chars(t.text.data(), t.text.data() + t.text.size(), v);
  if (r.ec == std::errc::result_out_of_range) {
    Fail(t, fmt::format("float literal '{}' is out of range", Echo(t.text)));
  }
  if (r.ec != std::errc() || r.ptr != t.text.data() + t.text.size()) {
    Fail(t, fmt::format("invalid float literal '{}'", Echo(t.text)));
  }
  return v;
}

Token Parser::ExpectString(std::string_view what) {
  if (!At(Tok::kString)) FailExpecting(fmt::format("a string ({})", what));
  return Next();
}

namespace {
// A string token's value without a copy when it holds no escapes (op and window
// names nearly always); decoded into *storage otherwise.
std::string_view StringValue(std::string_view raw, std::string* storage) {
  const std::string_view body = Lexer::StringBody(raw);
  if (body.find('\\') == std::string_view::npos) return body;
  *storage = Lexer::DecodeString(raw);
  return *storage;
}
}  // namespace

Path Parser::ParsePath() {
  Path p;
  p.first = Peek();
  Token t = ExpectIdent("a name");
  p.parts[p.n++] = t.text;
  while (At(Tok::kDot)) {
    Next();
    if (p.n == Path::kMax)
      Fail(Peek(), fmt::format("dotted name longer than {} parts", Path::kMax));
    if (!At(Tok::kName)) FailExpecting("a name after '.'");
    p.parts[p.n++] = Next().text;
  }
  return p;
}

size_t Parser::ParseExprsOntoScratch(Tok close) {
  const size_t base = expr_scratch_.size();
  ParseList(close, [&] { expr_scratch_.push_back(ParseExpr()); });
  return base;
}

std::vector<ExprPtr> Parser::ParseExprList(Tok close) {
  return TakeScratch(&expr_scratch_, ParseExprsOntoScratch(close));
}

ExprPtr Parser::ParsePrimary() {
  const Token t = Peek();
  switch (t.kind) {
    case Tok::kInt:
      Next();
      return Int(ParseIntToken(t, false), DataType::kInt64, SpanOf(t));
    case Tok::kFloat:
      Next();
      return Float(ParseFloatToken(t), DataType::kFP32, SpanOf(t));
    case Tok::kString:
      Next();
      if (At(Tok::kString)) FailUnsupported(Peek(), "implicit concatenation of string literals");
      return Str(Lexer::DecodeString(t.text), SpanOf(t));
    case Tok::kLParen: {
      // `(e)` is e; `()`, `(e,)`, `(a, b)` are tuple values.
      Next();
      DepthGuard g(this, t);
      if (Accept(Tok::kRParen))
        return WithSpan(MakeNode<MakeTuple>(NodeList<ExprPtr>{}, true), SpanOf(t));
      ExprPtr e = ParseExpr();
      if (!Accept(Tok::kComma)) {
        Expect(Tok::kRParen);
        return e;
      }
      const size_t base = expr_scratch_.size();
      expr_scratch_.push_back(std::move(e));
      ParseExprsOntoScratch(Tok::kRParen);
      return WithSpan(MakeNode<MakeTuple>(ExprsFrom(base), true), SpanOf(t));
    }
    case Tok::kLBracket: {
      Next();
      DepthGuard g(this, t);
      return Tuple(ExprsFrom(ParseExprsOntoScratch(Tok::kRBracket)), SpanOf(t));
    }
    case Tok::kName:
      break;
    case Tok::kLBrace:
      FailUnsupported(t, "a dict or set literal as a value");
    case Tok::kStar:
      FailUnsupported(t, "a starred expression (*x, **x)");
    case Tok::kDot:
      if (At(Tok::kDot, 1) && At(Tok::kDot, 2)) FailUnsupported(t, "'...' (Ellipsis)");
      [[fallthrough]];
    default:
      FailExpecting("an expression");
  }
  if (TextIs(t.text, "True") || TextIs(t.text, "False")) {
    Next();
    return Bool(TextIs(t.text, "True"), SpanOf(t));
  }
  if (TextIs(t.text, "self")) return ParsePostfix(ParseDispatch());
  if (TextIs(t.text, "pl") || TextIs(t.text, "pld")) {
    if (AtUserAlloc()) {
      Fail(t,
           "pld.alloc_window_buffer(...) must be assigned directly to a variable (the alloc is "
           "named after it)");
    }
    Path p = ParsePath();
    if (!At(Tok::kLParen)) {
      // A data type or enum member used as a value (`pl.cast(x, pl.INDEX)`): a
      // GlobalVar of the qualified name. Lower-case paths stay errors, so a
      // forgotten call is still reported.
      const bool has_upper = std::any_of(p.parts + 1, p.parts + p.n, [](std::string_view part) {
        return !part.empty() && part[0] >= 'A' && part[0] <= 'Z';
      });
      if (!has_upper) Fail(p.first, fmt::format("'{}' is not a value here", Echo(p.Join())));
      return WithSpan(MakeNode<GlobalVar>(p.Join()), SpanOf(p.first));
    }
    return ParsePostfix(ParseDslCall(p));
  }
  if (IsKeyword(t.text)) {
    if (TextIs(t.text, "lambda")) FailUnsupported(t, "a lambda expression");
    if (TextIs(t.text, "None")) FailUnsupported(t, "None as a value");
    if (TextIs(t.text, "yield") || TextIs(t.text, "await")) {
      FailUnsupported(t, fmt::format("a '{}' expression", t.text));
    }
    Fail(t, fmt::format("expected an expression, got '{}'", Echo(t.text)));
  }
  Next();
  const auto found = fs_ ? fs_->vars.find(t.text) : decltype(fs_->vars)::iterator();
  if (!fs_ || found == fs_->vars.end()) FailUndefinedName(t);
  if (At(Tok::kLParen)) Fail(Peek(), fmt::format("'{}' is not callable", Echo(t.text)));
  if (At(Tok::kDot))
    Fail(Peek(), fmt::format("attribute access on variable '{}' is not supported", Echo(t.text)));
  return ParsePostfix(found->second);
}

// `x[i]`, `x[0:8, r]`, `x[a][b]`: a Subscript of unknown type (element and slice
// types are the kernel's business, not the pass's).
ExprPtr Parser::ParsePostfix(ExprPtr base) {
  while (At(Tok::kLBracket)) {
    Token lb = Next();
    DepthGuard g(this, lb);
    std::vector<ExprPtr> idx;
    ParseList(Tok::kRBracket, [&] { idx.push_back(ParseIndex()); });
    if (idx.empty()) Fail(lb, "empty subscript");
    base = WithSpan(MakeNode<Subscript>(std::move(base), std::move(idx), UnknownType::Get()),
                    SpanOf(lb));
  }
  return base;
}

// One subscript position: an expression or a slice `start:stop:step` (each part optional).
ExprPtr Parser::ParseIndex() {
  Token at = Peek();
  auto part_ends = [&] { return At(Tok::kColon) || At(Tok::kComma) || At(Tok::kRBracket); };
  ExprPtr start = At(Tok::kColon) ? nullptr : ParseExpr();
  if (!At(Tok::kColon)) return start;
  Next();
  ExprPtr stop = part_ends() ? nullptr : ParseExpr();
  ExprPtr step;
  if (Accept(Tok::kColon)) step = part_ends() ? nullptr : ParseExpr();
  if (At(Tok::kColon)) Fail(Peek(), "a slice has at most three parts (start:stop:step)");
  return WithSpan(MakeNode<Slice>(std::move(start), std::move(stop), std::move(step)), SpanOf(at));
}

Parser::ScratchArgs Parser::ParseCallArgsOntoScratch(bool kwargs_allowed,
                                                     std::vector<Token>* kwarg_tokens) {
  Expect(Tok::kLParen);
  const ScratchArgs at{expr_scratch_.size(), kwarg_scratch_.size()};
  auto keyword = [&](const Token& key) {
    if (!kwargs_allowed) Fail(key, "keyword arguments are not allowed here");
    for (size_t i = at.kwargs; i < kwarg_scratch_.size(); ++i) {
      if (kwarg_scratch_[i].first == key.text)
        Fail(key, fmt::format("keyword argument '{}' repeated", Echo(key.text)));
    }
    if (kwarg_tokens) kwarg_tokens->push_back(key);
    kwarg_scratch_.emplace_back(std::string(key.text), ParseAttrValue());
  };
  ParseArgs(keyword, [&] { expr_scratch_.push_back(ParseExpr()); });
  return at;
}

void Parser::ParseCallArgs(std::vector<ExprPtr>* args, KwargList* kwargs) {
  const ScratchArgs at = ParseCallArgsOntoScratch(kwargs != nullptr, nullptr);
  if (kwargs) *kwargs = TakeScratch(&kwarg_scratch_, at.kwargs);
  *args = TakeScratch(&expr_scratch_, at.args);
}

// Keyword values keep literals as literals (docs/ir-conventions.md).
AttrValue Parser::ParseAttrValue() {
  auto delim = [&](int k) {
    Tok d = Peek(k).kind;
    return d == Tok::kComma || d == Tok::kRParen || d == Tok::kRBrace;
  };
  const Token& t = Peek();
  // A number, negative or not.
  const bool neg = t.kind == Tok::kMinus;
  if ((At(Tok::kInt, neg) || At(Tok::kFloat, neg)) && delim(neg + 1)) {
    if (neg) Next();
    const Token n = Next();
    if (n.kind == Tok::kInt) return ParseIntToken(n, neg);
    return neg ? -ParseFloatToken(n) : ParseFloatToken(n);
  }
  if (t.kind == Tok::kString && delim(1)) return Lexer::DecodeString(Next().text);
  if (t.kind == Tok::kName && (TextIs(t.text, "True") || TextIs(t.text, "False")) && delim(1)) {
    return TextIs(Next().text, "True");
  }
  if (t.kind == Tok::kName && (TextIs(t.text, "pl") || TextIs(t.text, "pld")) && At(Tok::kDot, 1)) {
    // A dotted name not followed by a call: a data type or an enum value.
    int k = 1;
    while (At(Tok::kDot, k) && At(Tok::kName, k + 1) && k + 2 < Lexer::kLookahead) k += 2;
    if (delim(k)) {
      Path p = ParsePath();
      if (p.n == 2 && TextIs(p.parts[0], "pl")) {
        if (auto dt = DataTypeFromName(p.parts[1])) return *dt;
      }
      return EnumAttr{p.Join()};
    }
  }
  return ParseExpr();
}

template <typename Value>
std::vector<std::pair<std::string, Value>> Parser::ParseStringKeyedDict(
    Value (Parser::*parse_value)()) {
  Token open = Expect(Tok::kLBrace);
  DepthGuard g(this, open);
  std::vector<std::pair<std::string, Value>> out;
  ParseList(Tok::kRBrace, [&] {
    Token kt = Peek();
    std::string key = ParseStringLit("a dictionary key");
    for (const auto& [k, v] : out) {
      if (k == key) Fail(kt, fmt::format("dictionary key '{}' repeated", Echo(key)));
    }
    Expect(Tok::kColon);
    out.emplace_back(std::move(key), (this->*parse_value)());
  });
  return out;
}

ExprPtr Parser::ParseDispatch() {
  Token self = Next();
  Expect(Tok::kDot, "after 'self'");
  Token fname = ExpectIdent("a function name after 'self.'");
  if (!At(Tok::kLParen))
    Fail(Peek(), fmt::format("expected a call of 'self.{}'", Echo(fname.text)));
  auto found = sig_by_name_.find(fname.text);
  // Only a body on the main lexer can read ahead: a signature may call functions
  // defined before it.
  if (found == sig_by_name_.end() && !sigs_known_ && lex_ == &main_ && block_depth_ > 0) {
    ReadSignaturesAhead();
    found = sig_by_name_.find(fname.text);
  }
  if (found == sig_by_name_.end())
    Fail(fname, fmt::format("unknown function '{}'", Echo(fname.text)));
  FuncSig* callee = found->second;
  Expect(Tok::kLParen);
  ExprPtr device;
  const size_t base = expr_scratch_.size();
  auto keyword = [&](const Token& key) {
    if (!TextIs(key.text, "device")) {
      Fail(key,
           fmt::format(
               "unexpected keyword argument '{}' in a call of '{}' (only device= is supported)",
               Echo(key.text), Echo(fname.text)));
    }
    if (device) Fail(key, "keyword argument 'device' repeated");
    device = ParseExpr();
  };
  ParseArgs(keyword, [&] { expr_scratch_.push_back(ParseExpr()); });
  const size_t arg_count = expr_scratch_.size() - base;
  if (arg_count != callee->param_count) {
    Fail(fname, fmt::format("'{}' takes {} argument{}, got {}", Echo(fname.text),
                            callee->param_count, callee->param_count == 1 ? "" : "s", arg_count));
  }
  const auto& rets = ReturnTypesOf(callee, fname);
  TypePtr type = rets.empty()       ? TypePtr(UnknownType::Get())
                 : rets.size() == 1 ? rets[0]
                                    : TypePtr(MakeNode<TupleType>(rets));
  return MakeFunctionCall(std::string(fname.text), ExprsFrom(base), device, type, SpanOf(self));
}

// PyPTO's parser takes window buffers and the world size in HOST-level functions
// only: both are resources of the host's orchestration, which the device side
// cannot lower.
void Parser::RequireHostLevel(const Token& at, std::string_view op) {
  const FuncSig* sig = fs_ ? fs_->sig : nullptr;
  if (!sig) return;
  if (sig->level == Level::kHost && device_scopes_ > 0) {
    Fail(at, fmt::format("{} can only be called in a HOST-level function, outside device-side "
                         "scopes (pl.at(level=pl.Level.CORE_GROUP), pl.spmd, pl.incore)",
                         op));
  }
  if (sig->level == Level::kHost) return;
  Fail(at, fmt::format("{} can only be called in a HOST-level function (level=pl.Level.HOST); "
                       "function '{}' is {}",
                       op, Echo(sig->name),
                       sig->level ? fmt::format("at level {}", LevelName(*sig->level))
                                  : std::string("declared without a level")));
}

CallPtr Parser::ParseUserAlloc(std::string_view lhs) {
  Token at = Peek();
  RequireHostLevel(at, "pld.alloc_window_buffer");
  ParsePath();
  std::vector<Token> keys;
  const ScratchArgs a = ParseCallArgsOntoScratch(/*kwargs_allowed=*/true, &keys);
  for (size_t i = 0; i < keys.size(); ++i) {
    if (kwarg_scratch_[a.kwargs + i].first == "name") {
      Fail(keys[i],
           "an explicit name= is not allowed in pld.alloc_window_buffer: the alloc is named after "
           "the variable it is assigned to");
    }
  }
  if (!user_alloc_names_.insert(lhs).second) {
    Fail(at, fmt::format("duplicate alloc name '{}': alloc names must be unique across the program",
                         Echo(lhs)));
  }
  kwarg_scratch_.emplace_back("name", std::string(lhs));
  return MakeOpCall(AllocInfo(), a, SpanOf(at));
}

ExprPtr Parser::ParseDslCall(const Path& p) {
  const Token& at = p.first;
  Span sp = SpanOf(at);
  if (p.n == 3 && TextIs(p.parts[0], "pl") && TextIs(p.parts[2], "get_byte")) {
    auto dt = DataTypeFromName(p.parts[1]);
    if (!dt) Fail(at, fmt::format("unknown data type 'pl.{}'", Echo(p.parts[1])));
    Expect(Tok::kLParen);
    Expect(Tok::kRParen, "(get_byte takes no arguments)");
    return Int(DataTypeBytes(*dt), DataType::kInt64, sp);
  }
  if (p.Is("pl", "const")) return ParseConst(at);
  if (p.Is("pl", "min") || p.Is("pl", "max")) {
    std::vector<ExprPtr> args;
    ParseCallArgs(&args, nullptr);
    if (args.size() != 2)
      Fail(at, fmt::format("{} takes 2 arguments, got {}", Echo(p.Join()), args.size()));
    return MakeBinary(TextIs(p.parts[1], "min") ? BinaryOp::kMin : BinaryOp::kMax, args[0], args[1],
                      at);
  }
  if (p.Is("pl", "_dump", "call")) return ParseDumpCall(at);
  if (p.Is("pl", "_dump", "window_ref")) return ParseWindowRefExpr();
  if (p.Is("pl", "_dump", "alloc_window_buffer")) {
    const ScratchArgs a = ParseCallArgsOntoScratch(/*kwargs_allowed=*/true, nullptr);
    const std::span<const Kwarg> kwargs(kwarg_scratch_.data() + a.kwargs,
                                        kwarg_scratch_.size() - a.kwargs);
    if (!FindKwarg(kwargs, "name")) Fail(at, "pl._dump.alloc_window_buffer needs name=\"...\"");
    return MakeOpCall(AllocInfo(), a, sp);
  }
  if (p.Is("pl", "dynamic")) {
    Fail(at,
         "pl.dynamic(...) is only allowed at module level (NAME = pl.dynamic(\"NAME\")) or as a "
         "whole dimension of a type's shape");
  }
  if (p.Is("pl", "yield_")) {
    Fail(at,
         "pl.yield_ is only allowed as a statement directly in the body of a loop with "
         "init_values");
  }
  if (p.n >= 2 && TextIs(p.parts[1], "_dump")) {
    Fail(at, fmt::format("unknown pl._dump form '{}'", Echo(p.Join())));
  }
  const ScratchArgs a = ParseCallArgsOntoScratch(/*kwargs_allowed=*/true, nullptr);
  std::string joined;
  std::string_view name;
  if (p.Is("pld", "window")) {
    name = ops::kWindow;
  } else if (p.Is("pld", "world_size")) {
    name = ops::kWorldSize;
  } else {
    joined = p.Join();
    name = joined;
  }
  if (name == ops::kWorldSize) RequireHostLevel(at, "pld.world_size");
  const OpInfo* info = OpRegistry::Get().Find(name);
  if (!info) {
    // An op the registry does not model: kept as written, result type unknown
    // (ParseAssign gives it the annotation's type).
    return WithSpan(MakeNode<Call>(OpRegistry::Get().GetOp(name), ExprsFrom(a.args),
                                   KwargsFrom(a.kwargs), ExprAttrList{}, UnknownType::Get()),
                    sp);
  }
  return MakeOpCall(info, a, sp);
}

ExprPtr Parser::ParseConst(const Token& at) {
  Expect(Tok::kLParen);
  bool neg = Accept(Tok::kMinus);
  Token v = Next();
  Expect(Tok::kComma, "(pl.const(value, pl.DTYPE))");
  DataType dt = ExpectDType();
  Expect(Tok::kRParen);
  Span sp = SpanOf(at);
  if (v.kind == Tok::kInt) {
    int64_t i = ParseIntToken(v, neg);
    if (IsFloat(dt)) return Float(static_cast<double>(i), dt, sp);
    if (dt == DataType::kBool) Fail(v, "pl.const of pl.BOOL takes True or False");
    return Int(i, dt, sp);
  }
  if (v.kind == Tok::kFloat) {
    double d = ParseFloatToken(v);
    return Float(neg ? -d : d, dt, sp);
  }
  if (!neg && v.kind == Tok::kName && (TextIs(v.text, "True") || TextIs(v.text, "False"))) {
    if (dt != DataType::kBool) Fail(v, "True/False constants must have dtype pl.BOOL");
    return Bool(TextIs(v.text, "True"), sp);
  }
  if (!neg && v.kind == Tok::kString) {
    std::string s = Lexer::DecodeString(v.text);
    double d;
    if (s == "inf") {
      d = std::numeric_limits<double>::infinity();
    } else if (s == "-inf") {
      d = -std::numeric_limits<double>::infinity();
    } else if (s == "nan") {
      d = std::numeric_limits<double>::quiet_NaN();
    } else {
      Fail(v, "pl.const string values are \"inf\", \"-inf\" or \"nan\"");
    }
    return Float(d, dt, sp);
  }
  Fail(v, "pl.const expects a number or True/False as its first argument");
}

ExprPtr Parser::ParseWindowRefExpr() {
  Expect(Tok::kLParen);
  Token v = Peek();
  WindowBufferPtr wb;
  if (v.kind == Tok::kInt) {
    Next();
    wb = LookupWindow(v, true, {}, ParseIntToken(v, false));
  } else if (v.kind == Tok::kString) {
    Next();
    std::string storage;
    wb = LookupWindow(v, false, StringValue(v.text, &storage), 0);
  } else {
    Fail(v, "window_ref expects a window name string or a declaration index");
  }
  Expect(Tok::kRParen);
  return wb;
}

ExprPtr Parser::ParseDumpCall(const Token& at) {
  Expect(Tok::kLParen);
  Token op_tok = Peek();
  std::string op_storage;
  const std::string_view op = StringValue(ExpectString("the op name").text, &op_storage);
  Expect(Tok::kComma);
  Token lb = Expect(Tok::kLBracket, "(the argument list)");
  size_t args;  // on expr_scratch_ from here until the call is built
  {
    DepthGuard g(this, lb);
    args = ParseExprsOntoScratch(Tok::kRBracket);
  }
  Expect(Tok::kComma);
  TypePtr type = ParseType();
  KwargList kwargs;
  ExprAttrList attrs;
  while (Accept(Tok::kComma)) {
    if (At(Tok::kRParen)) break;
    Token key = ExpectIdent("kwargs= or attrs=");
    Expect(Tok::kAssign);
    if (TextIs(key.text, "kwargs")) {
      kwargs = ParseStringKeyedDict(&Parser::ParseAttrValue);
    } else if (TextIs(key.text, "attrs")) {
      attrs = ParseStringKeyedDict(&Parser::ParseExpr);
    } else {
      Fail(key, fmt::format("unknown pl._dump.call argument '{}'", Echo(key.text)));
    }
  }
  Expect(Tok::kRParen);
  Span sp = SpanOf(at);
  if (op.substr(0, 5) == "self.") {
    auto gv = WithSpan(MakeNode<GlobalVar>(std::string(op.substr(5))), sp);
    return WithSpan(MakeNode<Call>(gv, ExprsFrom(args), std::move(kwargs), std::move(attrs), type),
                    sp);
  }
  if (op.empty()) Fail(op_tok, "empty op name");
  return MakeOpCallWithType(op, ExprsFrom(args), std::move(kwargs), type, sp, std::move(attrs));
}

// ---------------------------------------------------------------------------
// Types

std::optional<DataType> Parser::ParseDTypeName() {
  if (!(AtName("pl") && At(Tok::kDot, 1) && At(Tok::kName, 2))) return std::nullopt;
  auto dt = DataTypeFromName(Peek(2).text);
  if (!dt) return std::nullopt;
  Next();
  Next();
  Next();
  return dt;
}

DataType Parser::ExpectDType() {
  Token t = Peek();
  auto dt = ParseDTypeName();
  if (!dt) {
    if (t.kind == Tok::kName && TextIs(t.text, "pl") && At(Tok::kDot, 1) && At(Tok::kName, 2)) {
      Fail(Peek(2), fmt::format("unknown data type 'pl.{}'", Echo(Peek(2).text)));
    }
    FailExpecting("a data type such as pl.FP32");
  }
  return *dt;
}

size_t Parser::ParseShapeOntoScratch() {
  Token open = Expect(Tok::kLBracket, "(a shape list such as [256])");
  DepthGuard g(this, open);
  const size_t base = expr_scratch_.size();
  ParseList(Tok::kRBracket, [&] {
    expr_scratch_.push_back(AtInlineDynamicDim() ? ParseInlineDynamicDim() : ParseExpr());
  });
  return base;
}

// `pl.dynamic("NR")` as a whole dimension of a type's shape: the program's
// dimension NR (module-level, or written inline elsewhere), made on first use.
ExprPtr Parser::ParseInlineDynamicDim() {
  for (int i = 0; i < 4; ++i) Next();
  const Token str = Next();
  Next();
  const std::string name = Lexer::DecodeString(str.text);
  const bool identifier = !name.empty() && !std::isdigit(static_cast<unsigned char>(name[0])) &&
                          std::all_of(name.begin(), name.end(), [](char c) {
                            return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                          });
  if (!identifier) {
    Fail(str, fmt::format("pl.dynamic expects an identifier as the dimension's name, got \"{}\"",
                          Echo(name)));
  }
  if (auto it = dyn_by_name_.find(name); it != dyn_by_name_.end()) return it->second;
  auto [it, fresh] = inline_dims_.try_emplace(name);
  if (fresh) it->second = MakeVar(name, ScalarTy(DataType::kIndex), SpanOf(str));
  return it->second;
}

TypePtr Parser::ParseType() {
  Token t = Peek();
  DepthGuard g(this, t);
  if (t.kind != Tok::kName || (!TextIs(t.text, "pl") && !TextIs(t.text, "pld"))) {
    FailExpecting("a type such as pl.Tensor[[256], pl.FP32]");
  }
  if (auto dt = ParseDTypeName()) return ScalarTy(*dt);
  Path p = ParsePath();
  // The context is formatted only when the bracket is missing (this runs for
  // every annotation).
  auto open = [&] {
    if (!At(Tok::kLBracket)) Expect(Tok::kLBracket, fmt::format("after '{}'", Echo(p.Join())));
    Next();
  };
  if (p.Is("pl", "Ptr")) return PtrType::Get();
  if (p.Is("pl", "_dump", "Unknown")) return UnknownType::Get();
  if (p.Is("pl", "Scalar")) {
    open();
    DataType dt = ExpectDType();
    Expect(Tok::kRBracket);
    return ScalarTy(dt);
  }
  const bool distributed = p.Is("pld", "DistributedTensor");
  if (p.Is("pl", "Tensor") || p.Is("pl", "Tile") || distributed) {
    open();
    const size_t shape = ParseShapeOntoScratch();
    Expect(Tok::kComma);
    DataType dt = ExpectDType();
    WindowBufferPtr wb;
    if (Accept(Tok::kComma) && distributed && !At(Tok::kRBracket)) {
      if (At(Tok::kString)) {
        Next();  // the legacy "window_buffer=<name>" hint: accepted, means nothing
      } else {
        Path r = ParsePath();
        if (!r.Is("pl", "_dump", "window_ref")) {
          Fail(r.first,
               fmt::format("expected pl._dump.window_ref(...) as the third argument, got '{}'",
                           Echo(r.Join())));
        }
        ExprPtr w = ParseWindowRefExpr();
        wb = PtrCast<const WindowBuffer>(w);
      }
      Accept(Tok::kComma);
    }
    Expect(Tok::kRBracket);
    if (distributed) return DistTensorTy(ExprsFrom(shape), dt, wb);
    if (TextIs(p.parts[1], "Tile")) return MakeNode<TileType>(ExprsFrom(shape), dt);
    return TensorTy(ExprsFrom(shape), dt);
  }
  if (p.Is("pl", "Tuple")) {
    open();
    std::vector<TypePtr> types;
    if (At(Tok::kLParen) && At(Tok::kRParen, 1) && At(Tok::kRBracket, 2)) {
      Next();
      Next();  // `pl.Tuple[()]`: the empty tuple type
    }
    ParseList(Tok::kRBracket, [&] { types.push_back(ParseType()); });
    return MakeNode<TupleType>(std::move(types));
  }
  if (p.Is("pl", "Out") || p.Is("pl", "InOut")) {
    Fail(p.first, fmt::format("'{}[...]' is only allowed on a function parameter", Echo(p.Join())));
  }
  Fail(p.first, fmt::format("unknown type '{}'", Echo(p.Join())));
}

}  // namespace

namespace {

template <typename T>
bool TensorsAgree(const T& x, const T& y) {
  return x.dtype == y.dtype && ShapesEqual(x.shape, y.shape) && DimsEqual(x.memref, y.memref) &&
         DimsEqual(x.tensor_view, y.tensor_view);
}

}  // namespace

// Whether an annotation can be the type of a value of type `value`: false only
// for a contradiction a reader of the text can see.
// - Unknown on either side, at any depth, agrees with anything: it is what the
//   parser gives results of opaque calls (and what `pl._dump.Unknown` spells),
//   and annotating such a value is how a program states its type.
// - A scalar annotation on a scalar value of another dtype is a conversion, as it
//   is on a constant (`i: pl.Scalar[pl.INDEX] = 0`).
// - Window references are not compared: they are materialized state, printed
//   only by the tools, and a view whose back-reference disagrees with its
//   definition's is the pass bug the verifier reports (CDS-V006); the text must
//   carry it to the verifier rather than stop at the parser.
// Otherwise kinds, dtypes and shapes must match.
bool AnnotationAgrees(const TypePtr& ann, const TypePtr& value) {
  if (ann == value || !ann || !value) return true;
  if (ann->kind() == NodeKind::kUnknownType || value->kind() == NodeKind::kUnknownType) return true;
  if (ann->kind() != value->kind()) return false;
  switch (ann->kind()) {
    case NodeKind::kTensorType:
      return TensorsAgree(static_cast<const TensorType&>(*ann),
                          static_cast<const TensorType&>(*value));
    case NodeKind::kDistributedTensorType:
      return TensorsAgree(static_cast<const DistributedTensorType&>(*ann),
                          static_cast<const DistributedTensorType&>(*value));
    case NodeKind::kTileType: {
      const auto& x = static_cast<const TileType&>(*ann);
      const auto& y = static_cast<const TileType&>(*value);
      return x.dtype == y.dtype && ShapesEqual(x.shape, y.shape);
    }
    case NodeKind::kTupleType: {
      const auto& x = static_cast<const TupleType&>(*ann);
      const auto& y = static_cast<const TupleType&>(*value);
      return std::equal(x.types.begin(), x.types.end(), y.types.begin(), y.types.end(),
                        AnnotationAgrees);
    }
    default:  // Scalar, Ptr
      return true;
  }
}

ProgramPtr ParseProgram(std::string_view text, const ParseOptions& options) {
  if (options.max_nesting_depth < 1 || options.max_nesting_depth > kMaxNestingDepthLimit) {
    throw ValueError(fmt::format("max_nesting_depth must be between 1 and {}, got {}",
                                 kMaxNestingDepthLimit, options.max_nesting_depth),
                     Span{InternFileName(options.filename), 1 + options.line_offset, 1});
  }
  if (text.size() > options.max_input_bytes) {
    const FileId file = InternFileName(options.filename);
    throw ValueError(
        fmt::format("input is {} bytes, more than the limit of {} bytes (max_input_bytes)",
                    text.size(), options.max_input_bytes),
        Span{file, 1 + options.line_offset, 1});
  }
  return Parser(text, options).Run();
}

}  // namespace cds::ir
