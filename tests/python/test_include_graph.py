"""The modules of src/ include each other without cycles, and no .c file
declares another module's function behind its header's back
(tools/include_graph.py, also run by `make check`)."""

from __future__ import annotations

import importlib.util
import re

from conftest import ROOT


def include_graph():
    spec = importlib.util.spec_from_file_location(
        "include_graph", ROOT / "tools" / "include_graph.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write(root, files):
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def test_the_modules_of_src_form_no_cycle(capsys):
    assert include_graph().main([]) == 0, capsys.readouterr().err


def test_a_cycle_is_found_through_headers_and_across_directories(tmp_path):
    graph = include_graph()
    src = tmp_path / "src"
    write(
        src,
        {
            "core/a.c": '#include "core/a.h"\n#include "core/b.h"\n',
            "core/a.h": "",
            "core/b.c": '#include "core/b.h"\n',
            "core/b.h": '#include "mon/c.h"\n',  # b depends on c through its header
            "mon/c.c": '#include "mon/c.h"\n#include "core/a.h"\n',
            "mon/c.h": "",
            "mon/d.c": '#include "core/a.h"\n',  # depends on the cycle, not in it
        },
    )
    found = graph.cycles(graph.modules(src))
    assert found == [(["core/a", "core/b", "mon/c"], ["core/a", "core/b", "mon/c", "core/a"])]
    assert graph.main(["--src", str(src)]) == 1


def test_a_prototype_of_another_modules_function_is_found(tmp_path):
    graph = include_graph()
    src = tmp_path / "src"
    write(
        src,
        {
            "m/a.c": (
                "/* tdm_b_hidden(void); in a comment is no declaration */\n"
                "void tdm_b_write(int x); /* defined in b.c */\n"
                "static int tdm_a_helper(void);\n"
                "int tdm_a_defined(void);\n"
                "int tdm_a_defined(void)\n{\n    int tdm_local(void);\n    return 0;\n}\n"
                "int (*tdm_a_hook)(void);\n"
                'const char *tdm_a_text = "tdm_c_fake(void);";\n'
            ),
            "m/b.c": "void tdm_b_write(int x)\n{\n    (void)x;\n}\n",
        },
    )
    assert graph.stray_prototypes(src) == ["src/m/a.c: declares tdm_b_write"]


def test_design_lists_what_the_core_and_the_monitor_include():
    """docs/DESIGN.md's module lines are those of tools/include_graph.py --graph."""
    graph = include_graph().modules(ROOT / "src")
    expected = {m: deps for m, deps in graph.items() if m.startswith(("core/", "monitor/"))}
    text = (ROOT / "docs" / "DESIGN.md").read_text()
    listed = re.findall(r"^((?:core|monitor)/\w+):(.*)$", text, re.MULTILINE)
    assert {module: set(deps.split()) for module, deps in listed} == expected
