"""Skills (SPEC §13.3, the Agent Skills format): folders with a `SKILL.md` the model loads on demand.

Which skills exist (catalog.py) and the `skill-load` tool the model calls (tool.py); the loop
offers the tool (agent/turn/loop.py `_offer_skills`) only when a skill exists."""
