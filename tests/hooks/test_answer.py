"""A finished hook's answer, read as Claude Code reads it: exit codes first, then JSON on stdout."""

from __future__ import annotations

import json

from agent.hooks.answer import HookAnswer, combine, read_answer


def answer(event: str, code: int | None, stdout: str = "", stderr: str = "") -> HookAnswer:
    return read_answer(event, code, stdout, stderr, label="`guard`")


def test_exit_0_goes_on_and_plain_stdout_is_context_only_where_claude_code_makes_it_so():
    assert answer("PreToolUse", 0, "fine\n") == HookAnswer()
    assert answer("UserPromptSubmit", 0, "today is Tuesday\n").context == "today is Tuesday"
    assert answer("SessionStart", 0, "branch: main\n").context == "branch: main"
    assert answer("PostToolUse", 0, "formatted\n").context == ""


def test_exit_2_blocks_with_stderr_and_ignores_stdout():
    got = answer("PreToolUse", 2, json.dumps({"decision": "approve"}), "no rm here\n")
    assert got.block == "no rm here" and got.permission is None
    assert answer("Stop", 2).block == "blocked by a Stop hook (`guard`)"  # never an empty reason


def test_other_codes_and_no_code_are_warnings_that_decide_nothing():
    got = answer("PreToolUse", 1, "", "oops")
    assert got.block is None and got.permission is None
    assert got.warning == "PreToolUse hook `guard` failed (exit code 1): oops"
    assert "did not finish" in answer("Stop", None, "", "could not start").warning
    assert answer("Stop", 127, "", "").warning.endswith("no message")


def test_json_decision_block_and_approve():
    got = answer("PreToolUse", 0, json.dumps({"decision": "block", "reason": "not on main"}))
    assert got.block == "not on main"
    assert answer("PreToolUse", 0, json.dumps({"decision": "approve"})).permission == "allow"
    assert answer("Stop", 0, json.dumps({"decision": "block", "reason": "run the tests"})).block == "run the tests"
    assert answer("Stop", 0, json.dumps({"decision": "approve"})).permission is None  # PreToolUse only
    assert answer("UserPromptSubmit", 0, json.dumps({"decision": "block"})).block


def test_json_permission_decisions_win_over_the_older_decision():
    def specific(**fields):
        return json.dumps({"decision": "approve", "hookSpecificOutput": {"hookEventName": "PreToolUse", **fields}})

    deny = answer("PreToolUse", 0, specific(permissionDecision="deny", permissionDecisionReason="no prod"))
    assert deny.permission == "deny" and deny.block == "no prod"
    ask = answer("PreToolUse", 0, specific(permissionDecision="ask"))
    assert ask.permission == "ask" and ask.block is None
    assert answer("PreToolUse", 0, specific(permissionDecision="allow")).permission == "allow"
    assert answer("PreToolUse", 0, specific(permissionDecision="maybe")).permission == "allow"  # unknown: ignored


def test_json_continue_false_context_message_and_updated_input():
    got = answer(
        "PreToolUse",
        0,
        json.dumps(
            {
                "continue": False,
                "stopReason": "build is red",
                "systemMessage": "heads up",
                "hookSpecificOutput": {"additionalContext": "CI is down", "updatedInput": {"command": "ls"}},
            }
        ),
    )
    assert got.stop == "build is red" and got.message == "heads up" and got.context == "CI is down"
    assert got.updated_input == {"command": "ls"}
    assert (
        answer("PostToolUse", 0, json.dumps({"hookSpecificOutput": {"updatedInput": {"a": 1}}})).updated_input is None
    )
    assert answer("Stop", 0, json.dumps({"continue": False})).stop == ""


def test_stdout_that_is_not_a_json_object_is_plain_text():
    assert answer("UserPromptSubmit", 0, "[1, 2]").context == "[1, 2]"
    assert answer("UserPromptSubmit", 0, "{not json").context == "{not json"
    assert answer("PreToolUse", 0, "{not json").block is None


def test_combining_answers_any_block_blocks_and_deny_beats_ask_beats_allow():
    verdict = combine(
        [
            HookAnswer(permission="allow", context="a"),
            HookAnswer(block="first", permission="ask"),
            HookAnswer(block="second", warning="w", message="m", context="b"),
        ]
    )
    assert verdict.block == "first\nsecond" and verdict.permission == "ask"
    assert verdict.context == "a\n\nb" and verdict.warnings == ("w",) and verdict.messages == ("m",)
    assert combine([HookAnswer(permission="ask"), HookAnswer(permission="deny")]).permission == "deny"
    assert combine([]).block is None and combine([]).stop is None


def test_a_huge_reason_is_clipped():
    got = answer("PreToolUse", 2, "", "x" * 100_000)
    assert got.block is not None and len(got.block) < 21_000 and "characters cut" in got.block
