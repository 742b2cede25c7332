"""BiasMD (HIVE): does a model attribute an ambiguous pronoun to one of two people? With
resolvable control items beyond the paper. Built on the shared HIVE library
(:mod:`climb_vllm.benchmarks.hive`)."""
