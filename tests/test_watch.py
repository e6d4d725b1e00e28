"""`localcr watch`: the real command in its own process keeps an index current on a temp folder (a file added, one
edited, one deleted) while a real `localcr serve` on the same index is asked throughout, from another thread, and
must answer every request, from each new generation as it lands."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from conftest import error_line, start_server, stop_server

ALPHA = "# Alpha\n\nThe quokka lives on Rottnest island, off the coast of Perth.\n"
BETA = "# Beta\n\nThe wombat digs long burrows with its strong claws.\n"
GAMMA = "# Gamma\n\nA zeppelin floats over the lake at dawn.\n"
DEADLINE_S = 30


def test_the_editors_temporary_files_hidden_files_and_the_index_are_not_changes(tmp_path):
    from watchfiles import Change

    from localcr import store
    from localcr.documents import INDEX_MARKER
    from localcr.watch import SourceChanges

    root = tmp_path / ".notes"  # a watched folder may itself lie in a hidden one
    changes = SourceChanges([root], [root / "index", tmp_path / "cache"])
    wanted = ["a.md", "sub/b.txt", "report.pdf", "4913.md", "x.tmp.md"]
    ignored = [".a.md.swp", "a.md.swo", "a.md~", ".#a.md", "4913", "a.md.tmp", ".~lock.report.odt#", ".DS_Store",
               ".git/index", "node_modules/x/a.md", "sub/.hidden/a.md", ".hidden.md", "index/localcr-index.json",
               "index/segments/s1/store.sqlite", "__pycache__/a.pyc"]
    assert [name for name in wanted if not changes(Change.added, str(root / name))] == []
    assert [name for name in ignored if changes(Change.modified, str(root / name))] == []
    assert not changes(Change.added, str(tmp_path / "cache" / "embeddings" / "x"))
    assert INDEX_MARKER == store.MARKER  # what the walk of a folder skips is what an index holds


def test_a_missing_folder_and_an_index_that_records_none_are_one_line(tmp_path):
    assert error_line("watch", tmp_path / "nowhere", "--index", tmp_path / "index") == \
        f"localcr: error: {tmp_path / 'nowhere'}: no such file or directory"
    assert "name the folders to watch" in error_line("watch", "--index", tmp_path / "index")


@pytest.mark.model
@pytest.mark.loopback
def test_watch_follows_an_added_an_edited_and_a_deleted_file_and_serve_answers_from_each_generation(tmp_path):
    from localcr.store import read_marker

    notes, cache = tmp_path / "notes", tmp_path / "cache"
    index = notes / "index"  # inside the watched folder: neither read by the builds nor a change that sets one off
    notes.mkdir()
    (notes / "alpha.md").write_text(ALPHA)
    (notes / "beta.md").write_text(BETA)
    env = {**os.environ, "LOCALCR_CACHE_DIR": str(cache)}
    began = time.monotonic()
    watcher = subprocess.Popen(
        [sys.executable, "-m", "localcr", "watch", str(notes), "--index", str(index), "--contexts", "structural",
         "--debounce", "300", "-q"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # not ignored, even under a backgrounded run
    builds, errors = [], []
    readers = [threading.Thread(target=lambda: builds.extend(watcher.stdout), daemon=True),
               threading.Thread(target=lambda: errors.extend(watcher.stderr), daemon=True)]
    for reader in readers:
        reader.start()

    def until(what: str, done) -> None:
        deadline = time.monotonic() + DEADLINE_S
        while not done():
            assert watcher.poll() is None, f"watch exited: {''.join(errors)}"
            assert time.monotonic() < deadline, f"not within {DEADLINE_S} s: {what}; watch printed {builds} {errors}"
            time.sleep(0.1)

    served, asking, answers = None, threading.Event(), []
    try:
        until("the first build", lambda: len(builds) == 1)
        assert " 2 new, 0 changed, 0 removed: 2 documents" in builds[0]
        served = start_server(index, cache, corpus=notes)

        def ask_throughout() -> None:
            while not asking.is_set():
                try:
                    answers.append(served.request("POST", "/api/search", {"query": "quokka wombat zeppelin", "k": 3}))
                except OSError as exc:  # no answer at all is a failed request too
                    answers.append((f"{type(exc).__name__}: {exc}", {}))
                time.sleep(0.02)

        asker = threading.Thread(target=ask_throughout, daemon=True)
        asker.start()

        def found(word: str) -> set[str]:
            status, body = served.request("POST", "/api/search", {"query": word, "mode": "lexical", "k": 5})
            assert status == 200, body
            return {Path(hit["path"]).name for hit in body["hits"] if word in hit["text"]}

        generations = []

        def built(count: int, documents: int) -> None:
            """The watch's build `count` is done and serve answers from the generation it left."""
            until(f"build {count}", lambda: len(builds) >= count)
            generation = read_marker(index)["current"]
            until(f"serve on {generation}", lambda: served.request("GET", "/api/health")[1]["generation"] == generation)
            until(f"an answer from {generation}", lambda: any(body.get("generation") == generation for _, body in answers[:]))
            assert served.request("GET", "/api/stats")[1]["documents"] == documents  # the index was not indexed
            generations.append(generation)

        built(1, 2)
        (notes / "gamma.md").write_text(GAMMA)
        until("gamma.md found", lambda: found("zeppelin") == {"gamma.md"})
        built(2, 3)

        (notes / "4913").write_text("")  # vim's save: its probe, its swap file, then the file (saved again at once)
        (notes / "4913").unlink()
        (notes / ".alpha.md.swp").write_bytes(b"b0VIM 9.0")
        for n in range(3):
            (notes / "alpha.md").write_text(ALPHA.replace("quokka", "narwhal") + "\n" * n)
            time.sleep(0.01)
        (notes / ".alpha.md.swp").unlink()
        until("the edit found", lambda: found("narwhal") == {"alpha.md"} and not found("quokka"))
        built(3, 3)

        (notes / "beta.md").unlink()
        until("beta.md gone", lambda: not found("wombat"))
        built(4, 2)

        time.sleep(1)  # time for a build the editor's files would have set off
        assert len(builds) == 4, builds  # the first, then one for each change: temporary files set none off
        assert [" 1 new, 0 changed, 0 removed", " 0 new, 1 changed, 0 removed", " 0 new, 0 changed, 1 removed"] == \
            [line[line.index(" "):line.index(":", 9)] for line in builds[1:]]
        assert len(set(generations)) == 4
        asking.set()
        asker.join(timeout=70)
        failed = [(status, body) for status, body in answers if status != 200]
        assert len(answers) > 20 and not failed, failed[:3]

        watcher.send_signal(signal.SIGINT)  # Ctrl-C
        assert watcher.wait(timeout=30) == 130
        for reader in readers:
            reader.join(timeout=5)
        assert errors[-1].startswith("localcr: interrupted;") and "Traceback" not in "".join(errors)
        print(f"watch test: {len(answers)} requests, all answered, over {time.monotonic() - began:.1f} s")
    finally:
        asking.set()
        if watcher.poll() is None:
            watcher.kill()
            watcher.wait()
        if served:
            stop_server(served)
