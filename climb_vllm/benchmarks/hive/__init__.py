"""The library the HIVE benchmarks share (BiasMD in :mod:`climb_vllm.benchmarks.biasmd`,
DiseaseMatcher in :mod:`climb_vllm.benchmarks.diseasematcher`): reading an answer to a
two-person question, grading many answers, running a benchmark, grading other tools' answers and
their agreement with labels, the registered benchmark class. It never branches on which
benchmark it serves: each declares a :class:`~climb_vllm.benchmarks.hive.kind.Kind`."""
