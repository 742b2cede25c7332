"""Models as files: sources that install from the package registry (hash-checked), hub and
folder loading, the tiny random demo models, and LoRA adapters."""
