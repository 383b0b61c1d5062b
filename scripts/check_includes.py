#!/usr/bin/env python3
"""Fails when the folders of src/ include each other in a loop.

The graph has one node per top-level folder of src/ (api, core, cpu, ...) and an
edge A -> B when a file under src/A has an #include "..." that resolves to a file
under src/B. An include resolves as the compiler finds it: beside the including
file first, then from src/ (the library's include root). Includes that resolve to
neither (the public include/relugrad/, Highway, the AscendC headers) are outside
the graph. Edges inside a folder are ignored: a folder is one layer.

A loop means no folder order exists in which each layer builds on those below it,
so `make check` runs this (tests/style, the quick tier) and it prints each loop
with the #include line behind every edge of it.

    python3 scripts/check_includes.py             # check src/ of this tree
    python3 scripts/check_includes.py --root DIR  # check DIR/src (the tests seed loops)
    python3 scripts/check_includes.py --graph     # also print the folder graph

Only the standard library: it runs before any venv exists.
"""
from __future__ import annotations

import argparse
import os
import re
import sys
from collections import deque

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE_SUFFIXES = (".h", ".hpp", ".cc", ".cpp", ".c", ".cu", ".cuh", ".inc")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


def folder_of(src: str, path: str) -> str | None:
    """The top-level folder of src/ that holds path, or None outside src/ or at its top."""
    rel = os.path.relpath(path, src)
    parts = rel.split(os.sep)
    if parts[0] == os.pardir or len(parts) < 2:
        return None
    return parts[0]


def resolve(src: str, including_file: str, name: str) -> str | None:
    for base in (os.path.dirname(including_file), src):
        candidate = os.path.normpath(os.path.join(base, name))
        if os.path.isfile(candidate):
            return candidate
    return None


def include_edges(src: str) -> dict[tuple[str, str], list[str]]:
    """(from folder, to folder) -> the include lines that make the edge, as 'file:line: text'."""
    edges: dict[tuple[str, str], list[str]] = {}
    for dirpath, dirnames, filenames in os.walk(src):
        dirnames.sort()
        for filename in sorted(filenames):
            if not filename.endswith(SOURCE_SUFFIXES):
                continue
            path = os.path.join(dirpath, filename)
            source = folder_of(src, path)
            if source is None:
                continue
            with open(path, encoding="utf-8", errors="replace") as f:
                for number, line in enumerate(f, 1):
                    match = INCLUDE.match(line)
                    if not match:
                        continue
                    target_path = resolve(src, path, match.group(1))
                    target = folder_of(src, target_path) if target_path else None
                    if target is None or target == source:
                        continue
                    where = f"src/{os.path.relpath(path, src)}:{number}: {line.strip()}"
                    edges.setdefault((source, target), []).append(where)
    return edges


def strongly_connected(nodes: list[str], successors: dict[str, list[str]]) -> list[list[str]]:
    """Tarjan's components, each sorted; iterative, so deep graphs cannot overflow the stack."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, child = work.pop()
            if child == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack.add(node)
            nexts = successors.get(node, [])
            if child < len(nexts):
                work.append((node, child + 1))
                nxt = nexts[child]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if work:  # report the finished child's low link to its parent
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def shortest_loop(start: str, members: set[str], successors: dict[str, list[str]]) -> list[str]:
    """A shortest path start -> ... -> start inside one component (breadth first)."""
    parent: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in successors.get(node, []):
            if nxt not in members:
                continue
            if nxt == start:
                path = [node]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                return list(reversed(path)) + [start]
            if nxt not in parent:
                parent[nxt] = node
                queue.append(nxt)
    return [start]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=ROOT, help="the tree whose src/ is checked")
    parser.add_argument("--graph", action="store_true", help="print every folder edge")
    args = parser.parse_args(argv)
    src = os.path.join(os.path.abspath(args.root), "src")
    if not os.path.isdir(src):
        print(f"check_includes: no src/ folder under {args.root}", file=sys.stderr)
        return 2
    edges = include_edges(src)
    folders = sorted(
        name for name in os.listdir(src) if os.path.isdir(os.path.join(src, name))
    )
    successors: dict[str, list[str]] = {}
    for source, target in sorted(edges):
        successors.setdefault(source, []).append(target)
    if args.graph:
        for source, target in sorted(edges):
            print(f"{source} -> {target} ({len(edges[(source, target)])} includes)")
    loops = [c for c in strongly_connected(folders, successors) if len(c) > 1]
    if not loops:
        print(f"src/ include graph: {len(folders)} folders, {len(edges)} edges between them, no loop")
        return 0
    for component in loops:
        loop = shortest_loop(component[0], set(component), successors)
        print(f"include loop between src/ folders: {' -> '.join(loop)}")
        if len(component) > len(loop) - 1:
            print(f"  (the folders {', '.join(component)} all reach each other)")
        for source, target in zip(loop, loop[1:]):
            lines = edges[(source, target)]
            print(f"  {source} -> {target}: {lines[0]}")
            if len(lines) > 1:
                print(f"    and {len(lines) - 1} more include(s) of {target}/ from {source}/")
    print(
        "A folder may include only folders below it: move the shared piece down, or the "
        "including code up.",
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
