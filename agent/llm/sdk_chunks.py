"""Keep fast streams cheap: build each streamed chunk's SDK object without the SDK's type walk.

litellm streams OpenAI-compatible responses through the openai SDK, which turns every SSE
chunk into a `ChatCompletionChunk` with its loose `construct_type`: for each of the ~15
fields of the chunk, its choice and its delta it re-inspects the annotation (a runtime
Protocol check per model, `Optional[str]` validated through pydantic...). That was ~45% of
litellm's time per chunk: at 1,000 chunks a second, most of a core, taken from the screen.

`install()` replaces it, for `ChatCompletionChunk` only, with a plan worked out once per
model class: per field, whether a value of the exact JSON type comes back unchanged (str,
int, bool, float and literal fields, or `Optional` of them), is a nested model built the
same way (a dict) or a list of them, or else anything else — those values, and any value
of another type, go through the SDK's own `construct_type`, as before. The object built is
the SDK's `construct` result field for field (its `__dict__`, fields set and extras);
tests/llm/test_sdk_chunks.py compares both on generated chunks.
"""

from __future__ import annotations

import logging
import types
import typing
from typing import Any, Callable, Literal, Union

log = logging.getLogger(__name__)

_PLAIN_TYPES = {str, int, bool, float}
_IMMUTABLE_DEFAULTS = (type(None), str, int, bool, float)
# Field kinds of a plan.
PLAIN, MODEL, MODEL_LIST, OTHER = range(4)


def _plain_types(annotation: Any) -> tuple[type, ...] | None:
    """The exact value types the SDK gives back unchanged for `annotation`, or None."""
    if annotation in _PLAIN_TYPES:
        return (annotation,)
    origin = typing.get_origin(annotation)
    if origin is Literal:
        args = typing.get_args(annotation)
        return (str,) if args and all(type(a) is str for a in args) else None
    if origin is Union or origin is types.UnionType:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        found: set[type] = set()
        for arg in args:
            inner = _plain_types(arg)
            if inner is None:
                return None
            found.update(inner)
        # Validated by pydantic first: an int passes as an int for `Optional[int]`, but a
        # float field turns an int into a float, so only the field's own types pass.
        return tuple(found) or None
    return None


class _Field:
    __slots__ = ("name", "alias", "kind", "accepts", "model", "field", "default", "constant_default")

    def __init__(self, name: str, field: Any, compiler: "_Compiler") -> None:
        self.name, self.alias, self.field = name, field.alias, field
        annotation = field.annotation
        self.kind, self.accepts, self.model = OTHER, (), None
        if not getattr(field, "metadata", None):
            plain = _plain_types(annotation)
            if plain is not None:
                self.kind, self.accepts = PLAIN, plain
            elif compiler.buildable(annotation):
                self.kind, self.model = MODEL, annotation
            elif typing.get_origin(annotation) is list and compiler.buildable(_only_arg(annotation)):
                self.kind, self.model = MODEL_LIST, _only_arg(annotation)
        default = compiler.field_get_default(field)
        self.constant_default = field.default_factory is None and isinstance(default, _IMMUTABLE_DEFAULTS)
        self.default = default


def _only_arg(annotation: Any) -> Any:
    args = typing.get_args(annotation)
    return args[0] if len(args) == 1 else None


class _Compiler:
    """Plans per model class, and the SDK functions the plans fall back on."""

    def __init__(self, base_model: type, construct: Callable, construct_type: Callable,
                 field_get_default: Callable, extra_fields_type: Callable) -> None:
        self.base_model, self.construct = base_model, construct
        self.construct_type, self.field_get_default = construct_type, field_get_default
        self.extra_fields_type = extra_fields_type
        self.plans: dict[type, tuple] = {}

    def buildable(self, annotation: Any) -> bool:
        """A model class whose `construct` is the SDK's own (the one this module mirrors)."""
        return (isinstance(annotation, type) and issubclass(annotation, self.base_model)
                and getattr(annotation.construct, "__func__", None) is self.construct)

    def plan(self, cls: type) -> tuple:
        plan = self.plans.get(cls)
        if plan is None:
            config = cls.model_config
            populate_by_name = bool(config.get("populate_by_name")) if isinstance(config, dict) else None
            if populate_by_name is None:
                raise TypeError(f"{cls.__name__}: model config is not a dict")
            fields = [_Field(name, field, self) for name, field in cls.model_fields.items()]
            plan = self.plans[cls] = (fields, populate_by_name, self.extra_fields_type(cls), cls.model_fields)
        return plan

    def plan_all(self, cls: type) -> None:
        """Plan `cls` and every model it builds (so an unfit one shows at install time)."""
        todo, seen = [cls], set()
        while todo:
            model = todo.pop()
            if model not in seen:
                seen.add(model)
                todo.extend(f.model for f in self.plan(model)[0] if f.model is not None)

    def build(self, cls: type, values: dict[str, Any]) -> Any:
        """What `cls.construct(**values)` gives, for a JSON object `values`."""
        if "_fields_set" in values or "__cls" in values:  # names of `construct`'s own parameters
            return cls.construct(**values)
        fields, populate_by_name, extra_type, model_fields = self.plan(cls)
        m = cls.__new__(cls)
        fields_values: dict[str, Any] = {}
        fields_set: set[str] = set()
        for f in fields:
            key = f.alias
            if key is None or (populate_by_name and key not in values):
                key = f.name
            if key not in values:
                fields_values[f.name] = f.default if f.constant_default else self.field_get_default(f.field)
                continue
            fields_set.add(f.name)
            value = values[key]
            if value is None:
                fields_values[f.name] = f.default if f.constant_default else self.field_get_default(f.field)
            elif f.kind == PLAIN and type(value) in f.accepts:
                fields_values[f.name] = value
            elif f.kind == MODEL and type(value) is dict:
                fields_values[f.name] = self.build(f.model, value)
            elif f.kind == MODEL_LIST and type(value) is list and all(type(v) is dict for v in value):
                fields_values[f.name] = [self.build(f.model, v) for v in value]
            else:
                fields_values[f.name] = self.construct_type(value=value, type_=f.field.annotation,
                                                            metadata=getattr(f.field, "metadata", None))
        extra: dict[str, Any] = {}
        for key, value in values.items():
            if key not in model_fields:
                extra[key] = value if extra_type is None else self.construct_type(value=value, type_=extra_type)
        object.__setattr__(m, "__dict__", fields_values)
        object.__setattr__(m, "__pydantic_private__", None)
        object.__setattr__(m, "__pydantic_extra__", extra)
        object.__setattr__(m, "__pydantic_fields_set__", fields_set)
        return m


def compiler() -> _Compiler | None:
    """A compiler for this SDK, or None where its layout is not the one this mirrors."""
    try:
        from openai import _models
        from openai._compat import PYDANTIC_V1, field_get_default

        if PYDANTIC_V1:
            return None
        return _Compiler(_models.BaseModel, _models.BaseModel.construct.__func__, _models.construct_type,
                         field_get_default, _models._get_extra_fields_type)
    except (ImportError, AttributeError) as exc:
        log.debug("openai SDK chunk fast path unavailable: %s", exc)
        return None


def install() -> bool:
    """Route the SDK's construction of streamed chunks through the plan (idempotent); False
    where this SDK version does not allow it (the SDK then works as it always does)."""
    try:
        from openai import _base_client
        from openai.types.chat import ChatCompletionChunk
    except ImportError:
        return False
    original = getattr(_base_client, "construct_type", None)
    if original is None:
        return False
    if getattr(original, "_cairn_fastpath", False):
        return True
    built = compiler()
    if built is None or not built.buildable(ChatCompletionChunk):
        return False
    try:
        built.plan_all(ChatCompletionChunk)
    except Exception as exc:  # another SDK version's types: leave it alone
        log.debug("openai SDK chunk fast path not installed: %s", exc)
        return False

    def construct_type(*, value: object, type_: object, metadata: Any = None) -> object:
        if type_ is ChatCompletionChunk and metadata is None and type(value) is dict:
            try:
                return built.build(ChatCompletionChunk, value)
            except Exception:  # whatever the plan did not foresee: the SDK's own way decides
                pass
        return original(value=value, type_=type_, metadata=metadata)

    construct_type._cairn_fastpath = True  # type: ignore[attr-defined]
    construct_type.original = original  # type: ignore[attr-defined]
    construct_type.compiler = built  # type: ignore[attr-defined]
    _base_client.construct_type = construct_type
    return True
