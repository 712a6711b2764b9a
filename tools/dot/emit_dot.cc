#include "tools/dot/emit_dot.h"

#include <map>
#include <optional>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "ir/op_registry.h"
#include "ir/printer.h"
#include "ir/walk.h"
#include "pass/orchestrators.h"
#include "pass/window_buffer_size.h"
#include "verifier/host_analysis.h"

namespace cds::dot {
namespace {

using namespace cds::ir;

std::string Escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

bool IsCollective(const std::string& op) {
  return op == ops::kAllReduce || op == ops::kBroadcast || op == ops::kReduceScatter ||
         op == ops::kBarrier || op == ops::kAllGather || op == ops::kAllToAll ||
         op == ops::kAllToAllV;
}

// Argument roles as DESIGN §2 names them, for edge labels.
std::string ArgRole(const std::string& op, size_t i) {
  static const std::map<std::string_view, std::vector<std::string_view>> roles = {
      {ops::kAllReduce, {"data", "signal"}},
      {ops::kBroadcast, {"data", "signal"}},
      {ops::kReduceScatter, {"data", "signal"}},
      {ops::kBarrier, {"signal"}},
      {ops::kAllGather, {"input", "target", "signal"}},
      {ops::kAllToAll, {"input", "target", "signal"}},
      {ops::kAllToAllV, {"input", "target", "signal", "send_counts", "recv_counts"}},
  };
  auto it = roles.find(op);
  if (it != roles.end() && i < it->second.size()) return std::string(it->second[i]);
  return fmt::format("arg {}", i);
}

std::string ShortOp(const std::string& op) {
  size_t dot = op.rfind('.');
  return dot == std::string::npos ? op : op.substr(dot + 1);
}

std::string TypeLabel(const TypePtr& t) {
  if (!t || t->kind() != NodeKind::kDistributedTensorType) return "";
  const auto& d = static_cast<const DistributedTensorType&>(*t);
  std::string shape;
  for (size_t i = 0; i < d.shape.size(); ++i) shape += (i ? ", " : "") + PrintNode(d.shape[i]);
  return fmt::format("[{}] {}", shape, DataTypeName(d.dtype));
}

const WindowBuffer* BackRef(const TypePtr& t) {
  if (!t || t->kind() != NodeKind::kDistributedTensorType) return nullptr;
  return static_cast<const DistributedTensorType&>(*t).window_buffer.get();
}

const Call* AsCall(const ExprPtr& e) {
  return e && e->kind() == NodeKind::kCall ? static_cast<const Call*>(e.get()) : nullptr;
}

// One host function's picture: nodes are collected during one walk, then written
// out grouped by scope.
class FunctionPicture {
 public:
  FunctionPicture(const Program& program, const Function& fn, size_t index)
      : program_(program), fn_(fn), prefix_(fmt::format("f{}_", index)) {}

  bool Build() {
    Walk(fn_.body);
    return !allocs_.empty() || !scopes_.empty();
  }

  void Write(std::string& out) const {
    out += fmt::format("  subgraph cluster_{}fn {{\n", prefix_);
    out += fmt::format("    label=\"{}\"; style=\"rounded\"; color=\"#555555\"; fontsize=14;\n",
                       Escape(fmt::format("def {}  ({})", fn_.name, Role())));
    std::unordered_map<const WindowBuffer*, size_t> scope_of;
    for (size_t s = 0; s < scopes_.size(); ++s) {
      for (const auto& wb : scopes_[s]->slots) scope_of.emplace(wb.get(), s);
    }
    // Allocs and views go into the cluster of the scope that holds their WindowBuffer.
    std::vector<std::string> in_scope(scopes_.size());
    std::string outside;
    for (const auto& n : nodes_) {
      auto it = n.wb ? scope_of.find(n.wb) : scope_of.end();
      if (it == scope_of.end()) {
        outside += "    " + n.text + "\n";
      } else {
        in_scope[it->second] += "      " + n.text + "\n";
      }
    }
    for (size_t s = 0; s < scopes_.size(); ++s) {
      const auto* scope = scopes_[s];
      out += fmt::format("    subgraph cluster_{}s{} {{\n", prefix_, s);
      out += fmt::format(
          "      label=\"{}\"; style=\"filled,rounded\"; fillcolor=\"{}\"; color=\"#4a6fa5\";\n",
          Escape(fmt::format("{}  devices={}", scope->name_hint, scope->devices.ToString())),
          kScopeColors[s % std::size(kScopeColors)]);
      out += in_scope[s];
      out += "    }\n";
    }
    out += outside;
    for (const auto& e : edges_) out += "    " + e + "\n";
    out += "  }\n";
  }

 private:
  static constexpr const char* kScopeColors[] = {"#e8f0fb", "#eaf6ea", "#fbf0e4", "#f3e8fb"};

  struct Item {
    std::string text;
    const WindowBuffer* wb = nullptr;  // the scope it belongs to, through its WindowBuffer
  };

  std::string Role() const {
    std::optional<Level> effective = pass::LevelOf(fn_);
    std::string level = effective ? std::string(LevelName(*effective)) : "?";
    return fmt::format(
        "{} {}", level,
        fn_.role ? std::string(RoleName(*fn_.role)) : std::string(FunctionTypeName(fn_.func_type)));
  }

  std::string NewId(char kind) { return fmt::format("{}{}{}", prefix_, kind, counter_++); }

  // Statements are walked through their field tables (ir/walk.h); what differs per
  // kind is only what a statement adds to the picture: a scope opens a cluster, a
  // loop binds its variable's device range, an assignment may define an alloc or
  // a view, and a dispatch or collective called at the top of any other statement
  // (an evaluation, a return, an unpacking) becomes a node.
  void Walk(const StmtPtr& s) {
    if (!s) return;
    if (s->kind() == NodeKind::kAssignStmt) {
      Assign(static_cast<const AssignStmt&>(*s));
      return;
    }
    ForEachStmtOperand(*s, [&](const ExprPtr& e) { CallNode(AsCall(e)); });
    const Var* loop_var = nullptr;
    if (s->kind() == NodeKind::kCommDomainScopeStmt) {
      scopes_.push_back(static_cast<const CommDomainScopeStmt*>(s.get()));
    } else if (s->kind() == NodeKind::kForStmt) {
      const auto& loop = static_cast<const ForStmt&>(*s);
      loop_var = loop.loop_var.get();
      loops_[loop_var] = verify::LoopDescriptor(loop, bounds_);
    }
    ForEachSubStmt(*s, [&](const StmtPtr& child) { Walk(child); });
    if (loop_var) loops_.erase(loop_var);
  }

  void Assign(const AssignStmt& a) {
    if (!a.var || !a.value) return;
    const Call* call = AsCall(a.value);
    if (call && call->OpName() == ops::kAllocWindowBuffer) {
      std::string name = a.var->name_hint;
      if (const AttrValue* v = FindKwarg(call->kwargs, "name")) {
        if (const auto* s = std::get_if<std::string>(v)) name = *s;
      }
      ExprPtr size = pass::WindowBufferSizeBytes(*call);
      std::string id = NewId('a');
      var_ids_[a.var.get()] = id;
      allocs_.push_back(id);
      nodes_.push_back(
          {fmt::format("{} [shape=box, style=\"filled\", fillcolor=\"white\", "
                       "label=\"{}\"];",
                       id,
                       Escape(fmt::format("alloc {}\n{} B", name, size ? PrintNode(size) : "?"))),
           nullptr});
      alloc_by_var_[a.var.get()] = nodes_.size() - 1;
      return;
    }
    if (call && call->OpName() == ops::kWorldSize) {
      bounds_[a.var.get()] = {verify::BoundKind::kWorldSize, 0};
    } else if (a.value->kind() == NodeKind::kConstInt) {
      bounds_[a.var.get()] = {verify::BoundKind::kConst,
                              static_cast<const ConstInt&>(*a.value).value};
    }
    std::string from;  // the node this view comes from
    std::string edge_label;
    if (call && call->OpName() == ops::kWindow && !call->args.empty()) {
      from = IdOf(call->args[0]);
      edge_label = "window";
    } else if (IsVarLikeKind(a.value->kind())) {
      from = IdOf(a.value);
      edge_label = "alias";
    } else if (call) {
      from = CallNode(call);
      edge_label = "result";
    }
    const WindowBuffer* wb = BackRef(a.var->type);
    if (!wb && !(call && call->OpName() == ops::kWindow)) return;  // not a view
    std::string id = NewId('v');
    var_ids_[a.var.get()] = id;
    nodes_.push_back(
        {fmt::format("{} [shape=ellipse, style=\"filled\", fillcolor=\"white\", "
                     "label=\"{}\"];",
                     id,
                     Escape(fmt::format("{}\n{}{}", a.var->name_hint, TypeLabel(a.var->type),
                                        wb ? "" : "\n(no window_buffer)"))),
         wb});
    if (wb && wb->base) {
      // The alloc joins the scope of its WindowBuffer.
      if (auto it = alloc_by_var_.find(wb->base.get()); it != alloc_by_var_.end()) {
        nodes_[it->second].wb = wb;
      }
    }
    if (!from.empty())
      edges_.push_back(fmt::format("{} -> {} [label=\"{}\"];", from, id, edge_label));
  }

  // Draws a dispatch or collective call; returns its node id ("" for other calls).
  std::string CallNode(const Call* call) {
    if (!call) return "";
    std::string id;
    if (GlobalVarPtr callee = call->Callee()) {
      FunctionPtr f = program_.FindFunction(callee->name);
      if (!f || !pass::IsChipOrchestrator(*f)) return "";
      ExprPtr device = FindAttr(call->attrs, "device");
      verify::Descriptor d = verify::DeviceDescriptor(device, loops_);
      id = NewId('d');
      nodes_.push_back(
          {fmt::format("{} [shape=box, style=\"filled,rounded\", fillcolor=\"#fff4d6\", "
                       "label=\"{}\"];",
                       id,
                       Escape(fmt::format("self.{}(device={})\ndevices: {}", callee->name,
                                          device ? PrintNode(device) : "none",
                                          d.ok ? d.set.ToString() : "invalid (" + d.why + ")"))),
           nullptr});
    } else if (IsCollective(call->OpName())) {
      id = NewId('c');
      nodes_.push_back({fmt::format("{} [shape=hexagon, style=\"filled\", fillcolor=\"#fde2e2\", "
                                    "label=\"{}\"];",
                                    id, Escape(ShortOp(call->OpName()))),
                        nullptr});
    } else {
      return "";
    }
    for (size_t i = 0; i < call->args.size(); ++i) {
      std::string from = IdOf(call->args[i]);
      if (from.empty()) continue;
      std::string label = call->Callee() ? fmt::format("arg {}", i) : ArgRole(call->OpName(), i);
      edges_.push_back(fmt::format("{} -> {} [label=\"{}\"];", from, id, label));
    }
    return id;
  }

  std::string IdOf(const ExprPtr& e) const {
    if (!e || !IsVarLikeKind(e->kind())) return "";
    auto it = var_ids_.find(static_cast<const Var*>(e.get()));
    return it == var_ids_.end() ? "" : it->second;
  }

  const Program& program_;
  const Function& fn_;
  std::string prefix_;
  size_t counter_ = 0;
  std::vector<const CommDomainScopeStmt*> scopes_;
  std::vector<std::string> allocs_;
  std::vector<Item> nodes_;
  std::vector<std::string> edges_;
  std::unordered_map<const Var*, std::string> var_ids_;
  std::unordered_map<const Var*, size_t> alloc_by_var_;
  verify::BoundEnv bounds_;
  verify::LoopEnv loops_;
};

}  // namespace

std::string EmitDot(const ProgramPtr& materialized) {
  std::string out =
      fmt::format("digraph \"{}\" {{\n", Escape(materialized ? materialized->name : ""));
  out += "  rankdir=LR; compound=true; newrank=true;\n";
  out += "  graph [fontname=\"Helvetica\", fontsize=12, labeljust=\"l\"];\n";
  out += "  node [fontname=\"Helvetica\", fontsize=10, margin=\"0.08,0.04\"];\n";
  out += "  edge [fontname=\"Helvetica\", fontsize=9, color=\"#666666\"];\n";
  bool any = false;
  if (materialized) {
    for (size_t i = 0; i < materialized->functions.size(); ++i) {
      const auto& fn = materialized->functions[i];
      if (!fn || !fn->body) continue;
      FunctionPicture pic(*materialized, *fn, i);
      if (!pic.Build()) continue;
      pic.Write(out);
      any = true;
    }
  }
  if (!any) out += "  empty [shape=plaintext, label=\"no allocs, no comm-domain scopes\"];\n";
  out += "}\n";
  return out;
}

}  // namespace cds::dot
