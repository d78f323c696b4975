"""`fold_files` end to end on real files: sample sources in every language and an installed package."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from agent.context.folding import fold_files
from tests.context.folding.test_names import SAMPLES


def count(text: str) -> int:
    return len(text) // 4


def blocks(text: str) -> list[str]:
    return re.findall(r"<system-reminder>\n(.*?)\n</system-reminder>", text, flags=re.S)


@pytest.fixture
def sources(tmp_path) -> Path:
    for suffix, (source, _, _) in SAMPLES.items():
        (tmp_path / "src").mkdir(exist_ok=True)
        (tmp_path / "src" / f"sample{suffix}").write_text(source)
    return tmp_path


def test_every_language_folds_to_names_in_its_own_block(sources):
    paths = sorted((sources / "src").iterdir())
    result = fold_files(paths, workspace=sources, count_tokens=count)
    assert result.skipped == [] and result.dropped == []
    assert result.folded == [f"src/{p.name}" for p in paths]
    found = blocks(result.text)
    assert len(found) == len(paths) == result.text.count("<system-reminder>")
    for path, block in zip(paths, found, strict=False):
        lines = block.splitlines()
        assert lines[0] == f"## File Context: src/{path.name}"
        _, containers, functions = SAMPLES[path.suffix]
        for container in containers:  # each class/interface on its own line
            assert any(line.strip() == container for line in lines), (path.name, container)
        listed = {n for line in lines if "functions: " in line for n in line.split(": ", 1)[1].split(", ")}
        assert set(functions) <= listed, path.name
    assert "return" not in result.text and "println" not in result.text  # names only, no bodies


def test_methods_are_rendered_under_their_class(sources):
    result = fold_files(["src/sample.py"], workspace=sources, count_tokens=count)
    assert blocks(result.text) == [
        "## File Context: src/sample.py\nclass Repository\n  functions: __init__, size\nfunctions: load, fetch"
    ]


def test_a_long_file_splits_its_functions_by_span(tmp_path):
    body = "".join(f"def f{i}(x):\n" + "    x += 1\n" * 28 + "    return x\n\n" for i in range(10))
    (tmp_path / "long.py").write_text(body)  # ten 30-line functions, a blank line apart
    result = fold_files(["long.py"], workspace=tmp_path, count_tokens=count)
    lines = blocks(result.text)[0].splitlines()[1:]
    assert lines == ["functions: f0, f1, f2", "functions: f3, f4, f5", "functions: f6, f7, f8", "functions: f9"]
    result = fold_files(["long.py"], workspace=tmp_path, max_line_span=1000, count_tokens=count)
    assert blocks(result.text)[0].splitlines()[1:] == ["functions: " + ", ".join(f"f{i}" for i in range(10))]


def test_a_real_installed_module_folds_with_the_default_tokenizer():
    import textual.widget

    path = Path(textual.widget.__file__)
    result = fold_files([path], workspace=path.parent)
    assert result.folded == ["widget.py"] and result.skipped == []
    lines = blocks(result.text)[0].splitlines()
    assert "class Widget" in lines and "class AwaitMount" in lines
    function_lines = [line for line in lines if line.startswith("  functions: ")]
    assert len(function_lines) > 5  # Widget's methods span thousands of lines
    names = {n for line in function_lines for n in line.split(": ", 1)[1].split(", ")}
    assert {"mount", "refresh", "scroll_to", "render"} <= names
    assert 0 < result.tokens < len(path.read_text()) // 20  # names only: a sliver of the file


def test_over_budget_drops_whole_files_reproducibly(tmp_path):
    paths = []
    for i in range(30):
        path = tmp_path / f"mod{i:02d}.py"
        path.write_text("".join(f"def function_{i}_{j}():\n    pass\n" for j in range(20)))
        paths.append(path)
    full = fold_files(paths, workspace=tmp_path, max_tokens=10**9, count_tokens=count)
    budget = full.tokens // 3
    first = fold_files(paths, workspace=tmp_path, max_tokens=budget, seed=11, count_tokens=count)
    again = fold_files(paths, workspace=tmp_path, max_tokens=budget, seed=11, count_tokens=count)
    assert first == again
    assert first.tokens <= budget and count(first.text) == first.tokens
    assert first.dropped and sorted(first.folded + first.dropped) == [p.name for p in paths]
    assert len(blocks(first.text)) == len(first.folded)
    others = {
        tuple(fold_files(paths, workspace=tmp_path, max_tokens=budget, seed=s, count_tokens=count).folded)
        for s in range(6)
    }
    assert len(others) > 1


def test_unfoldable_files_are_skipped_with_a_reason_never_raised(tmp_path):
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "blob.py").write_bytes(b"def a():\n\x00\x01\x02")
    (tmp_path / "broken.py").write_text("def broken(:\n    return (\n")
    (tmp_path / "pkg.py").mkdir()
    (tmp_path / "bundle.js").write_text("function a(){return 1}" * 1000)
    (tmp_path / "ok.go").write_text("package x\n\nfunc Ok() {}\n")
    names = ["notes.txt", "blob.py", "broken.py", "pkg.py", "missing.rs", "Makefile", "bundle.js", "ok.go"]
    result = fold_files(names, workspace=tmp_path, count_tokens=count)
    assert result.folded == ["ok.go"]
    reasons = {s.path: s.reason for s in result.skipped}
    assert set(reasons) == set(names) - {"ok.go"}
    assert reasons["notes.txt"] == reasons["Makefile"] == "unknown language"
    assert reasons["blob.py"] == "binary" and reasons["bundle.js"] == "minified"
    assert reasons["broken.py"].startswith("unparsable")
    assert reasons["pkg.py"].startswith("unreadable") and reasons["missing.rs"].startswith("unreadable")


def test_reads_the_file_as_it_is_now_and_folds_duplicates_once(tmp_path):
    path = tmp_path / "live.py"
    path.write_text("def before():\n    pass\n")
    assert "before" in fold_files([path], workspace=tmp_path, count_tokens=count).text
    path.write_text("def after():\n    pass\n")
    result = fold_files([path, "live.py", "./live.py"], workspace=tmp_path, count_tokens=count)
    assert "after" in result.text and "before" not in result.text
    assert result.folded == ["live.py"]


def test_outside_the_workspace_shows_the_absolute_path(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b.rb").write_text("def hi\nend\n")
    result = fold_files([tmp_path / "b.rb"], workspace=tmp_path / "a", count_tokens=count)
    assert result.folded == [(tmp_path / "b.rb").as_posix()]


def test_no_files_no_text():
    result = fold_files([], workspace=Path("."), count_tokens=count)
    assert (result.text, result.tokens, result.folded) == ("", 0, [])


def test_importing_folding_does_not_load_the_grammars():
    repo = Path(__file__).resolve().parents[3]
    code = "import sys, json, agent.context.folding; print(json.dumps(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    loaded = json.loads(out.stdout)
    assert [m for m in loaded if m.startswith(("tree_sitter", "tiktoken"))] == []
