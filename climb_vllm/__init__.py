"""climb-vllm: measuring demographic bias of language models in clinical work."""

__version__ = "0.1.0"
