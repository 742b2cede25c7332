"""The report over run directories: HTML, Markdown and CSV, built from the registry."""
