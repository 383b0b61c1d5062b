#!/usr/bin/env python3
"""Fails when the docs drift from the code that cites them, or outgrow their limits.

    python3 scripts/check_docs.py              # check the tree; exit 1 on any failure
    python3 scripts/check_docs.py --self-test  # prove each check fails on a seeded defect

Each failure is one line, `file:line: reason`. It runs in `make check` (Makefile, docs-check)
with the standard library only, before any venv exists, in well under a second.

What it checks:

1. Citations. A citation is a path to a Markdown file and, optionally, the sections quoted
   right after it:

       docs/design.md, "One CPU launch policy"          (code or docs; path from the root)
       docs/design.md, "Streaming stores and fresh pages", "Fresh pages faulted in ahead"
       docs/python.md "Install"                          (a space instead of the comma)
       README "Development"  /  README.md, "Development"
       [ascend.md](ascend.md), "CANN's semantics"         (a Markdown link in the docs)
       [torch.md](torch.md#the-three-paths)               (a link with an anchor)

   A quoted section is a "..." string that follows the path after a comma, spaces or a line
   break; further "..." strings joined by commas are sections too. Comment leaders (//, #, *,
   /*) at the start of a line are dropped before matching, so a citation may wrap across
   comment lines. The cited file must exist. A section of a hand-written page (docs/*.md,
   README.md) must be one of its headings, word for word (backticks dropped, spaces
   collapsed), or a heading's lead before its first ": " ("Compatibility" names the heading
   "Compatibility: relugrad.torch in PyTorch's toolchain"), outside code blocks. A section of
   a generated results file (docs/results/) must occur in its text: those reports name their
   rows rather than give each a heading. An anchor must be the GitHub slug of a heading.
   Scanned: src/ include/ python/ tools/ bench/ tests/ scripts/ mk/ fuzz/ cmake/ docs/,
   Makefile, CMakeLists.txt, pyproject.toml, README.md (not this file: its examples and seeded
   defects are no citations); Markdown links are read in docs/*.md and README.md.
2. Line lengths. A docs/*.md line is at most 400 characters, a table row (a line starting
   with "|") at most 1,000; a README.md line at most 300. Generated results files
   (docs/results/) are not held to it: their writers are.
3. Size. docs/*.md together stay within 3,200 lines (README.md and docs/results/ apart).
"""
from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SCAN_DIRS = ("src", "include", "python", "tools", "bench", "tests", "scripts", "mk", "fuzz", "cmake", "docs")
SCAN_FILES = ("Makefile", "CMakeLists.txt", "pyproject.toml", "README.md")
# This file's examples and seeded defects are not citations.
SKIP_FILES = {"scripts/check_docs.py"}
SKIP_DIRS = {"__pycache__", ".git", "build", ".venv", "node_modules"}
TEXT_SUFFIXES = (".h", ".hpp", ".c", ".cc", ".cpp", ".cu", ".cuh", ".inc", ".py", ".pyi", ".sh",
                 ".mk", ".cmake", ".txt", ".toml", ".md", ".in", ".yml", ".yaml", ".cfg")
TEXT_NAMES = ("Makefile", "CMakeLists.txt")

DOC_LINE_MAX = 400
DOC_TABLE_LINE_MAX = 1000
README_LINE_MAX = 300
DOCS_TOTAL_MAX = 3200

# A cited path (docs/... from the root, or the README) and the quoted sections right after it.
_QUOTE = r'"([^"\n]{1,300})"'
CITATION = re.compile(
    r'(?<![\w.-])(docs/[\w./-]*\.md|README(?:\.md)?)(?:#([\w-]+))?'
    r'(?:(?:,[ \t]*\n?|[ \t]*\n|[ \t]+)[ \t]*' + _QUOTE + r'((?:[ \t]*,[ \t]*' + _QUOTE + r')*))?')
# A Markdown link, and the quoted sections after it.
MD_LINK = re.compile(
    r'\[[^\]\n]*\]\(([^)\s]+)\)'
    r'(?:(?:,[ \t]*\n?|[ \t]*\n|[ \t]+)[ \t]*' + _QUOTE + r'((?:[ \t]*,[ \t]*' + _QUOTE + r')*))?')
MORE_QUOTES = re.compile(_QUOTE)
# What starts a comment line: dropped so that a citation can wrap from one comment line to the next.
COMMENT_LEADER = re.compile(r'^[ \t]*(?://+|/\*+|\*+(?!/)|#+(?=[ \t]|$))?[ \t]?')
FENCE = re.compile(r'^[ \t]*(```|~~~)')
HEADING = re.compile(r'^(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$')


def _norm(text: str) -> str:
    return " ".join(text.replace("`", "").split())


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = heading.strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


class Tree:
    """The files under one root, read once."""

    def __init__(self, root: str):
        self.root = root
        self._lines: dict[str, list[str] | None] = {}
        self._headings: dict[str, list[str]] = {}

    def lines(self, rel: str) -> list[str] | None:
        if rel not in self._lines:
            try:
                with open(os.path.join(self.root, rel), encoding="utf-8") as f:
                    self._lines[rel] = f.read().split("\n")
            except (OSError, UnicodeDecodeError):
                self._lines[rel] = None
        return self._lines[rel]

    def headings(self, rel: str) -> list[str]:
        if rel not in self._headings:
            found, fenced = [], False
            for line in self.lines(rel) or []:
                if FENCE.match(line):
                    fenced = not fenced
                elif not fenced:
                    m = HEADING.match(line)
                    if m:
                        found.append(m.group(2))
            self._headings[rel] = found
        return self._headings[rel]

    def anchors(self, rel: str) -> set[str]:
        seen: dict[str, int] = {}
        out = set()
        for h in self.headings(rel):
            s = slug(h)
            out.add(s if s not in seen else f"{s}-{seen[s]}")
            seen[s] = seen.get(s, 0) + 1
        return out

    def scanned_files(self):
        for name in SCAN_FILES:
            if os.path.isfile(os.path.join(self.root, name)):
                yield name
        for top in SCAN_DIRS:
            for dirpath, dirnames, filenames in os.walk(os.path.join(self.root, top)):
                dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS and not d.endswith(".egg-info"))
                for name in sorted(filenames):
                    rel = os.path.relpath(os.path.join(dirpath, name), self.root).replace(os.sep, "/")
                    if (name.endswith(TEXT_SUFFIXES) or name in TEXT_NAMES) and rel not in SKIP_FILES:
                        yield rel

    def docs_pages(self) -> list[str]:
        docs = os.path.join(self.root, "docs")
        if not os.path.isdir(docs):
            return []
        return sorted("docs/" + n for n in os.listdir(docs) if n.endswith(".md"))


def _flatten(lines: list[str], markdown: bool) -> tuple[str, list[int]]:
    """The file's text with each line's comment leader dropped, and the offset where each line starts."""
    parts, starts, pos = [], [], 0
    for line in lines:
        text = line.strip() if markdown else COMMENT_LEADER.sub("", line, count=1).rstrip()
        starts.append(pos)
        parts.append(text)
        pos += len(text) + 1
    return "\n".join(parts), starts


def _line_of(starts: list[int], offset: int) -> int:
    lo, hi = 0, len(starts) - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if starts[mid] <= offset:
            lo = mid
        else:
            hi = mid - 1
    return lo + 1


def _sections(first: str | None, rest: str | None) -> list[str]:
    if first is None:
        return []
    return [first] + MORE_QUOTES.findall(rest or "")


def _check_target(tree: Tree, where: str, target: str, anchor: str | None, sections: list[str]) -> list[str]:
    path = os.path.join(tree.root, target)
    if not os.path.exists(path):
        return [f"{where}: cites {target}, which does not exist"]
    errors = []
    if anchor and target.endswith(".md") and anchor not in tree.anchors(target):
        errors.append(f"{where}: cites {target}#{anchor}, which is no heading of {target}")
    if sections and target.endswith(".md"):
        generated = target.startswith("docs/results/")
        headings = {_norm(h) for h in tree.headings(target)}
        headings |= {_norm(h.split(": ", 1)[0]) for h in tree.headings(target)}
        text = _norm(" ".join(tree.lines(target) or []))
        for s in sections:
            if generated and _norm(s) not in text:
                errors.append(f'{where}: cites {target}, "{s}", which its text does not contain')
            elif not generated and _norm(s) not in headings:
                errors.append(f'{where}: cites {target}, "{s}", which is no heading of {target}')
    return errors


def check_citations(tree: Tree) -> list[str]:
    errors = []
    for rel in tree.scanned_files():
        lines = tree.lines(rel)
        if lines is None:
            continue
        markdown = rel.endswith(".md")
        flat, starts = _flatten(lines, markdown)
        for m in CITATION.finditer(flat):
            target = "README.md" if m.group(1).startswith("README") else m.group(1)
            where = f"{rel}:{_line_of(starts, m.start())}"
            errors += _check_target(tree, where, target, m.group(2), _sections(m.group(3), m.group(4)))
        if not markdown or rel.startswith("docs/results/"):
            continue
        base = os.path.dirname(rel)
        for m in MD_LINK.finditer(flat):
            link = m.group(1)
            if re.match(r"^[a-z]+:", link):
                continue
            where = f"{rel}:{_line_of(starts, m.start())}"
            file_part, _, anchor = link.partition("#")
            target = os.path.normpath(os.path.join(base, file_part)).replace(os.sep, "/") if file_part else rel
            errors += _check_target(tree, where, target, anchor or None, _sections(m.group(2), m.group(3)))
    return errors


def check_lines(tree: Tree) -> list[str]:
    errors = []
    pages = [(p, DOC_LINE_MAX, DOC_TABLE_LINE_MAX) for p in tree.docs_pages()]
    pages.append(("README.md", README_LINE_MAX, README_LINE_MAX))
    for rel, prose_max, table_max in pages:
        for n, line in enumerate(tree.lines(rel) or [], 1):
            table = line.lstrip().startswith("|")
            limit = table_max if table else prose_max
            if len(line) > limit:
                kind = "table row" if table and table_max != prose_max else "line"
                errors.append(f"{rel}:{n}: {kind} of {len(line)} characters, over {limit}")
    return errors


def check_size(tree: Tree) -> list[str]:
    counts = [(p, len((tree.lines(p) or [""])) - 1) for p in tree.docs_pages()]
    total = sum(c for _, c in counts)
    if total <= DOCS_TOTAL_MAX:
        return []
    largest = ", ".join(f"{p} {c}" for p, c in sorted(counts, key=lambda pc: -pc[1])[:3])
    return [f"docs:1: docs/*.md hold {total} lines, over {DOCS_TOTAL_MAX} (largest: {largest})"]


def check(root: str) -> list[str]:
    tree = Tree(root)
    return check_citations(tree) + check_lines(tree) + check_size(tree)


def self_test() -> int:
    """A checker that cannot fail is a defect: seed one defect of each kind and expect its report."""
    page, gone, real = "docs/page.md", "Gone section", "Real heading"
    cases = {
        "a good tree": ({}, []),
        "a missing page": ({"src/a.cc": "// see docs/gone.md.\n"}, ["src/a.cc:1: cites docs/gone.md"]),
        "a missing section, wrapped": (
            {"src/a.cc": f'int x;\n// as measured ({page},\n// "{gone}").\n'},
            [f'src/a.cc:2: cites {page}, "{gone}"']),
        "a heading's lead": ({"src/a.cc": f'// {page}, "Lead"\n'}, []),
        "a heading in a code block": ({"src/a.cc": f'// {page}, "Not a heading"\n'},
                                      [f'src/a.cc:1: cites {page}, "Not a heading"']),
        "a second section": (
            {"python/a.py": f'# {page}, "{real}", "{gone}"\n'},
            [f'python/a.py:1: cites {page}, "{gone}"']),
        "a README section": ({"Makefile": f'# (README "{gone}" has them)\n'}, ["Makefile:1: cites README.md"]),
        "a link's anchor": ({"docs/other.md": f"# Other\n[p]({page[5:]}#gone-section)\n"},
                            [f"docs/other.md:2: cites {page}#gone-section"]),
        "a long prose line": ({"docs/other.md": "# Other\n" + "word " * 90 + "\n"},
                              ["docs/other.md:2: line of 450 characters, over 400"]),
        "a long table row": ({"docs/other.md": "# Other\n|" + "cell " * 210 + "|\n"},
                             ["docs/other.md:2: table row of 1052 characters, over 1000"]),
        "a long README line": ({"README.md": "# R\n## Test tiers\n" + "x" * 301 + "\n"}, ["README.md:3: line of 301"]),
        "too many docs lines": ({"docs/other.md": "line\n" * DOCS_TOTAL_MAX}, ["docs:1: docs/*.md hold "]),
    }
    base = {
        "README.md": "# relugrad\n\n## Test tiers\n",
        page: f"# Page\n\n## {real}\n\n## Lead: the rest\n\n```\n## Not a heading\n```\n",
        "src/ok.cc": f'// {page}, "{real}"; README "Test tiers"; [{page}#real-heading]\n',
    }
    failed = 0
    for name, (files, expected) in cases.items():
        with tempfile.TemporaryDirectory() as root:
            for rel, text in {**base, **files}.items():
                os.makedirs(os.path.dirname(os.path.join(root, rel)) or root, exist_ok=True)
                with open(os.path.join(root, rel), "w", encoding="utf-8") as f:
                    f.write(text)
            got = check(root)
            ok = len(got) == len(expected) and all(g.startswith(e) for g, e in zip(got, expected))
            if not ok:
                failed += 1
                print(f"check_docs self-test: {name}: expected {expected}, got {got}")
    if failed:
        print(f"check_docs self-test: {failed} of {len(cases)} cases FAILED")
        return 1
    print(f"check_docs self-test: {len(cases)} cases, each defect reported")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--self-test", action="store_true", help="check the checker on seeded defects")
    parser.add_argument("--root", default=ROOT, help="the tree to check (default: this checkout)")
    args = parser.parse_args()
    if args.self_test:
        return self_test()
    errors = check(args.root)
    for e in errors:
        print(e)
    if errors:
        print(f"check_docs: {len(errors)} problem(s)")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
