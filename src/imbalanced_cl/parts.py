"""Configs composed of parts: each part a small frozen dataclass of one role, the config reading every field by name."""
from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Mapping

from .validate import check_known, namespace_kwargs

# The roles a part plays, in the order a parameters cell lists them (book/build/cells.py).
ROLES = ("model", "protocol", "judging", "run")


def _rebuild(cls: type, values: dict):
    """A composed config from its flat fields, as stored (pickle, a kept stage): not derived or validated again."""
    return cls.assemble(values)


class Composed:
    """A frozen config made of parts, as BERT's config holds the architecture and its training arguments live apart.

    PARTS maps a part's name to its class: a frozen dataclass with a ROLE ("model", "protocol", "judging" or "run"),
    a docstring for its fields, and `validate(cfg)`, which checks its own fields against the whole config. A field is
    read by its own name (`cfg.d` is `cfg.data.d`), so papermill, which sees flat names, and the code that reads them
    need not know the parts; a part by its name (`cfg.judging`). DEFAULTS holds this config's values for fields whose
    part declares another default (notebook 01 trains 8 replicates, SimConfig 4).
    """

    PARTS: ClassVar[dict[str, type]] = {}
    DEFAULTS: ClassVar[Mapping[str, Any]] = {}
    # Worked out once per class by __init_subclass__ (every config is built, stored and listed many times over)
    _owner_map: ClassVar[dict[str, str]] = {}
    _field_parts: ClassVar[tuple[tuple[dataclasses.Field, str], ...]] = ()
    _names: ClassVar[tuple[str, ...]] = ()
    _default_values: ClassVar[dict[str, Any]] = {}

    def __init__(self, **values):
        check_known(values, self._names, type(self).__name__)     # one line, with the nearest name
        flat = self._derive({**self._default_values, **values})
        self._set_parts(flat)
        self.validate()

    # --- the parts ---
    @classmethod
    def assemble(cls, values: Mapping[str, Any]):
        """An instance from complete flat values, without deriving or validating (a stored config)."""
        obj = cls.__new__(cls)
        obj._set_parts(values)
        return obj

    def _set_parts(self, flat: Mapping[str, Any]) -> None:
        parts = {name: part(**{f.name: flat[f.name] for f in dataclasses.fields(part) if f.name in flat})
                 for name, part in self.PARTS.items()}
        object.__setattr__(self, "_parts", parts)

    @classmethod
    def _derive(cls, flat: dict) -> dict:
        """Fields set from others before the parts are built (SimConfig: the weight decay from lambda_rule and d)."""
        return flat

    def validate(self) -> None:
        """Each part's checks, in order; the first bad field raises a ParameterError that names it."""
        for part in self._parts.values():
            part.validate(self)        # every part has one: the class docstring asks it, test_parts checks it

    def __init_subclass__(cls, **kwargs):
        """Once per class: each field's part, the field names, the defaults; a part named like a field would hide it."""
        super().__init_subclass__(**kwargs)
        cls._field_parts = tuple((f, name) for name, part in cls.PARTS.items() for f in dataclasses.fields(part))
        owners = {f.name: name for f, name in cls._field_parts}
        clash = sorted(set(owners) & set(cls.PARTS))
        if clash:
            raise TypeError(f"{cls.__name__}: part {clash[0]!r} has the name of a field")
        cls._owner_map, cls._names = owners, tuple(f.name for f, _ in cls._field_parts)
        # A default_factory is called once here: a part is frozen and hashed, so its values are never mutated
        cls._default_values = {**{f.name: (f.default if f.default is not dataclasses.MISSING else f.default_factory())
                                  for f, _ in cls._field_parts}, **cls.DEFAULTS}
        for name, part in owners.items():     # a field wins over a base's attribute of its name (ModelConfig.nsr)
            if hasattr(cls, name):
                setattr(cls, name, property(lambda self, n=name, p=part: getattr(self._parts[p], n)))

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        owner, parts = self._owner_map.get(name), self.__dict__.get("_parts", {})
        if owner is not None:
            return getattr(parts[owner], name)
        if name in parts:
            return parts[name]
        raise AttributeError(f"{type(self).__name__} has no field {name!r}")

    def __setattr__(self, name, value):
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}: use .replace({name}=...)")

    # --- the flat view ---
    @classmethod
    def field_names(cls) -> list[str]:
        """Names of all fields, parts in order."""
        return list(cls._names)          # a new list: the class's own stays as it was

    @classmethod
    def role_of(cls, name: str) -> str:
        """The role of the part that holds field `name`."""
        return cls.PARTS[cls._owner_map[name]].ROLE

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """{field: default} of this config: its parts' defaults, with DEFAULTS over them."""
        return dict(cls._default_values)     # a new dict: a caller may add its overrides to it

    def to_dict(self) -> dict:
        """Plain dict of all fields (for provenance, caching and a unit's parameters)."""
        return {k: getattr(self, k) for k in self._names}

    def replace(self, **changes):
        """A copy with some fields changed (derived and validated again)."""
        return type(self)(**{**self.to_dict(), **changes})

    @classmethod
    def from_namespace(cls, ns: Mapping[str, Any], strict: bool = True, **overrides):
        """Build from a notebook's globals(): its fields are the parameters; with strict, any other plain-data name
        (a misspelt or unknown `papermill -p`) is a ParameterError that suggests the nearest parameter."""
        return cls(**namespace_kwargs(cls.field_names(), ns, overrides, cls.__name__, strict))

    # --- a value: equal, hashable, printable, picklable ---
    def __eq__(self, other):
        return type(other) is type(self) and other._parts == self._parts

    def __hash__(self):
        return hash((type(self).__qualname__, *self._parts.values()))

    def __repr__(self):
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.to_dict().items())})"

    def __reduce__(self):
        return _rebuild, (type(self), self.to_dict())


def fields_of(cls: type) -> list[tuple[dataclasses.Field, str]]:
    """(field, its part's name) of each field of a config class in declaration order; a plain dataclass's part is ""."""
    if isinstance(cls, type) and issubclass(cls, Composed):
        return list(cls._field_parts)
    return [(f, "") for f in dataclasses.fields(cls)]
