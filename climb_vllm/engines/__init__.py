"""Engines that score and generate: in-process transformers, or serving endpoints."""
