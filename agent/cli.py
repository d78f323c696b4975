"""Command line entry point (SPEC §11). Imports nothing heavy: the TUI must start fast."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path
from typing import Any

from agent import __version__
from agent.session.worktree_args import add_worktree_option, add_worktree_parser

# The subcommands: a first positional word naming one is that command; any other is the prompt.
COMMANDS = ("context", "session", "trust", "acp", "worktree")
COMMANDS_EPILOG = """commands (each has its own --help):
  cairn session list|export|import   list, export and import sessions
  cairn context SESSION_ID           what the next request of a session holds, pass by pass
  cairn trust [DIR]                  trust a folder's project config as it is now
  cairn acp                          serve the Agent Client Protocol on stdio (for editors)
  cairn worktree list|remove NAME    the git worktrees --worktree made; remove one (--force)
"""


def build_parser(*, commands: bool = False, add_help: bool = True) -> argparse.ArgumentParser:
    """The command line of SPEC §11. `commands`: the parser with the subcommands (a first
    positional that names one); else the one taking a PROMPT positional. argparse cannot hold
    both (an optional positional before subcommands eats the command's name), so parse_args
    below picks one by the first positional word."""
    parser = argparse.ArgumentParser(
        prog="cairn",
        usage=None
        if commands
        else "%(prog)s [options] [PROMPT]\n       %(prog)s {context,session,trust,acp,worktree} ...",
        description="cairn — a terminal coding agent. Run it in a project folder and ask for changes.",
        epilog=None if commands else COMMANDS_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        add_help=add_help,
    )
    if not commands:
        parser.add_argument(
            "prompt_text",
            nargs="?",
            metavar="PROMPT",
            help='start the TUI with this prompt sent (as `claude "query"`); with -p, the headless prompt, '
            "anywhere among the flags",
        )
    parser.add_argument("--version", action="version", version=f"cairn {__version__}")
    parser.add_argument("--model", metavar="M", help="any litellm model string, e.g. anthropic/claude-sonnet-4-5")
    parser.add_argument("--api-base", metavar="URL", help="base URL of an OpenAI-compatible or custom endpoint")
    parser.add_argument("--api-key", metavar="KEY", help="API key (default: the provider's environment variable)")
    parser.add_argument(
        "--yolo", action="store_true", default=None, help="run commands and change files without asking"
    )
    parser.add_argument(
        "--effort",
        choices=("off", "minimal", "low", "medium", "high"),
        help="how much a model that reasons thinks first (default: [llm] reasoning_effort, else the model's own)",
    )
    parser.add_argument(
        "--permission-mode",
        choices=PERMISSION_MODES,
        help="the mode to start in: default (edits and commands ask), acceptEdits (file edits in the "
        "workspace run without asking), plan (read-only: cairn plans, you approve); Shift+Tab switches in the TUI",
    )
    parser.add_argument("--cwd", metavar="DIR", help="workspace folder (default: the current folder)")
    parser.add_argument("--debug", action="store_true", help="write a debug log to <data dir>/cairn.log")
    add_worktree_option(parser)
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--continue", dest="continue_last", action="store_true", help="resume the latest session of this folder"
    )
    group.add_argument("--resume", nargs="?", const="", metavar="ID", help="resume a session by id (or prefix)")
    parser.add_argument(
        "-p",
        "--print",
        dest="prompt",
        metavar="PROMPT",
        nargs="?",
        const="",
        help="run one task headless and print the answer; PROMPT may follow -p or stand anywhere among "
        "the flags; text piped on stdin is appended to it (-p alone: stdin is the whole prompt)",
    )
    parser.add_argument(
        "--output-format",
        choices=("text", "json", "stream-json"),
        default="text",
        help="headless output: the final answer, one JSON result object (Claude Code's keys, cairn's "
        "beside them), or every event as a JSON line as it happens (docs/headless.md)",
    )
    parser.add_argument(
        "--input-format",
        choices=("text", "stream-json"),
        default="text",
        help="stream-json: after PROMPT, read follow-up user messages from stdin, one JSON "
        "object a line (needs --output-format stream-json)",
    )
    parser.add_argument(
        "--max-turns", type=int, metavar="N", help="headless: stop (exit 3) before model request N+1 of the run"
    )
    parser.add_argument(
        "--max-cost",
        type=float,
        metavar="USD",
        help="headless: stop (exit 4) before a request once the run cost this much",
    )
    parser.add_argument(
        "--allowed-tools",
        metavar="LIST",
        help="headless: only these tools, e.g. 'filesystem-read,terminal-execute(git log)'; "
        "another call stops the run (exit 5)",
    )
    parser.add_argument(
        "--disallowed-tools",
        metavar="LIST",
        help="headless: never these tools or command prefixes; a call stops the run (exit 6)",
    )
    if not commands:
        parser.set_defaults(command=None)
        return parser
    sub = parser.add_subparsers(dest="command", metavar="{context,session,trust,acp,worktree}")
    ctx = sub.add_parser("context", help="show what the next request of a session holds, pass by pass")
    ctx.add_argument("session_id", metavar="SESSION_ID", help="session id (or a unique prefix)")
    ctx.add_argument(
        "--at", type=int, metavar="MS_EPOCH", help="evaluate time-based passes as if now were this instant"
    )
    ctx.add_argument("--json", action="store_true", help="print one JSON object")
    ctx.add_argument("--dump", action="store_true", help="also print the exact request messages")
    _add_session_parser(sub)
    trust = sub.add_parser(
        "trust",
        help="trust a folder's .cairn/config.toml as it is now "
        "(yolo, api_base, api_key, model, [permissions], hooks then apply), and its .claude/ hooks",
    )
    trust.add_argument("dir", nargs="?", metavar="DIR", help="the folder (default: --cwd or the current folder)")
    sub.add_parser("acp", help="serve the Agent Client Protocol on stdio (for editors: Zed, JetBrains, Neovim, Emacs)")
    add_worktree_parser(sub.add_parser)
    return parser


# agent/tools/modes.py MODES, written out for the same reason (tests/tools/test_modes.py checks).
PERMISSION_MODES = ("default", "acceptEdits", "plan")
# agent/session/importers FORMATS, written out so that parsing the command line imports nothing
# (tests/test_cli_session.py checks they agree).
IMPORT_FORMATS = (
    "auto",
    "cairn",
    "claude-code",
    "codex",
    "gemini-cli",
    "mistral-vibe",
    "swe-agent",
    "mini-swe-agent",
    "openai",
)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """`cairn session list` is a command, `cairn "fix the bug"` and `cairn -p --model m "x"`
    a prompt: the first positional word (options and their values aside, found by a
    help-less scan) decides which parser reads the line. With -p, a positional is its prompt."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    scanned, _unknown = build_parser(add_help=False).parse_known_args(args_list)
    if scanned.prompt_text in COMMANDS:
        return build_parser(commands=True).parse_args(args_list)
    parser = build_parser()
    args = parser.parse_args(args_list)
    if args.prompt is not None and args.prompt_text is not None:
        if args.prompt:
            parser.error(f"two prompts given ({args.prompt!r} after -p and {args.prompt_text!r}); quote it as one")
        args.prompt, args.prompt_text = args.prompt_text, None
    return args


def _add_session_parser(sub: argparse._SubParsersAction) -> None:
    """`cairn session list|export|import`; the bodies live in agent/session/cli.py."""
    session = sub.add_parser("session", help="list, export and import sessions")
    commands = session.add_subparsers(dest="session_command", metavar="{list,export,import}", required=True)
    listing = commands.add_parser("list", help="every session, newest first")
    listing.add_argument("--json", action="store_true", help="print one JSON array")
    export = commands.add_parser("export", help="write a session as JSONL (lossless) or Markdown (to read)")
    export.add_argument("session_id", metavar="ID", help="session id (or a unique prefix)")
    export.add_argument(
        "--format",
        choices=("md", "jsonl"),
        default="jsonl",
        help="jsonl: every message of every branch, re-importable (default); md: a transcript",
    )
    export.add_argument("-o", dest="output", metavar="FILE", help="write to FILE instead of standard output")
    imp = commands.add_parser("import", help="store a session from a file and print its new id")
    imp.add_argument(
        "file",
        metavar="FILE",
        help="a cairn JSONL export, a Claude Code session file or OpenAI chat messages in JSON ('-': standard input)",
    )
    imp.add_argument("--format", default="auto", help="input format (default: detect)", choices=IMPORT_FORMATS)
    imp.add_argument("--json", action="store_true", help='print {"session_id": ...}')


async def _context_command(args: argparse.Namespace, workspace: Path, flags: dict) -> int:
    import json

    from agent.context.inspect import MAX_LISTED_EVENTS, context_report, format_report
    from agent.fs.terminal_text import inert, inert_json
    from agent.session.loading import load_session_messages
    from agent.session.models import now_ms
    from agent.session.store import Store
    from agent.settings.config import load_settings

    store = await Store.open()
    try:
        session = await store.find_session(args.session_id)
        if session is None:
            print(f"Error: no session matches '{args.session_id}'.", file=sys.stderr)
            return 2
        history = await load_session_messages(store, session.id)
        events = await store.context_events(session.id, limit=MAX_LISTED_EVENTS)
        last_request = await store.last_request(session.id)
    finally:
        await store.close()
    session_workspace = Path(session.cwd) if session.cwd and Path(session.cwd).is_dir() else workspace
    settings = load_settings(session_workspace, flags=flags)
    report = context_report(
        history,
        settings=settings,
        session_id=session.id,
        model=settings.model or session.model,
        workspace=session_workspace,
        now_ms=args.at if args.at is not None else now_ms(),
        dump=args.dump,
        last_request=last_request,
    )
    report["events"] = [e.model_dump() for e in events]
    # The session's text is the model's and the tools': inert on the terminal (JSON: same values).
    if args.json:
        print(inert_json(json.dumps(report, ensure_ascii=False)))
    else:
        print(inert(format_report(report)))
        if args.dump:
            print(inert_json(json.dumps(report["messages"], ensure_ascii=False, indent=2)))
    return 0


def _trust_command(args: argparse.Namespace, workspace: Path) -> int:
    """`cairn trust [DIR]`: print what the folder's config, `.mcp.json` and Claude Code hooks run,
    then record them as trusted as they are (agent/settings/trust_command.py)."""
    from agent.settings.trust_command import trust_folder

    return trust_folder(Path(args.dir).expanduser() if args.dir else workspace)


class RedactSecrets(logging.Filter):
    """On the log file's handler: API keys (ours, key-like env vars, key-shaped strings such
    as a provider's `Authorization: Bearer …`) never reach cairn.log, whichever logger
    (`agent`, or litellm's via CAIRN_DEBUG=LiteLLM) wrote the record."""

    def filter(self, record: logging.LogRecord) -> bool:
        from agent.process.secrets import redact_secrets

        try:
            message = record.getMessage()
        except Exception:  # a broken format string: log it as given
            message = f"{record.msg} {record.args}"
        record.msg, record.args = redact_secrets(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact_secrets(record.exc_text)
        if record.stack_info:
            record.stack_info = redact_secrets(record.stack_info)
        return True


def _setup_logging(debug: bool, api_key: str | None = None) -> None:
    names = [n.strip() for n in os.environ.get("CAIRN_DEBUG", "").split(",") if n.strip()]
    if not debug and not names:
        logging.getLogger("agent").addHandler(logging.NullHandler())
        return
    from agent.paths import data_dir
    from agent.process.secrets import remember_secret

    remember_secret(api_key)
    folder = data_dir()
    folder.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(folder / "cairn.log", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactSecrets())
    for name in names or ["agent"]:
        logger = logging.getLogger(name)
        logger.setLevel(logging.DEBUG)
        logger.addHandler(handler)


def main(argv: list[str] | None = None, *, warm: bool = True) -> int:
    """`warm`: a `-p` run may go to the warm backend (agent/headless/warm_client.py) when the
    user set CAIRN_WARM=1; the backend's own children run with warm=False."""
    args = parse_args(argv)
    if warm and args.prompt is not None and not args.command:
        from agent.headless.warm_client import WarmUnavailable, run_warm, start_backend, warm_requested

        if warm_requested():
            try:
                return run_warm(list(sys.argv[1:] if argv is None else argv), args.api_key)
            except WarmUnavailable:
                start_backend()  # for the runs that follow; this one runs here
    _setup_logging(args.debug, args.api_key)
    workspace = Path(args.cwd).expanduser() if args.cwd else Path.cwd()
    if not workspace.is_dir():
        print(f"Error: --cwd {workspace} is not a folder.", file=sys.stderr)
        return 2
    flags: dict[str, Any] = {"model": args.model, "api_base": args.api_base, "api_key": args.api_key, "yolo": args.yolo}
    if args.effort:
        flags["effort"] = args.effort
    if args.permission_mode:
        flags["permission_mode"] = args.permission_mode
    if args.resume == "" and (args.prompt is not None or args.command):
        # Only the TUI has a picker; `cairn --resume` alone opens it.
        print(
            "Error: --resume needs a session id (or a unique prefix of one) here; `cairn session list` shows them.",
            file=sys.stderr,
        )
        return 2
    if args.worktree is not None:
        if args.command:
            print("Error: --worktree applies to a session (the TUI or -p), not to a command.", file=sys.stderr)
            return 2
        from agent.session.worktree_cli import enter

        entered = enter(args.worktree, workspace)
        if isinstance(entered, int):
            return entered
        workspace = entered
    if args.command == "session":
        from agent.session.cli import run

        return run(args, workspace)
    if args.command == "trust":
        return _trust_command(args, workspace)
    if args.command == "worktree":
        from agent.session.worktree_cli import run as worktree_run

        return worktree_run(args, workspace)
    if args.command == "acp":
        from agent.acp.server import serve

        return serve(flags)
    if args.command == "context":
        import asyncio

        try:
            return asyncio.run(_context_command(args, workspace, flags))
        except Exception as exc:  # a damaged or unwritable data folder: its one line, no traceback
            from agent.session.errors import StoreOpenError

            if not isinstance(exc, StoreOpenError):
                raise
            print(f"Error: {exc}", file=sys.stderr)
            return 1
    if args.prompt is not None:
        import asyncio

        limits = _run_limits(args)
        if isinstance(limits, int):
            return limits
        prompt = args.prompt
        if args.input_format == "text":  # with stream-json, stdin carries the messages
            from agent.headless.input import PipedInputError, prompt_with_stdin

            try:
                prompt = prompt_with_stdin(args.prompt, sys.stdin)
            except PipedInputError as exc:
                print(f"Error: {exc}", file=sys.stderr)
                return 2
        from agent.headless.run import run_headless
        from agent.settings.config import load_config

        config = load_config(workspace, flags=flags)

        try:
            return asyncio.run(
                run_headless(
                    config.settings,
                    prompt,
                    warnings=config.warnings,
                    output_format=args.output_format,
                    input_format=args.input_format,
                    limits=limits,
                    resume_id=args.resume,
                    continue_last=args.continue_last,
                    out=sys.stdout,
                    err=sys.stderr,
                )
            )
        except KeyboardInterrupt:
            return 130
    if (
        any(v is not None for v in (args.max_turns, args.max_cost, args.allowed_tools, args.disallowed_tools))
        or args.output_format != "text"
        or args.input_format != "text"
    ):
        print(
            "Error: --output-format, --input-format, --max-turns, --max-cost, --allowed-tools and "
            "--disallowed-tools apply to a headless run (-p PROMPT).",
            file=sys.stderr,
        )
        return 2
    return _run_tui(args, workspace, flags)


def _run_limits(args: argparse.Namespace):
    """The run's limits from the flags (None: none given), or exit code 2 after saying why."""
    given = (args.max_turns, args.max_cost, args.allowed_tools, args.disallowed_tools)
    problem = ""
    if args.input_format == "stream-json" and args.output_format != "stream-json":
        problem = "--input-format stream-json needs --output-format stream-json"
    elif args.max_turns is not None and args.max_turns < 1:
        problem = "--max-turns must be at least 1"
    elif args.max_cost is not None and not args.max_cost > 0:
        problem = "--max-cost must be more than 0 (US dollars)"
    if problem:
        print(f"Error: {problem}.", file=sys.stderr)
        return 2
    if all(value is None for value in given):
        return None
    from agent.headless.limits import RunLimits, ToolRuleError, parse_tool_rules
    from agent.skills.tool import NAME as SKILL_LOAD
    from agent.subagents.tool import NAME as SUBAGENT
    from agent.tools.lsp_tool import Lsp
    from agent.tools.registry import default_registry

    # The fixed tools, then those a session adds when it has something to offer.
    known = [*default_registry(every=True).names, SUBAGENT, SKILL_LOAD, Lsp.name]
    try:
        allowed = parse_tool_rules(args.allowed_tools, known) if args.allowed_tools is not None else None
        disallowed = parse_tool_rules(args.disallowed_tools or "", known)
    except ToolRuleError as exc:
        print(f"Error: {exc}.", file=sys.stderr)
        return 2
    return RunLimits(max_turns=args.max_turns, max_cost=args.max_cost, allowed=allowed, disallowed=disallowed)


def _resumed_history(args: argparse.Namespace, workspace: Path):
    """For `--resume ID` / `--continue`: the session's last messages as first-screen lines."""
    if not args.resume and not args.continue_last:
        return None

    def lines(width: int) -> list[str]:
        from agent.paths import db_path
        from agent.session.peek import peek_tail
        from agent.ui.early_history import history_lines

        messages = peek_tail(db_path(), resume_id=args.resume or None, cwd=None if args.resume else str(workspace))
        return history_lines(messages, width) if messages else []

    return lines


def _run_tui(args: argparse.Namespace, workspace: Path, flags: dict) -> int:
    """The prompt is drawn (agent/ui/early.py) before Textual is imported; what is typed
    meanwhile goes to the app. Settings load after the app's first frame, for the same reason."""
    from agent.ui.early import EarlyScreen

    early = EarlyScreen.start(history=_resumed_history(args, workspace))
    try:
        from agent.ui.app import CairnApp

        app = CairnApp(
            workspace=workspace,
            flags=flags,
            resume_id=args.resume,
            continue_last=args.continue_last,
            initial_prompt=getattr(args, "prompt_text", None),
        )
    except BaseException:
        if early is not None:
            early.abandon()
        raise
    if early is not None:
        app.typeahead = early.stop()
    try:
        app.run()
    finally:
        if early is not None:  # the app restored the mode it found, the first screen's hand-off mode
            early.restore()
    return app.return_code or 0


if __name__ == "__main__":
    sys.exit(main())
