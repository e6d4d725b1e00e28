"""Contexts written elsewhere (a bigger machine, another tool), imported from JSONL."""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Callable

from localcr.documents import Chunk
from localcr.errors import LocalcrError


def load_contexts_file(path, chunks: list[Chunk], *, warn: Callable[[str], None] | None = None) -> int:
    """Set contexts from a JSONL file of {"chunk_id": ..., "context": ...} lines (context_source "imported").
    Returns how many chunks got one; a bad line is a LocalcrError naming the line; unknown chunk ids are
    counted and reported through `warn` (default: a line on stderr) and skipped."""
    path = Path(path)
    by_id = {c.chunk_id: c for c in chunks}
    found, unknown = 0, []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise LocalcrError(f"{path}: no such contexts file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise LocalcrError(f"{path}: cannot read the contexts file ({exc})") from None
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise LocalcrError(f"{path}:{number}: not valid JSON ({exc.msg}): each line must be {{\"chunk_id\": ..., \"context\": ...}}") from None
        if not isinstance(record, dict) or "chunk_id" not in record or "context" not in record:
            raise LocalcrError(f"{path}:{number}: each line must be an object with \"chunk_id\" and \"context\"")
        if not isinstance(record["context"], str):
            raise LocalcrError(f"{path}:{number}: \"context\" must be a string")
        chunk = by_id.get(str(record["chunk_id"]))
        if chunk is None:
            unknown.append(str(record["chunk_id"]))
            continue
        chunk.context, chunk.context_source = record["context"].strip(), "imported"
        found += 1
    if unknown:
        shown = ", ".join(unknown[:5]) + (", ..." if len(unknown) > 5 else "")
        message = f"{path}: {len(unknown)} context(s) for unknown chunk ids skipped ({shown})"
        (warn or (lambda m: print(f"warning: {m}", file=sys.stderr)))(message)
    return found
