#!/usr/bin/env python3
"""check_includes.py catches what it is for: a seeded loop between src/ folders fails
and is printed with its #include lines; a layered tree, includes inside a folder and
includes outside src/ pass. Run by ctest (tests/style) beside the check itself."""
from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_includes  # noqa: E402


def write_tree(root: str, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)


def run_check(files: dict[str, str]) -> tuple[int, str]:
    with tempfile.TemporaryDirectory() as root:
        write_tree(root, files)
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = check_includes.main(["--root", root])
        return rc, out.getvalue()


# core <- cpu <- api, with a same-folder include, a local include, and external ones.
LAYERED = {
    "src/core/rules.h": '#include <cstdint>\n#include "relugrad/relugrad.h"\n',
    "src/core/plan.h": '#include "core/rules.h"\n#include "hwy/base.h"\n',
    "src/cpu/kernels.h": '#include "core/rules.h"\n#include "kernels-inl.h"\n',
    "src/cpu/kernels-inl.h": "// no includes\n",
    "src/api/entry.cc": '#include "cpu/kernels.h"\n#include "core/plan.h"\n',
}


class CheckIncludesTest(unittest.TestCase):
    def test_layered_tree_passes(self):
        rc, out = run_check(LAYERED)
        self.assertEqual(rc, 0, out)
        self.assertIn("no loop", out)

    def test_seeded_two_folder_loop_fails_and_is_printed(self):
        files = dict(LAYERED)
        files["src/core/plan.h"] += '#include "cpu/kernels.h"\n'  # core -> cpu -> core
        rc, out = run_check(files)
        self.assertEqual(rc, 1, out)
        self.assertIn("include loop between src/ folders: core -> cpu -> core", out)
        self.assertIn('src/core/plan.h:3: #include "cpu/kernels.h"', out)
        self.assertIn('src/cpu/kernels.h:1: #include "core/rules.h"', out)

    def test_seeded_three_folder_loop_fails(self):
        # The shape this tree once had: core -> profile -> cpu -> core.
        files = {
            "src/core/plan.h": '#include "profile/profile.h"\n',
            "src/profile/profile.cc": '#include "cpu/cpu_kernels.h"\n',
            "src/profile/profile.h": "\n",
            "src/cpu/cpu_kernels.h": '#include "core/semantics.h"\n',
            "src/core/semantics.h": "\n",
        }
        rc, out = run_check(files)
        self.assertEqual(rc, 1, out)
        self.assertIn("core -> profile -> cpu -> core", out)

    def test_local_include_resolves_beside_the_file_first(self):
        # "plan.h" in src/api means src/api/plan.h, not src/core/plan.h: no edge, no loop.
        files = dict(LAYERED)
        files["src/api/plan.h"] = "\n"
        files["src/core/rules.h"] += '#include "api/plan.h"\n'  # core -> api: a loop
        rc, _ = run_check(files)
        self.assertEqual(rc, 1)
        files["src/core/rules.h"] = '#include "plan.h"\n'  # src/core/plan.h: same folder
        rc, out = run_check(files)
        self.assertEqual(rc, 0, out)


if __name__ == "__main__":
    unittest.main()
