"""llama.cpp's OpenAI-compatible server (``climb-vllm serve --server llamacpp``).

The server is llama-cpp-python's (PyPI ``llama-cpp-python[server]``, built from source into its
own virtualenv by ``make llamacpp``): it serves a GGUF file as it is, with llama.cpp's quantized
kernels, and, unlike llama.cpp's own ``llama-server``, returns log-probs of the prompt's tokens
with ``echo`` when every position keeps its logits (``--logits_all True``, the one flag scoring
relies on). Its completions endpoint takes one text prompt per request (no token ids, no
batches) and ignores ``n``; the HTTP engine's probe finds this out and adapts.

What it serves: a GGUF file, or a model source's verified GGUF file (``gemma-3-270m``: the same
file that ``climb-vllm model get`` converts for vLLM and the in-process engine), with the chat
template that the converted folder carries when the file has none.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from climb_vllm.core.errors import UserError

#: The pinned server package (``make llamacpp`` installs it into ``.venv-llamacpp``).
PACKAGE = "llama-cpp-python[server]==0.3.36"
#: The interpreter that runs it, unless ``--python`` names another.
DEFAULT_PYTHON = ".venv-llamacpp/bin/python"
#: Every llama.cpp server needs this: log-probs of prompt tokens exist only where the model
#: kept the logits of every position (else echo returns none and scoring is impossible).
SCORING_FLAGS: tuple[str, ...] = ("--logits_all", "True")
#: Context (tokens) when the model file sets none. Each position keeps a full-vocabulary row of
#: logits (262,144 floats for Gemma 3: 1 MiB per token), so the context is sized to the prompts.
DEFAULT_CONTEXT = 1024
#: The first bytes of every GGUF file.
GGUF_MAGIC = b"GGUF"


@dataclass(frozen=True)
class GgufModel:
    """What a llama.cpp server loads.

    Attributes:
        path: the GGUF file.
        served_name: the name requests use.
        chat_template: a Jinja template registered for chat requests (None: the file's own).
    """

    path: Path
    served_name: str
    chat_template: Path | None


def gguf_model(model: str, served_name: str | None, chat_template: Path | None) -> GgufModel:
    """The GGUF file behind ``model``: a model source's verified file, or a ``.gguf`` path.

    Args:
        model: a model source name (``gemma-3-270m``) or a path to a GGUF file.
        served_name: the name to serve it under (None: the source's name or the file's stem).
        chat_template: a template file to use for chat (None: for a source, the template its
            converted folder carries; for a file, the file's own).

    Raises:
        UserError: a folder or hub id (llama.cpp reads GGUF files only), a missing file, or a
            file that is not GGUF (named, with the fix).
    """
    from climb_vllm.models.sources import chat_template_file, gguf_file, is_source

    if is_source(model):
        path = gguf_file(model)
        return GgufModel(path, served_name or model, chat_template or chat_template_file(model))
    path = Path(model)
    fix = (
        "pass a .gguf file (make serve MODEL=path/to/model.gguf SERVER=llamacpp) or a model "
        "source such as gemma-3-270m"
    )
    if path.is_dir() or not path.exists():
        what = "a folder" if path.is_dir() else "not a file here"
        raise UserError(f"llama.cpp serves GGUF files; {model} is {what}.", fix + ".")
    try:
        with path.open("rb") as handle:
            head = handle.read(len(GGUF_MAGIC))
    except OSError as exc:
        raise UserError(f"{path} cannot be read ({exc.strerror}).", fix + ".") from exc
    if head != GGUF_MAGIC:
        raise UserError(
            f"{path} is not a GGUF model file (it starts with {head!r}, not {GGUF_MAGIC!r}).",
            fix + ".",
        )
    return GgufModel(path.resolve(), served_name or path.stem, chat_template)


def dequantized(gguf: Path) -> Path:
    """A copy of a GGUF file with every tensor dequantized to fp32, beside it (made once, under
    a temporary name, then renamed). llama.cpp multiplies quantized weights with activations
    quantized to 8 bits; on fp32 weights it computes in fp32, as the in-process engine does on
    the converted folder, so the two can be compared on equal terms.

    Args:
        gguf: the quantized file.

    Raises:
        UserError: the file cannot be read as GGUF, or the copy cannot be written.
    """
    import numpy as np

    from climb_vllm.models.sources import require_gguf

    require_gguf()
    from gguf import GGUFReader, GGUFValueType, GGUFWriter
    from gguf.quants import dequantize

    target = gguf.with_name(f"{gguf.stem}.f32.gguf")
    if target.is_file():
        return target
    partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        reader = GGUFReader(gguf)
        writer = GGUFWriter(partial, str(reader.fields["general.architecture"].contents()))
        for name, field in reader.fields.items():
            # The reader's own fields (version, counts) are written by the writer itself.
            if name.startswith("GGUF.") or name == "general.architecture":
                continue
            kind = field.types[0]
            sub = field.types[1] if kind == GGUFValueType.ARRAY and len(field.types) > 1 else None
            writer.add_key_value(name, field.contents(), kind, sub_type=sub)
        for tensor in reader.tensors:
            values = dequantize(tensor.data, tensor.tensor_type).astype(np.float32)
            writer.add_tensor(tensor.name, values)
        writer.write_header_to_file()
        writer.write_kv_data_to_file()
        writer.write_tensors_to_file()
        writer.close()
        os.replace(partial, target)
    except (OSError, ValueError, KeyError) as exc:
        raise UserError(
            f"{gguf} could not be copied to fp32 ({type(exc).__name__}: {exc}).",
            "check the file (climb-vllm model get NAME --gguf file) and the free disk space.",
        ) from exc
    finally:
        partial.unlink(missing_ok=True)
    return target


def command(
    model: GgufModel,
    python: str,
    host: str,
    port: int,
    context: int | None,
    gpus: str,
    fast: bool = True,
) -> list[str]:
    """The argv of one llama.cpp server.

    Args:
        model: the GGUF file, its served name and chat template.
        python: the interpreter with llama-cpp-python's server.
        host: the address to listen on.
        port: the TCP port.
        context: the context in tokens (None: :data:`DEFAULT_CONTEXT`).
        gpus: CUDA device ids ("" on CPU): on GPUs every layer is offloaded.
        fast: rank top log-probs by partial selection (see ``llamacpp_main.py``: the same
            answers, about 15 times less time per scored token at a 262k vocabulary).
    """
    launcher = Path(__file__).with_name("llamacpp_main.py")
    # -P: the launcher's folder is not put on sys.path (its config.py would shadow others).
    argv = [python, "-P", str(launcher)]
    if fast:
        argv.append("--climb-fast-ranking")
    if model.chat_template is not None:
        argv += ["--climb-chat-template", str(model.chat_template)]
    threads = str(len(os.sched_getaffinity(0)))
    argv += [
        *("--model", str(model.path), "--model_alias", model.served_name),
        *("--host", host, "--port", str(port)),
        *("--n_ctx", str(context or DEFAULT_CONTEXT)),
        # The server's default is half the cores for generation; scoring and sampling here
        # are the only work on the machine.
        *("--n_threads", threads, "--n_threads_batch", threads),
        *("--n_gpu_layers", "-1" if gpus else "0"),
        *SCORING_FLAGS,
    ]
    return argv


def check(python: str) -> str:
    """The installed llama-cpp-python version at ``python``.

    Raises:
        UserError: ``python`` cannot import llama-cpp-python's server (names the install).
    """
    probe = subprocess.run(
        [python, "-c", "import llama_cpp, llama_cpp.server.app; print(llama_cpp.__version__)"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        raise UserError(
            f"llama-cpp-python's server cannot be imported by {python}.",
            f"run make llamacpp (builds {PACKAGE} into .venv-llamacpp, a few minutes) and "
            f"serve with --python {DEFAULT_PYTHON}, or pip install '{PACKAGE}' there.",
        )
    return probe.stdout.strip()
