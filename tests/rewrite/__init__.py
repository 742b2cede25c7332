"""Tests of the counterfactual sex rewrite."""
