"""Building and executing the book: profiles, parameters cells, papermill runs, the cache, Jupyter Book."""
