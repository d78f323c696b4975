"""Skills: a folder with a SKILL.md (tests/skills/helpers.py writes them)."""
