"""The book machinery: the papermill runner, profiles, verdict tables, the scoreboard and provenance."""
