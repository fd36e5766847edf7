"""The documents of the repository read on their own, in a clone: every
relative link points at a file inside the repository, and the works Tandem
follows are named (APSM, FastMPJ, DART, Open MPI's monitoring, TinyMPI),
not numbered as the "seeds" they were given to the project as."""

from __future__ import annotations

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


def test_documents_name_the_works_they_follow():
    numbered = []
    for document in documents():
        for number, line in enumerate(document.read_text().splitlines(), 1):
            if re.search(r"\bseed (\d|paper)|\bthe seed's|\(seed\b", line, re.IGNORECASE):
                numbered.append(f"{document.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not numbered
