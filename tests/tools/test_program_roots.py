"""The folders a program loads code from (agent/tools/program_roots.py), kept read-only whole:
a virtualenv in the workspace (a planted `.pth` runs at every start of its Python, cairn's own
included when it is installed there) and a node package a hook's `npx` runs. The sandbox's
side, with real bwrap: tests/hostile/test_sandbox_writes.py."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from agent.tools.program_roots import own_installation, program_roots
from agent.tools.sandbox_protect import Protection


def venv(at: Path) -> Path:
    (at / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    (at / "bin").mkdir()
    (at / "bin" / "python").symlink_to(sys.executable)  # as venv makes it: a link out of the workspace
    (at / "pyvenv.cfg").write_text("home = /usr/bin\n")
    return at


def test_a_file_in_a_virtualenv_brings_the_whole_environment(tmp_path):
    ws = tmp_path / "ws"
    env = venv(ws / ".venv")
    (ws / "tools").mkdir()
    (ws / "tools" / "server.py").write_text("")
    roots = program_roots([str(env / "bin" / "python"), str(ws / "tools" / "server.py")], str(ws))
    assert roots == [str(env)]  # the script outside any venv brings nothing more


def test_a_file_in_a_node_package_brings_the_package(tmp_path):
    ws = tmp_path / "ws"
    pkg = ws / "node_modules" / "@acme" / "lint" / "bin"
    pkg.mkdir(parents=True)
    (pkg / "cli.js").write_text("")
    plain = ws / "node_modules" / "prettier"
    plain.mkdir(parents=True)
    (plain / "index.js").write_text("")
    roots = program_roots([str(pkg / "cli.js"), str(plain / "index.js")], str(ws))
    assert roots == [str(ws / "node_modules" / "@acme" / "lint"), str(plain)]


def test_nothing_outside_the_workspace_and_cairns_own_install_is_named(tmp_path):
    assert program_roots(["/usr/bin/python3"], str(tmp_path)) == []
    assert os.path.realpath(sys.executable) in own_installation() and sys.prefix in own_installation()


def test_cairn_installed_in_the_projects_venv_protects_that_venv(tmp_path, monkeypatch):
    ws = tmp_path / "ws"
    env = venv(ws / ".venv")
    monkeypatch.setattr(sys, "prefix", str(env))
    assert str(env) in Protection(ws).paths()
