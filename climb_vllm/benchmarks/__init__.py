"""Benchmarks: one folder each behind one interface (:mod:`~climb_vllm.benchmarks.base`), listed
in :mod:`~climb_vllm.benchmarks.registry`."""
