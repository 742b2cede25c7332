"""Command line: ``climb-vllm VERB ...``. It parses and dispatches only: the grammar is in
:mod:`~climb_vllm.cli.parser` (built from the benchmark registry), what each verb does with its
arguments in :mod:`~climb_vllm.cli.commands`; heavy imports happen inside each verb.

Every user-fixable problem surfaces as one line ``error: ... Fix: ...`` and exit status 2.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from climb_vllm.core.errors import UserError


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``climb-vllm`` console script; returns the exit status."""
    from climb_vllm.cli import commands
    from climb_vllm.cli.parser import build_parser

    args = build_parser().parse_args(argv)
    try:
        if args.verb == "eval" and args.benchmark == "all":
            commands.eval_all(args)
        elif args.verb == "eval":
            commands.eval_one(args)
        elif args.verb == "grade":
            commands.grade(args)
        elif args.verb == "prompts":
            commands.prompts(args)
        elif args.verb == "rescore":
            print(f"report written to {commands.rescore(args)}")
        elif args.verb == "report":
            print(f"report written to {commands.report(args)}")
        elif args.verb == "serve":
            print("ready: " + " ".join(commands.serve(args)))
        elif args.verb == "stop":
            from climb_vllm.serving.state import stop

            lines = stop()
            print("\n".join(lines) if lines else "no server to stop (none was started)")
        elif args.verb == "demo-model":
            print(f"tiny model written to {commands.demo_model(args)}")
        elif args.verb == "model":
            print(commands.model(args))
        elif args.verb == "icd-export":
            from climb_vllm.resources.ontology import export_release

            count = export_release(args.out)
            print(f"{count} codes written to {args.out}; use --icd-release {args.out}")
        elif args.verb == "bench":
            from climb_vllm.cli.perf import run_bench

            run_bench(args)
    except UserError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted; rerun the same command to resume", file=sys.stderr)
        return 130
    return 0
