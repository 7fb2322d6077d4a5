"""One sub-package per claim notebook, each shaped config -> metrics -> protocol -> verdicts; census/ is shared.

The map of the packages and of their inner shape: docs/architecture.md ("Inside a claim package")."""
