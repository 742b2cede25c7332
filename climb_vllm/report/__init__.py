"""The report over run directories (HTML, Markdown and CSV, built from the registry), and
``rescore``, the one explicit recomputation of a run's results."""
