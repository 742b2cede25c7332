"""Serving: starting OpenAI-compatible servers for evaluation and keeping track of them.

- :mod:`~climb_vllm.serving.config`: the vLLM flags scoring relies on and the ``server/``
  folder's hardware presets and model files.
- :mod:`~climb_vllm.serving.launch`: ``make serve`` (vLLM or llama.cpp servers, health wait).
- :mod:`~climb_vllm.serving.llamacpp`: llama.cpp's server (llama-cpp-python) and its GGUF files.
- :mod:`~climb_vllm.serving.state`: the endpoints file, dead servers' reports, ``make stop``.
"""
