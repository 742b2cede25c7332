"""``python -m climb_vllm``: the ``climb-vllm`` command."""

import sys

from climb_vllm.cli import main

sys.exit(main())
