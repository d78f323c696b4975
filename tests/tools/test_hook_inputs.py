"""Which work-tree files installed git hooks read (agent/tools/hook_inputs.py): a manager named
in a hook brings its configs, a path the hook names is itself an input, `.sample`s are not hooks."""

from __future__ import annotations

from agent.tools.hook_inputs import MANAGER_CONFIGS, hook_inputs, installed_hooks


def test_installed_hooks_are_the_non_sample_files(tmp_path):
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for name in ("pre-commit", "pre-push.sample", "commit-msg"):
        (hooks / name).write_text("#!/bin/sh\n")
    (hooks / "folder").mkdir()
    assert [p.rsplit("/", 1)[1] for p in installed_hooks(str(hooks))] == ["commit-msg", "pre-commit"]
    assert installed_hooks(str(tmp_path / "none")) == []


def test_a_named_manager_brings_its_configs_and_named_paths_count(tmp_path):
    ws = tmp_path / "ws"
    (ws / "scripts").mkdir(parents=True)
    (ws / "scripts" / "lint.sh").write_text("true\n")
    hook = tmp_path / "pre-commit"
    hook.write_text("#!/bin/sh\nnpx lint-staged && sh ./scripts/lint.sh && cat /etc/hostname missing.txt\n")
    found = hook_inputs([str(hook)], str(ws), str(ws))
    assert str(ws / "scripts" / "lint.sh") in found
    for name in MANAGER_CONFIGS["lint-staged"]:
        assert str(ws / name) in found
    assert str(ws / "missing.txt") not in found  # named but no such file
    assert all(p.startswith(str(ws)) for p in found)  # /etc/hostname is not the workspace's


def test_a_word_that_merely_contains_a_managers_name_does_not_count(tmp_path):
    hook = tmp_path / "h"
    hook.write_text("#!/bin/sh\necho premake makefiles my-lefthooks\n")
    assert hook_inputs([str(hook)], str(tmp_path), str(tmp_path)) == []
