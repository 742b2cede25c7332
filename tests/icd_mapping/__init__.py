"""Tests of the mapping of free text to ICD-10-CM codes."""
