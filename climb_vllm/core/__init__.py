"""Shared run plumbing: configuration, run directories, opening a run, results files, progress,
resampling, plotting helpers. Imports nothing from the command line or the benchmarks."""
