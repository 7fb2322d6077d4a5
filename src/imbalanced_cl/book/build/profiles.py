"""Profiles: named sets of notebook parameters (ci, default, paper), read from profiles.yaml at the repo root."""
from __future__ import annotations

from pathlib import Path

import yaml

from ...paths import repo_root  # the book's modules and notebooks import it from here
from ...validate import ParameterError

PROFILES = ("ci", "default", "paper")


def load_all(path: Path | None = None) -> dict:
    """The whole profiles file as {profile: {notebook: {param: value}}}."""
    path = Path(path) if path else repo_root() / "profiles.yaml"
    with open(path) as fh:
        data = yaml.safe_load(fh) or {}
    label = path.name
    if not isinstance(data, dict):  # a bare string or list would otherwise be read one character at a time
        raise ParameterError(f"{label} is not a profiles file: expected a mapping such as "
                             f"'ci: {{NOTEBOOK: {{PARAM: VALUE}}}}', got a {type(data).__name__}")
    for name, notebooks in data.items():
        if name not in PROFILES:
            raise ParameterError(f"{label} has an unknown profile {name!r}: allowed {PROFILES}")
        if notebooks is not None and not isinstance(notebooks, dict):
            raise ParameterError(f"{label}: profile {name!r} must map notebooks to parameters, "
                                 f"got a {type(notebooks).__name__}")
    return data


def params(profile: str, notebook: str, path: Path | None = None) -> dict:
    """Parameters of one notebook under one profile (empty when the profile leaves it at its defaults)."""
    if profile not in PROFILES:
        raise ParameterError(f"parameter profile={profile!r} is invalid: allowed one of {PROFILES}")
    return dict((load_all(path).get(profile) or {}).get(notebook) or {})
