"""The JSON schema a tool's arguments model shows the model: only what guides a call.

Every request carries every tool definition, so each token in them is paid on every step of
every session (cached at best). Pydantic's default schema spends about a fifth of it on
things the model does not use: a `title` beside each property (its name again), an
`anyOf: [X, {"type": "null"}]` plus `"default": null` for each optional argument (the
model should leave it out, not send null), and `$ref`s into `$defs` for nested models. The
generator below leaves those out through pydantic's supported hooks; validation still goes
through the same pydantic model, so a call that sends `null` is still accepted.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue
from pydantic_core import core_schema


class CompactJsonSchema(GenerateJsonSchema):
    """Pydantic's generator without titles, null branches or null defaults."""

    def field_title_should_be_set(self, schema: Any) -> bool:
        return False

    def nullable_schema(self, schema: core_schema.NullableSchema) -> JsonSchemaValue:
        return self.generate_inner(schema["schema"])

    def default_schema(self, schema: core_schema.WithDefaultSchema) -> JsonSchemaValue:
        json_schema = super().default_schema(schema)
        if json_schema.get("default", ...) is None:
            del json_schema["default"]
        return json_schema


def _inline(node: Any, defs: dict[str, Any], seen: tuple[str, ...] = ()) -> Any:
    """`node` with each `$ref` into `defs` replaced by the definition (titles dropped)."""
    if isinstance(node, list):
        return [_inline(item, defs, seen) for item in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref.removeprefix("#/$defs/")
        if name in defs and name not in seen:  # a recursive model keeps its ref
            target = {k: v for k, v in defs[name].items() if k != "title"}
            return _inline({**target, **{k: v for k, v in node.items() if k != "$ref"}}, defs, seen + (name,))
    return {k: _inline(v, defs, seen) for k, v in node.items() if k != "$defs"}


def arguments_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The compact schema of a tool's arguments model (see the module docstring)."""
    schema = model.model_json_schema(schema_generator=CompactJsonSchema)
    schema.pop("title", None)
    defs = schema.get("$defs", {})
    if not defs:
        return schema
    inlined = _inline(schema, defs)
    if any(_refers(inlined, name) for name in defs):  # recursive: the refs need their defs
        inlined["$defs"] = defs
    return inlined


def _refers(node: Any, name: str) -> bool:
    if isinstance(node, dict):
        return node.get("$ref") == f"#/$defs/{name}" or any(_refers(v, name) for v in node.values())
    if isinstance(node, list):
        return any(_refers(item, name) for item in node)
    return False
