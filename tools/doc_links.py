#!/usr/bin/env python3
"""Check the links between the project's Markdown documents: every relative
link names a file that exists, and every #anchor a heading of its target
(GitHub's slugs: lower case, punctuation dropped, spaces as hyphens).

    tools/doc_links.py [FILE.md ...]     (default: README.md and docs/**/*.md)

Prints each broken link as FILE:LINE: LINK: why, and exits 1 if there is one.
"""

from __future__ import annotations

import re
import sys
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")


def slug(heading: str) -> str:
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


@cache
def anchors(path: Path) -> frozenset[str]:
    found, fenced = set(), False
    for line in path.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        match = None if fenced else HEADING.match(line)
        if match:
            found.add(slug(match.group(1)))
    return frozenset(found)


def broken(path: Path) -> list[str]:
    problems = []
    for number, line in enumerate(path.read_text().splitlines(), 1):
        for match in LINK.finditer(line):
            link = match.group(1)
            if re.match(r"[a-z]+:", link):
                continue  # http:, https:, mailto:
            name, _, anchor = link.partition("#")
            target = (path.parent / name).resolve() if name else path
            where = f"{path.relative_to(ROOT)}:{number}: {link}"
            if not target.exists():
                problems.append(f"{where}: no such file")
            elif anchor and target.suffix == ".md" and anchor not in anchors(target):
                problems.append(f"{where}: no heading #{anchor} in {target.relative_to(ROOT)}")
    return problems


def main(argv: list[str]) -> int:
    files = [Path(a).resolve() for a in argv] or [ROOT / "README.md", *ROOT.glob("docs/**/*.md")]
    problems = [p for f in sorted(files) for p in broken(f)]
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
