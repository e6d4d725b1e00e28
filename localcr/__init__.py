"""localcr: Contextual Retrieval that runs fully offline on one CPU.

Importing localcr switches Hugging Face hub access off before anything can import
transformers or sentence-transformers: models load from local files or not at all.
"""
import os

for _flag in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE"):
    os.environ[_flag] = "1"
os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

from importlib.metadata import version as _version  # noqa: E402

from localcr.errors import LocalcrError  # noqa: E402

__version__ = _version("localcr")
__all__ = ["LocalcrError", "__version__"]
