"""The book machinery, in four folders by job (build, records, pages, plots): docs/architecture.md maps them."""
