"""Measurements as files a reader can open: JSON for the structure, one .npz for the arrays (issue 47).

`save(value, path)` writes path.json and, when the value holds arrays, path.npz; `load(path)` gives the value back.
What can be stored: None, booleans, integers, floats (NaN and infinities included), strings, lists, tuples, dicts
with keys of those kinds (a grid's (d, rho) keys stay tuples), numpy arrays and scalars, torch tensors (read back as
tensors, on the CPU), and the package's own dataclasses (by their import path, rebuilt field by field without
running their checks again). Anything else is refused by name before a file is written: a measurement stage that
returns a live object (a Run with its pairs, a model) must return what it measured instead.
"""
from __future__ import annotations

import dataclasses
import importlib
import json
import math
import os
import zipfile
from pathlib import Path

import numpy as np

from ..parts import Composed, fields_of

PACKAGE = "imbalanced_cl."

# Training objects, not measurements: a Run holds its weights, pairs and per-step history (hundreds of MB at the paper
# profile). A stage returns what it measured of them; these are refused by name, though they are package dataclasses.
LIVE = ("imbalanced_cl.sim.train:Run", "imbalanced_cl.sim.train:History", "imbalanced_cl.sim.data:Pairs")

# The most a stage's arrays may hold, uncompressed. A record is committed with the repository and a submission has a
# size limit: a stage above this keeps something other than a measurement (weights over time, a training set).
MAX_BYTES = 32 * 2**20


class NotStorable(TypeError):
    """A value that typed.save cannot write, named by where it sits in the measurement."""


def _encode(x, arrays: dict, where: str):
    """The JSON form of x; arrays go to `arrays` under a running name."""
    if x is None or isinstance(x, (bool, str, int, float, np.generic)):
        return _encode_scalar(x, arrays, where)
    if isinstance(x, np.ndarray) or _is_tensor(x):
        return _encode_array(x, arrays, where)
    if isinstance(x, (list, dict)) or (isinstance(x, tuple) and not hasattr(x, "_fields")):
        return _encode_container(x, arrays, where)
    if _stored_class(x) and type(x).__module__.startswith(PACKAGE):
        return _encode_dataclass(x, arrays, where)
    raise NotStorable(f"{where}: a {type(x).__module__}.{type(x).__qualname__} cannot be stored as a measurement")


def _encode_scalar(x, arrays: dict, where: str):
    """The JSON form of None, a boolean, string, integer, float (a non-finite one by its repr) or numpy scalar."""
    if x is None or isinstance(x, (bool, str, int)):
        return x
    if isinstance(x, float):
        return x if math.isfinite(x) else {"__float__": repr(x)}
    return {"__scalar__": str(x.dtype), "value": _encode(x.item(), arrays, where)}


def _is_tensor(x) -> bool:
    """Whether x is a torch tensor (or parameter), told by its type's name so that torch need not be imported."""
    return type(x).__module__ == "torch" and type(x).__name__ in ("Tensor", "Parameter")


def _encode_array(x, arrays: dict, where: str) -> dict:
    """A numpy array or torch tensor put in `arrays` under a running name; its JSON form names it."""
    name = f"a{len(arrays)}"
    if isinstance(x, np.ndarray):
        if x.dtype == object:
            raise NotStorable(f"{where}: an array of Python objects")
        arrays[name] = x
        return {"__array__": name}
    arrays[name] = x.detach().cpu().numpy()
    return {"__tensor__": name}


def _encode_container(x, arrays: dict, where: str):
    """The JSON form of a tuple (not a named one), list or dict, item by item."""
    if isinstance(x, tuple):
        return {"__tuple__": [_encode(v, arrays, f"{where}[{i}]") for i, v in enumerate(x)]}
    if isinstance(x, list):
        return [_encode(v, arrays, f"{where}[{i}]") for i, v in enumerate(x)]
    return {"__dict__": [[_encode(k, arrays, f"{where} key"), _encode(v, arrays, f"{where}[{k!r}]")]
                         for k, v in x.items()]}


def _encode_dataclass(x, arrays: dict, where: str) -> dict:
    """The JSON form of one of the package's dataclasses, field by field; a training object (LIVE) is refused."""
    cls = type(x)
    if f"{cls.__module__}:{cls.__qualname__}" in LIVE:
        raise NotStorable(f"{where}: a {cls.__qualname__} is a training object, not a measurement: "
                          "return what was measured of it")
    return {"__dataclass__": f"{cls.__module__}:{cls.__qualname__}",
            "fields": {k: _encode(getattr(x, k), arrays, f"{where}.{k}") for k in _field_names(cls)}}


def _stored_class(x) -> bool:
    """Whether x is an instance of a dataclass or a composed config (parts.Composed), both stored field by field."""
    return not isinstance(x, type) and (dataclasses.is_dataclass(x) or isinstance(x, Composed))


def _field_names(cls: type) -> list[str]:
    """The fields a stored class is written and rebuilt by: a composed config's flat names, a dataclass's fields."""
    return [f.name for f, _ in fields_of(cls)]


def _decode(x, arrays):
    """The value of a JSON form written by _encode."""
    if isinstance(x, list):
        return [_decode(v, arrays) for v in x]
    if not isinstance(x, dict):
        return x
    if "__float__" in x:
        return float(x["__float__"])
    if "__scalar__" in x:
        return np.dtype(x["__scalar__"]).type(_decode(x["value"], arrays))
    if "__array__" in x:
        return arrays[x["__array__"]]
    if "__tensor__" in x:
        import torch
        return torch.from_numpy(np.array(arrays[x["__tensor__"]]))
    if "__tuple__" in x:
        return tuple(_decode(v, arrays) for v in x["__tuple__"])
    if "__dict__" in x:
        return {_decode(k, arrays): _decode(v, arrays) for k, v in x["__dict__"]}
    if "__dataclass__" in x:
        return _rebuild(x, arrays)
    raise ValueError(f"unknown stored form with keys {sorted(x)}")


def _rebuild(x: dict, arrays):
    """A package dataclass from its stored form, field by field (a stored measurement is not validated again); a
    field the class has and the file lacks is a KeyError naming it."""
    module, _, name = x["__dataclass__"].partition(":")
    if not module.startswith(PACKAGE):
        raise ValueError(f"refusing to build {x['__dataclass__']}: not a class of this package")
    cls = importlib.import_module(module)
    for part in name.split("."):
        cls = getattr(cls, part)
    known = set(_field_names(cls))
    missing = sorted(known - set(x["fields"]))
    measured = [k for k in missing if not _neutral(cls, k)]
    if measured:
        raise KeyError(f"{x['__dataclass__']}.{measured[0]}")
    values = {k: _decode(v, arrays) for k, v in x["fields"].items() if k in known}
    values.update({k: _default(cls, k) for k in missing})      # neutral fields added since the record was made
    if issubclass(cls, Composed):
        return cls.assemble(values)
    obj = cls.__new__(cls)
    for k, v in values.items():
        object.__setattr__(obj, k, v)
    return obj


# A config field that never changes what a run measures: where its parts come from (a cell or sweep read from the
# campaign's records instead of trained here) or how it runs (a part whose ROLE is "run": device, threads, workers).
# A record made before such a field existed is read with the field's default, so adding one keeps the records; any
# other field the record lacks still stops the reading (a KeyError naming it: "needs re-measuring").
RECORD_CHOICES = ("record_sweeps", "record_ds", "record_star")


def _neutral(cls: type, name: str) -> bool:
    """Whether a field of cls never changes what is measured (RECORD_CHOICES, or a field of a "run" part)."""
    if name in RECORD_CHOICES:
        return True
    return issubclass(cls, Composed) and cls.role_of(name) == "run"


def _default(cls: type, name: str):
    """The default of field `name` of a stored class (a composed config's, or a dataclass field's)."""
    if issubclass(cls, Composed):
        return cls.defaults()[name]
    f = {f.name: f for f in dataclasses.fields(cls)}[name]
    return f.default if f.default is not dataclasses.MISSING else f.default_factory()


def save(value, path: Path) -> list[Path]:
    """Write value to path.json (and path.npz for its arrays), each atomically; the files written."""
    arrays: dict = {}
    doc = _encode(value, arrays, Path(path).name)
    size = sum(a.nbytes for a in arrays.values())
    if size > MAX_BYTES:
        big = max(arrays, key=lambda k: arrays[k].nbytes)
        raise NotStorable(f"{Path(path).name}: {size / 2**20:.0f} MiB of arrays, above the {MAX_BYTES // 2**20} MiB a "
                          f"stage may keep (largest: shape {arrays[big].shape}, {arrays[big].nbytes / 2**20:.0f} MiB)")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    out = []
    if arrays:
        tmp = path.with_name(f".{path.name}.npz.tmp-{os.getpid()}.npz")
        np.savez_compressed(tmp, **arrays)
        os.replace(tmp, path.with_suffix(".npz"))
        out.append(path.with_suffix(".npz"))
    tmp = path.with_name(f".{path.name}.json.tmp-{os.getpid()}")
    tmp.write_text(json.dumps({"arrays": bool(arrays), "value": doc}, allow_nan=False) + "\n")
    os.replace(tmp, path.with_suffix(".json"))
    return [path.with_suffix(".json"), *out]


def load(path: Path):
    """The value save(value, path) wrote; ValueError names a damaged file, KeyError a field the file lacks."""
    path = Path(path)
    try:
        doc = json.loads(path.with_suffix(".json").read_text())
        arrays = dict(np.load(path.with_suffix(".npz"), allow_pickle=False)) if doc.get("arrays") else {}
    except (OSError, ValueError, EOFError, zipfile.BadZipFile) as e:     # a truncated .npz is a bad zip
        raise ValueError(f"{path.name}: unreadable ({str(e).splitlines()[0] if str(e) else type(e).__name__})") \
            from None
    return _decode(doc["value"], arrays)
