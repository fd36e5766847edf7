#!/usr/bin/env python3
"""The dependency graph of Tandem's modules, which must stay acyclic.

A module is a source file without its extension, relative to src/: the
module core/progress is src/core/progress.c with src/core/progress.h (a
header without a .c, such as impl/impl.h, is a module of its own). Module A
depends on module B when A's .c or .h includes "B.h". A cycle (A's .c
includes B's header while B's .c includes A's, or a longer loop) fails the
check: the lower module then learns of the upper one through a callback
given at start, or the shared part moves to a header of its own
(docs/DESIGN.md, "Modules", lists what the core and the monitor include).

A .c file may not declare a Tandem function (tdm_*) that it does not
define: such a prototype is a dependency that no #include shows, and hid the
cycle between monitor/monitor.c and monitor/dump.c.

    tools/include_graph.py           check; print the cycles and stray prototypes
    tools/include_graph.py --graph   print each module's dependencies
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)\.h"', re.MULTILINE)
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.DOTALL)
TEXT = re.compile(r'"(?:\\.|[^"\\\n])*"' + r"|'(?:\\.|[^'\\\n])*'")
FUNCTION = re.compile(r"\b(tdm_\w+)\s*\(")


def modules(src: Path) -> dict[str, set[str]]:
    """Each module's dependencies on other modules of 'src'."""
    files = sorted(p for p in src.rglob("*") if p.suffix in (".c", ".h"))
    names = {p.relative_to(src).with_suffix("").as_posix() for p in files}
    graph: dict[str, set[str]] = {name: set() for name in names}
    for path in files:
        module = path.relative_to(src).with_suffix("").as_posix()
        for target in INCLUDE.findall(path.read_text()):
            if target in names and target != module:
                graph[module].add(target)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[tuple[list[str], list[str]]]:
    """Each strongly connected component of more than one module (Tarjan):
    its modules, and one cycle through them (the first module repeated at
    the end)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    found = []
    for component in components:
        members = set(component)
        path, seen = [component[0]], {component[0]: 0}
        while True:  # walk inside the component until a module repeats
            nxt = sorted(graph[path[-1]] & members)[0]
            if nxt in seen:
                found.append((component, path[seen[nxt] :] + [nxt]))
                break
            seen[nxt] = len(path)
            path.append(nxt)
    return found


def top_level(text: str) -> list[tuple[str, str]]:
    """The statements of a C file outside any braces, each with what ended
    it (';' or '{'), comments, strings and preprocessor lines left out."""
    text = TEXT.sub('""', COMMENT.sub(" ", text))
    text = re.sub(r"^\s*#(?:[^\n]*\\\n)*[^\n]*", "", text, flags=re.MULTILINE)
    statements, depth, start = [], 0, 0
    for i, c in enumerate(text):
        if c == "{":
            if depth == 0:
                statements.append((text[start:i], "{"))
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                start = i + 1
        elif c == ";" and depth == 0:
            statements.append((text[start:i], ";"))
            start = i + 1
    return statements


def stray_prototypes(src: Path) -> list[str]:
    """Prototypes of Tandem functions in a .c file that does not define them."""
    found = []
    for path in sorted(src.rglob("*.c")):
        statements = top_level(path.read_text())
        defined = {
            name for text, end in statements if end == "{" for name in FUNCTION.findall(text)[:1]
        }
        for text, end in statements:
            words = text.split()
            if end != ";" or not words or words[0] in ("static", "typedef") or "=" in text:
                continue
            for name in FUNCTION.findall(text)[:1]:
                if name not in defined:
                    found.append(f"{path.relative_to(src.parent)}: declares {name}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--src", type=Path, default=ROOT / "src")
    parser.add_argument("--graph", action="store_true", help="print the dependencies")
    args = parser.parse_args(argv)
    graph = modules(args.src)
    if args.graph:
        for module in sorted(graph):
            print(f"{module}: {' '.join(sorted(graph[module]))}")
    problems = [
        f"include cycle among {' '.join(members)}: {' -> '.join(cycle)}"
        for members, cycle in cycles(graph)
    ] + stray_prototypes(args.src)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(
            "tools/include_graph.py: the modules of src/ must depend on each other without "
            "cycles, each through the other's header",
            file=sys.stderr,
        )
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
