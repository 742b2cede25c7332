"""Benchmarks: each turns a dataset into engine requests and stored records."""
