"""Command line entry point (SPEC §11). Imports nothing heavy: the TUI must start fast."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

from agent import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cairn",
        description="cairn — a terminal coding agent. Run it in a project folder and ask for changes.",
    )
    parser.add_argument("--version", action="version", version=f"cairn {__version__}")
    parser.add_argument("--model", metavar="M", help="any litellm model string, e.g. anthropic/claude-sonnet-4-5")
    parser.add_argument("--api-base", metavar="URL", help="base URL of an OpenAI-compatible or custom endpoint")
    parser.add_argument("--api-key", metavar="KEY", help="API key (default: the provider's environment variable)")
    parser.add_argument("--yolo", action="store_true", default=None,
                        help="run commands and change files without asking")
    parser.add_argument("--cwd", metavar="DIR", help="workspace folder (default: the current folder)")
    parser.add_argument("--debug", action="store_true", help="write a debug log to <data dir>/cairn.log")
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--continue", dest="continue_last", action="store_true",
                       help="resume the latest session of this folder")
    group.add_argument("--resume", nargs="?", const="", metavar="ID", help="resume a session by id (or prefix)")
    parser.add_argument("-p", "--print", dest="prompt", metavar="PROMPT",
                        help="run one task headless and print the answer")
    parser.add_argument("--output-format", choices=("text", "json"), default="text",
                        help="headless output: the final answer, or every stored message as JSON lines")
    return parser


def _setup_logging(debug: bool) -> None:
    names = [n.strip() for n in os.environ.get("CAIRN_DEBUG", "").split(",") if n.strip()]
    if not debug and not names:
        logging.getLogger("agent").addHandler(logging.NullHandler())
        return
    from agent.config import data_dir

    folder = data_dir()
    folder.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(folder / "cairn.log", encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    for name in names or ["agent"]:
        logger = logging.getLogger(name)
        logger.setLevel(logging.DEBUG)
        logger.addHandler(handler)


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    _setup_logging(args.debug)
    workspace = Path(args.cwd).expanduser() if args.cwd else Path.cwd()
    if not workspace.is_dir():
        print(f"Error: --cwd {workspace} is not a folder.", file=sys.stderr)
        return 2
    flags = {"model": args.model, "api_base": args.api_base, "api_key": args.api_key, "yolo": args.yolo}
    if args.resume == "":
        print("Error: --resume needs a session id (or a unique prefix of one).", file=sys.stderr)
        return 2
    if args.prompt is not None:
        import asyncio

        from agent.config import load_settings
        from agent.headless import run_headless

        settings = load_settings(workspace, flags=flags)

        try:
            return asyncio.run(
                run_headless(settings, args.prompt, output_format=args.output_format,
                             resume_id=args.resume, continue_last=args.continue_last)
            )
        except KeyboardInterrupt:
            return 130
    from agent.ui.app import CairnApp

    # Settings load after the first frame: the prompt takes typing sooner.
    app = CairnApp(workspace=workspace, flags=flags, resume_id=args.resume, continue_last=args.continue_last)
    app.run()
    return app.return_code or 0


if __name__ == "__main__":
    sys.exit(main())
