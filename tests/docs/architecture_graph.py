#!/usr/bin/env python3
"""Keeps docs/architecture.dot true: its arrows must be the CMake target graph.

  architecture_graph.py cmake-graph --source DIR --out FILE [--cmake C] [--cc CC] [--cxx CXX]
      configure DIR in a scratch folder (tests and benchmarks off: the product's
      targets only) with `cmake --graphviz` and write the graph to FILE
  architecture_graph.py check --dot FILE --graph FILE
      compare a hand-kept dot file with that graph
  architecture_graph.py probe --dot FILE --graph FILE
      show that `check` fails: copies of the dot file with an arrow added, an
      arrow removed, a part missing and an unknown part must each be rejected

`check` rejects a node that is no CMake target, a cds_* library or cds-* tool of
the graph that the dot file leaves out, and every arrow between two of its nodes
that the graph lacks or that it lacks while the graph has it.
Exit codes: 0 agreement, 1 disagreement (each printed), 2 usage error or a failed
configure.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

QUOTED = r'"([^"]+)"'
EDGE = re.compile(rf"^\s*{QUOTED}\s*->\s*{QUOTED}")
NODE = re.compile(rf"^\s*{QUOTED}\s*(\[|;|$)")


def read_hand_kept(path):
    """Nodes and edges of the hand-kept dot file (quoted names, one edge per line)."""
    nodes, edges = set(), set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("//", 1)[0]
            m = EDGE.match(line)
            if m:
                edges.add((m.group(1), m.group(2)))
                nodes.update(m.groups())
                continue
            m = NODE.match(line)
            if m:
                nodes.add(m.group(1))
    return nodes, edges


CMAKE_NODE = re.compile(r'^\s*"(node\d+)"\s*\[\s*label\s*=\s*"([^"]+)",\s*shape\s*=\s*(\w+)')
CMAKE_EDGE = re.compile(r'^\s*"(node\d+)"\s*->\s*"(node\d+)"')


def read_cmake_graph(path):
    """Targets (name -> shape) and direct dependencies of `cmake --graphviz` output."""
    label, shape, edges = {}, {}, set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = CMAKE_NODE.match(line)
            if m:
                label[m.group(1)] = m.group(2)
                shape[m.group(2)] = m.group(3)
                continue
            m = CMAKE_EDGE.match(line)
            if m:
                edges.add((m.group(1), m.group(2)))
    return shape, {(label[a], label[b]) for a, b in edges if a in label and b in label}


def is_part(name, shape):
    # The parts the picture must show: the project's libraries and its tools.
    return (name.startswith("cds_") and shape == "octagon") or (
        name.startswith("cds-") and shape == "egg")


def disagreements(dot_path, graph_path):
    nodes, edges = read_hand_kept(dot_path)
    targets, deps = read_cmake_graph(graph_path)
    problems = []
    for n in sorted(nodes - targets.keys()):
        problems.append(f"{dot_path}: '{n}' is no CMake target")
    for n in sorted(t for t, s in targets.items() if is_part(t, s) and t not in nodes):
        problems.append(f"{dot_path}: the CMake target '{n}' is missing")
    known = nodes & targets.keys()
    for a, b in sorted(edges - deps):
        if a in known and b in known:
            problems.append(f"{dot_path}: '{a}' -> '{b}' is drawn but CMake has no such dependency")
    for a, b in sorted(deps - edges):
        if a in nodes and b in nodes:
            problems.append(f"{dot_path}: CMake has '{a}' -> '{b}', which is not drawn")
    return problems


def cmd_cmake_graph(args):
    with tempfile.TemporaryDirectory() as build:
        with open(os.path.join(build, "CMakeGraphVizOptions.cmake"), "w") as f:
            f.write("set(GRAPHVIZ_EXTERNAL_LIBS FALSE)\n"
                    "set(GRAPHVIZ_GENERATE_PER_TARGET FALSE)\n"
                    "set(GRAPHVIZ_GENERATE_DEPENDERS FALSE)\n")
        cmd = [args.cmake, "-S", args.source, "-B", build, "-G", "Ninja",
               "-DCDS_BUILD_TESTS=OFF", "-DCDS_BUILD_BENCH=OFF",
               f"--graphviz={os.path.join(build, 'targets.dot')}"]
        if args.cc:
            cmd.append(f"-DCMAKE_C_COMPILER={args.cc}")
        if args.cxx:
            cmd.append(f"-DCMAKE_CXX_COMPILER={args.cxx}")
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode != 0:
            print(run.stdout + run.stderr, file=sys.stderr)
            print("architecture_graph: configuring the tree failed", file=sys.stderr)
            return 2
        with open(os.path.join(build, "targets.dot"), encoding="utf-8") as src:
            text = src.read()
    tmp = args.out + ".tmp"
    with open(tmp, "w", encoding="utf-8") as dst:
        dst.write(text)
    os.replace(tmp, args.out)
    return 0


def cmd_check(args):
    problems = disagreements(args.dot, args.graph)
    for p in problems:
        print(p)
    print(f"architecture_graph: {len(problems)} disagreement{'s' if len(problems) != 1 else ''}")
    return 1 if problems else 0


def cmd_probe(args):
    with open(args.dot, encoding="utf-8") as f:
        text = f.read()
    cases = [
        ("an arrow the build lacks",
         text.replace('"cds_verify" -> "cds_ir";', '"cds_verify" -> "cds_ir";\n  "cds_verify" -> "cds_pass";'),
         "'cds_verify' -> 'cds_pass' is drawn but CMake has no such dependency"),
        ("an arrow left out",
         text.replace('"cds_driver" -> "cds_verify";\n', ""),
         "CMake has 'cds_driver' -> 'cds_verify', which is not drawn"),
        ("a part left out",
         "\n".join(l for l in text.splitlines() if '"cds-gen"' not in l),
         "the CMake target 'cds-gen' is missing"),
        ("a part that is no target",
         text.replace('"cds-opt" [shape', '"cds-lint" [shape = ellipse];\n  "cds-opt" [shape'),
         "'cds-lint' is no CMake target"),
    ]
    failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for name, mutated, want in cases:
            if mutated == text:
                print(f"probe '{name}': the edit did not apply; update the probe")
                failed += 1
                continue
            path = os.path.join(tmp, "probe.dot")
            with open(path, "w", encoding="utf-8") as f:
                f.write(mutated)
            found = disagreements(path, args.graph)
            if not any(want in p for p in found):
                print(f"probe '{name}': check did not report \"{want}\"; it reported {found}")
                failed += 1
            else:
                print(f"probe '{name}': rejected as expected")
    if disagreements(args.dot, args.graph):
        print("probe: the unmodified dot file itself disagrees (see the repository test)")
        failed += 1
    return 1 if failed else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("cmake-graph")
    g.add_argument("--source", required=True)
    g.add_argument("--out", required=True)
    g.add_argument("--cmake", default="cmake")
    g.add_argument("--cc")
    g.add_argument("--cxx")
    for name in ("check", "probe"):
        c = sub.add_parser(name)
        c.add_argument("--dot", required=True)
        c.add_argument("--graph", required=True)
    args = parser.parse_args()
    return {"cmake-graph": cmd_cmake_graph, "check": cmd_check, "probe": cmd_probe}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
