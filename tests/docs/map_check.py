#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The capability map of docs/architecture.md names things that exist.

usage: map_check.py SOURCE_ROOT BUILD_ROOT

In the tables of the section "Map: where each capability lives" (up to
the next "## " heading), every code span but those of a "seed" column is
checked by its shape:
  - a path (`dataplane/core/worker.c`, `tools/bench/micro/`) exists in
    the tree;
  - `suite/name` is a test of this build (meson-info/intro-tests.json),
    or has its source in or below tests/SUITE/ (NAME_test.c, NAME.sh
    for e2e, NAME_fuzz.c for fuzz), as when this build leaves it out;
  - an lbctl command (`service add`) is a heading of docs/lbctl.md, an
    option (`admit-rate`) appears in it;
  - `reason="X"` is a drop reason of include/lb/drop.h;
  - a link to a Markdown anchor (policies.md#x) names a heading of it.
Metric family names are left to the reader: they are built by macros.
Prints every name that does not resolve and exits 1 if there is one.
"""
import json
import os
import re
import sys


def anchors(path):
    """GitHub's anchors of a Markdown file's headings."""
    out = set()
    fence = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                fence = not fence
            if fence or not line.startswith("#"):
                continue
            text = line.lstrip("#").strip().lower()
            text = re.sub(r"[^\w\- ]", "", text)
            out.add(text.replace(" ", "-"))
    return out


def has_file(top, name):
    """Whether a file @name is in @top or below (tests/unit/PROCESS/ROOM/)."""
    return any(name in files for _, _, files in os.walk(top))


def main():
    src, build = sys.argv[1], sys.argv[2]
    arch = os.path.join(src, "docs", "architecture.md")
    with open(arch, encoding="utf-8") as f:
        text = f.read()
    start = text.find("\n## Map: where each capability lives")
    if start < 0:
        print("docs/architecture.md: no capability map")
        return 1
    end = text.find("\n## ", start + 1)
    section = text[start:] if end < 0 else text[start:end]

    with open(os.path.join(build, "meson-info", "intro-tests.json"),
              encoding="utf-8") as f:
        tests = {s + "/" + t["name"] for t in json.load(f)
                 for s in t["suite"]}
    suites = {t.split("/")[0] for t in tests} | {"fuzz"}
    # meson prefixes suites with the project name: sluice:unit
    tests |= {t.split(":", 1)[1] for t in tests if ":" in t}
    suites |= {s.split(":", 1)[1] for s in suites if ":" in s}
    with open(os.path.join(src, "docs", "lbctl.md"), encoding="utf-8") as f:
        lbctl = f.read()
    commands = set(re.findall(r"^### (.+)$", lbctl, re.M))
    with open(os.path.join(src, "include", "lb", "drop.h"),
              encoding="utf-8") as f:
        reasons = set(re.findall(r'\] = "(\w+)"', f.read()))

    # The tables' cells, but those of their "seed" columns: the seeds
    # are documents outside the tree.
    spans = []
    head = None
    for line in section.splitlines():
        if not line.startswith("|"):
            head = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if head is None:
            head = cells
            continue
        for name, cell in zip(head, cells):
            if name != "seed":
                spans += re.findall(r"`([^`]+)`", cell)

    bad = []
    checked = 0
    for span in spans:
        checked += 1
        m = re.fullmatch(r'reason="(\w+)"', span)
        if m:
            if m.group(1) not in reasons:
                bad.append("drop reason " + span)
            continue
        m = re.fullmatch(r"(\w+)/(\w+)", span)
        if m and m.group(1) in suites:
            # A build without DPDK, bpf or libmicrohttpd leaves some
            # tests out: their source in tests/SUITE/ stands for them.
            suite, name = m.group(1), m.group(2)
            srcs = {"fuzz": name + "_fuzz.c", "e2e": name + ".sh"}
            ok = span in tests or has_file(os.path.join(src, "tests",
                                                        suite),
                                           srcs.get(suite, name + "_test.c"))
            if not ok:
                bad.append("test " + span)
            continue
        if "/" in span and " " not in span and not span.startswith("/"):
            if not os.path.exists(os.path.join(src, span)):
                bad.append("path " + span)
            continue
        if span in commands or span.startswith("lb_"):
            continue
        if re.fullmatch(r"[a-z]+( [a-z]+)?", span) and " " in span:
            if span not in commands:
                bad.append("lbctl command " + span)
            continue
        if re.fullmatch(r"[a-z][a-zA-Z-]*", span):
            if not re.search(r"(?<![\w-])" + re.escape(span) +
                             r"(?![\w-])", lbctl):
                bad.append("lbctl option or name " + span)
            continue
    for doc, anchor in re.findall(r"\]\(([\w.-]+\.md)#([\w-]+)\)", section):
        path = os.path.join(src, "docs", doc)
        if not os.path.exists(path) or anchor not in anchors(path):
            bad.append("link " + doc + "#" + anchor)
    for b in bad:
        print("docs/architecture.md, capability map: no such " + b)
    if checked < 100:
        print("docs/architecture.md: only %d names in the map" % checked)
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
