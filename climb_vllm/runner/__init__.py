"""Opening a benchmark's run: the engine (in process or the servers' endpoints), the run
directory and its identity checks, and the generation loop the generation benchmarks share."""
