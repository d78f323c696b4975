"""``python -m tests.fakes`` == ``python -m tests.fakes.llm_server`` (see that module)."""

from tests.fakes.llm_server import main

raise SystemExit(main())
