"""`localcr watch`: an index kept current as the folders it was built from change.

A module of its own because watching is a different job from building and should not leak into it. Which changes
count, how a burst of saves becomes one build, and what happens to changes that arrive while a build runs are
all decided here. The build is untouched: every build is the same incremental `build_index` that `localcr index`
runs. It reads only new and changed files, drops deleted ones, reuses cached contexts and vectors, and publishes
generations that a running `localcr serve` switches to between requests (localcr.serve.service). The watcher is
watchfiles (Rust's notify: inotify, FSEvents, ReadDirectoryChangesW, or polling where none of them works).

- Watching starts before the first build, so a file saved while that build runs is not missed.
- A build starts once the folders have been quiet for `quiet_ms` (watchfiles' step), or `group_ms` after the first
  change if they never are (watchfiles' debounce). So an editor's save, a `git checkout` or an unpacked archive is
  one build.
- One build at a time. Changes made during a build wait in the watcher and become one more build after it,
  however many they are.
- Changes that no build would read are ignored: an editor's temporary files (swap files, backups, vim's `4913`
  probe, LibreOffice's lock files, `*.tmp`), hidden files and folders, the folders `localcr index` skips (.git,
  node_modules, ...), and the index directory and localcr's cache when they lie inside a watched folder. Without
  that last rule, every build would set off the next.
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Callable

from watchfiles import Change, DefaultFilter
from watchfiles import watch as watch_changes

from localcr.backends.locations import is_milvus
from localcr.cache import cache_dir
from localcr.documents import SKIP_DIRS
from localcr.errors import LocalcrError
from localcr.models import Registry

QUIET_MS = 200  # a build starts once the folders have been quiet this long...
GROUP_MS = 1600  # ...or this long after the first change if they never are (watchfiles' default)
WAKE_MS = 500  # how often the wait looks at `stop` (and first returns: the watcher is started by then)

# Editors' temporary files, by name (DefaultFilter's patterns come first: *.sw?, *~, .#*, .DS_Store, ...).
EDITOR_TEMPORARY = (
    r"^4913$",  # vim writes and deletes it to check that a folder is writable
    r"\.tmp$",
    r"^\.~lock\..*#$",  # LibreOffice's lock file
    r"^\.",  # any hidden file: `localcr index` reads none
)


class SourceChanges(DefaultFilter):
    """The changes a build could read: DefaultFilter's ignored names plus the editors' temporary files above, hidden
    files and folders and localcr's SKIP_DIRS (judged below the watched folders, so a watched folder may itself
    lie inside a hidden one), and nothing under the `ignored` directories (the index, the cache)."""

    ignore_entity_patterns = (*DefaultFilter.ignore_entity_patterns, *EDITOR_TEMPORARY)

    def __init__(self, roots: list[Path], ignored: list[Path] = ()):
        super().__init__(ignore_dirs=())  # folders are judged in __call__, relative to the watched folders
        self.roots = [Path(root) for root in roots]
        self.ignored = [Path(path) for path in ignored]

    def __call__(self, change: Change, path: str) -> bool:
        if not super().__call__(change, path):
            return False
        target = Path(path)
        if any(target == place or target.is_relative_to(place) for place in self.ignored):
            return False
        below = next((target.relative_to(root).parts for root in self.roots if target.is_relative_to(root)), target.parts)
        return not any(part in SKIP_DIRS or part.startswith(".") for part in below[:-1])


def watch_index(paths: list[str], directory: str | os.PathLike, registry: Registry, *, stop=None,
                report: Callable[[str], None] = print, log: Callable[[str], None] | None = None, progress: bool = True,
                quiet_ms: int = QUIET_MS, group_ms: int = GROUP_MS, **options) -> None:
    """Build the index at `directory` from `paths` (none: the folders it was built from) as `localcr index` does, then
    build it again after every change under them, until `stop` (anything with is_set(), e.g. a threading.Event)
    is set or Ctrl-C (KeyboardInterrupt, raised here). Each build is `report`ed as one line (summary_line). `options`
    are build_index's (embedder, contexts, llm, chunk_tokens, overlap_tokens, ...). progress: progress bars for the
    first build, which may be long; later builds show none.

    The first build's errors are raised: nothing is watched. A later build that fails (a file that cannot be read
    no longer fails a build, but a full disk, or `localcr index` writing the same index at that moment, does) is
    `log`ged as one line, and the next change builds again."""
    from localcr.index import build_index

    log = log or (lambda message: print(message, file=sys.stderr))
    roots = _roots(paths, directory)
    ignored = [Path(cache_dir()).resolve()] + ([] if is_milvus(directory) else [Path(directory).resolve()])
    changes = watch_changes(*roots, watch_filter=SourceChanges(roots, ignored), debounce=max(group_ms, quiet_ms), step=quiet_ms,
                            stop_event=stop, rust_timeout=WAKE_MS, yield_on_timeout=True)
    try:
        if next(changes, None) is None:  # the watcher is now started (or `stop` already set)
            return
        report(summary_line(build_index(list(paths), directory, registry, progress=progress, log=log, **options)))
        for batch in changes:
            if not batch:  # a wake-up with nothing changed
                continue
            try:
                summary = build_index(list(paths), directory, registry, progress=False, log=log, **options)
            except LocalcrError as exc:
                log(f"build failed: {exc} (still watching: the next change builds again)")
                continue
            report(summary_line(summary))
    finally:
        changes.close()  # stops the watcher's thread


def _roots(paths: list[str], directory) -> list[Path]:
    """The folders and files to watch, resolved: those named, or those the index records (as `localcr index`
    with no PATHS would read)."""
    if not paths:
        from localcr import store

        recorded = None if is_milvus(directory) else store.current_manifest(
            Path(directory), store.read_marker(Path(directory))).get("sources")
        if not recorded:
            raise LocalcrError(f"{directory}: name the folders to watch (e.g. `localcr watch docs/ --index {directory}`); "
                               "this index records none")
        paths = recorded
    roots = [Path(p).expanduser().resolve() for p in paths]
    if missing := [str(p) for p, root in zip(paths, roots) if not root.exists()]:
        raise LocalcrError(f"{', '.join(missing)}: no such file or directory")
    return roots


def summary_line(summary) -> str:
    """One line for a build: when it ended, what changed, what the index holds, how long it took."""
    changed = [f"{summary.added} new", f"{summary.changed} changed", f"{summary.removed} removed"]
    if summary.restored:
        changed.append(f"{summary.restored} restored (damaged segment)")
    extra = ""
    if summary.skipped:
        extra += f"; {len(summary.skipped)} skipped (`localcr stats --skipped`)"
    if summary.coverage:
        extra += f"; coverage {summary.coverage}"
    return (f"{time.strftime('%H:%M:%S')} {', '.join(changed)}: {summary.documents} documents, {summary.chunks} chunks "
            f"in {summary.seconds:.1f} s{extra}")
