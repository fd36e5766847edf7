"""The documents of the repository read on their own, in a clone: every
relative link points at a file inside the repository (and an anchor at a
heading of that file), and the works Tandem follows are named (APSM,
FastMPJ, DART, Open MPI's monitoring, TinyMPI), not numbered as the "seeds"
they were given to the project as."""

from __future__ import annotations

import functools
import re

from conftest import ROOT

SKIP = {"build", ".venv", ".git"}


def documents():
    return [p for p in ROOT.rglob("*.md") if not SKIP & set(p.relative_to(ROOT).parts)]


def test_every_relative_link_stays_inside_the_repository_and_exists():
    broken = []
    for document in documents():
        for target in re.findall(r"\]\(([^)#\s]+)", document.read_text()):
            if re.match(r"[a-z]+:", target):
                continue  # a web address
            path = (document.parent / target).resolve()
            if not path.is_relative_to(ROOT) or not path.exists():
                broken.append(f"{document.relative_to(ROOT)}: {target}")
    assert not broken


@functools.cache
def headings(document) -> set[str]:
    """The anchors of a document's headings, as GitHub makes them: lower
    case, punctuation dropped, spaces as dashes, a repeated one numbered."""
    anchors, seen, fenced = set(), {}, False
    for line in document.read_text().splitlines():
        if line.startswith("```"):
            fenced = not fenced
        heading = re.match(r"#{1,6} (.+)", line)
        if heading and not fenced:
            anchor = re.sub(r"[^\w\- ]", "", heading.group(1).strip().lower()).replace(" ", "-")
            anchors.add(f"{anchor}-{seen[anchor]}" if anchor in seen else anchor)
            seen[anchor] = seen.get(anchor, 0) + 1
    return anchors


def test_every_anchor_names_a_heading_of_its_document():
    broken = []
    for document in documents():
        for target, anchor in re.findall(r"\]\(([^)#\s]*)#([^)\s]+)\)", document.read_text()):
            if re.match(r"[a-z]+:", target):
                continue
            linked = (document.parent / target).resolve() if target else document
            if linked.suffix == ".md" and linked.exists() and anchor not in headings(linked):
                broken.append(f"{document.relative_to(ROOT)}: {target}#{anchor}")
    assert not broken


def test_documents_name_the_works_they_follow():
    numbered = []
    for document in documents():
        for number, line in enumerate(document.read_text().splitlines(), 1):
            if re.search(r"\bseed (\d|paper)|\bthe seed's|\(seed\b", line, re.IGNORECASE):
                numbered.append(f"{document.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not numbered
