"""DiseaseMatcher (HIVE): which of two patients is more likely to have disease D? Built on the
shared HIVE library (:mod:`climb_vllm.benchmarks.hive`)."""
