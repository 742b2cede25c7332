"""Speed measurements behind ``climb-vllm bench`` that span floors: the serving path, in-process
generation and the report. A benchmark's own speed measurement lives in its folder
(``perf.py``); results and commands are recorded in PERFORMANCE.md."""
