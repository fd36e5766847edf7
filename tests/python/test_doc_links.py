"""Every relative link of README and docs/ leads to a file and heading that
exist (tools/doc_links.py, also run by `make check`), and the checker finds
the ones that do not."""

from __future__ import annotations

import importlib.util

from conftest import ROOT


def doc_links():
    spec = importlib.util.spec_from_file_location("doc_links", ROOT / "tools" / "doc_links.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_documents_links_lead_somewhere(capsys):
    assert doc_links().main([]) == 0, capsys.readouterr().out


def test_broken_links_and_anchors_are_named(tmp_path, monkeypatch, capsys):
    module = doc_links()
    monkeypatch.setattr(module, "ROOT", tmp_path)
    (tmp_path / "other.md").write_text("# Other\n\n## A heading, with punctuation!\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n"
        "[fine](#page) [fine too](other.md#a-heading-with-punctuation) "
        "[site](https://example.org/x#y)\n"
        "[no file](missing.md) [no heading](other.md#nowhere)\n"
        "```\n# a comment in code, not a heading\n```\n"
        "[in code](#a-comment-in-code-not-a-heading)\n"
    )
    assert module.main([str(page)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "page.md:4: missing.md: no such file",
        "page.md:4: other.md#nowhere: no heading #nowhere in other.md",
        "page.md:8: #a-comment-in-code-not-a-heading: no heading "
        "#a-comment-in-code-not-a-heading in page.md",
    ]
