"""The shared cache: stores that heal when damaged, the size limit, listing and pruning by model and age, and
`localcr cache`. Every test has a cache directory of its own and sets entries directly (no model), except
the last, which indexes over a damaged cache with the bundled embedder."""
from __future__ import annotations

import os
import sqlite3

import diskcache
import numpy as np
import pytest
from conftest import error_line, run

from localcr import cache as C
from localcr.errors import LocalcrError

QWEN = C.tag("qwen", "fingerprint 1f2e3d4c", "prompt marked-2026.1")
MINILM = C.tag("minilm", "fingerprint 9a8b7c6d")
DAY = 86400


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALCR_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _filled(name: str, n: int = 500, tag: str = QWEN, start: int = 0) -> C.Store:
    store = C.open_cache(name)
    store.set_many(((f"k{i}", {"raw": f"context {i} " * 5}) for i in range(start, start + n)), tag)
    return store


def _garbage(db):
    db.write_bytes(b"garbage" * 1000)


def _truncated(db):
    os.truncate(db, db.stat().st_size // 2)


def _garbled_inside(db):
    """Pages in the middle overwritten: the store opens, but reading all of it fails."""
    with open(db, "r+b") as f:
        f.seek(db.stat().st_size // 2 // 4096 * 4096)
        f.write(b"\xff" * 3 * 4096)


def _aside(cache_dir, name):
    return list(cache_dir.glob(f"{name}.damaged-*"))


@pytest.mark.parametrize("damage", [_garbage, _truncated])
@pytest.mark.parametrize("name", list(C.STORES))
def test_a_store_that_cannot_be_opened_is_moved_aside_and_replaced(cache_dir, capsys, name, damage):
    _filled(name).close()
    damage(cache_dir / name / "cache.db")
    store = C.open_cache(name)
    assert store.get("k1") is None
    warning = capsys.readouterr().err.strip()
    [aside] = _aside(cache_dir, name)
    assert warning == (f"warning: the cache store {cache_dir / name} was damaged "
                       f"({'file is not a database' if damage is _garbage else 'database disk image is malformed'}); "
                       f"moved it to {aside.name} and started an empty one: {C.STORES[name]}")
    assert aside.name.startswith(f"{name}.damaged-20") and (aside / "cache.db").is_file()
    store.set("k1", "fresh", QWEN)
    assert store.get("k1") == "fresh"
    store.close()
    assert C.open_cache(name).get("k1") == "fresh" and capsys.readouterr().err == ""


def test_a_store_damaged_inside_is_replaced_when_read(cache_dir, capsys):
    _filled("embeddings", n=3000).close()
    _garbled_inside(cache_dir / "embeddings" / "cache.db")
    store = C.open_cache("embeddings")
    assert store.entries() == []  # the full read met the damage: the store was replaced, and is empty
    assert "was damaged (database disk image is malformed)" in capsys.readouterr().err
    assert len(_aside(cache_dir, "embeddings")) == 1
    assert store.get_many(["k1", "k2"]) == [None, None]


def test_stores_damaged_twice_in_one_second_are_both_kept(cache_dir, capsys):
    for _ in range(2):
        _filled("rates", n=5).close()
        _garbage(cache_dir / "rates" / "cache.db")
        assert C.open_cache("rates").get("k1") is None
    assert len(_aside(cache_dir, "rates")) == 2
    assert capsys.readouterr().err.count("warning:") == 2


def test_unreadable_entries_are_misses_with_one_warning(cache_dir, capsys):
    store = C.open_cache("embeddings")
    big = np.arange(20000, dtype=np.float32)  # larger than diskcache keeps inline: stored in a value file
    store.set_many([("file1", big), ("file2", big), ("inline", np.ones(4))], MINILM)
    store.close()
    for value_file in (cache_dir / "embeddings").rglob("*.val"):
        value_file.unlink()
    with sqlite3.connect(cache_dir / "embeddings" / "cache.db") as con:
        con.execute("UPDATE Cache SET value = X'00FF00' WHERE key = 'inline'")
    con.close()

    store = C.open_cache("embeddings")
    assert store.get_many(["file1", "file2", "inline"]) == [None, None, None]
    warning = capsys.readouterr().err.strip()
    assert warning.startswith(f"warning: the cache store {cache_dir / 'embeddings'} has an unreadable entry (")
    assert warning.endswith("treated as missing, it will be computed again") and "\n" not in warning
    assert not _aside(cache_dir, "embeddings")  # one bad entry does not cost the others
    store.set("inline", np.ones(4), MINILM)  # computed again, stored again: readable again
    assert store.get("inline").tolist() == [1.0] * 4


def test_other_sqlite_errors_are_not_taken_for_damage(cache_dir):
    store = _filled("contexts", n=5)
    with pytest.raises(sqlite3.OperationalError):
        store._use(lambda cache: cache._sql("SELECT nonsense FROM Cache"))
    assert store.get("k1") is not None and not _aside(cache_dir, "contexts")


def test_least_recently_used_entries_go_first_past_the_limit(cache_dir, monkeypatch):
    monkeypatch.setenv("LOCALCR_CACHE_LIMIT", "1M")
    store = C.open_cache("embeddings")
    block = np.zeros(10000, dtype=np.float32)  # 40 KB each
    store.set_many([(f"old{i}", block) for i in range(20)], MINILM)
    assert store.get("old0") is not None  # used again: now the most recently used of the old ones
    store.set_many([(f"new{i}", block) for i in range(10)], MINILM)  # past 1 MB: diskcache evicts 10 at a time
    assert [store.get(f"old{i}") is not None for i in range(12)] == [True] + [False] * 10 + [True]
    assert all(store.get(f"new{i}") is not None for i in range(10))


@pytest.mark.parametrize("text, limit", [("", 20 * 2**30), ("50GiB", 50 * 2**30), ("500M", 500 * 2**20),
                                         ("1.5 gb", int(1.5 * 2**30)), ("123456", 123456)])
def test_cache_limit_from_the_environment(monkeypatch, text, limit):
    monkeypatch.setenv("LOCALCR_CACHE_LIMIT", text)
    assert C.cache_limit() == limit


@pytest.mark.parametrize("text", ["lots", "0", "-5G", "20 parsecs"])
def test_a_bad_cache_limit_is_one_clear_error(monkeypatch, text):
    monkeypatch.setenv("LOCALCR_CACHE_LIMIT", text)
    with pytest.raises(LocalcrError, match="LOCALCR_CACHE_LIMIT=.* is not a size: write e.g. 20GiB"):
        C.cache_limit()


def _untagged(cache_dir, name, n):
    """Entries as localcr wrote them before entries were tagged."""
    with diskcache.Cache(str(cache_dir / name)) as old:
        for i in range(n):
            old.set(f"untagged{i}", "old")


def _age(cache_dir, name, days, tag=None):
    with sqlite3.connect(cache_dir / name / "cache.db") as con:
        con.execute("UPDATE Cache SET store_time = store_time - ? WHERE tag IS ?", (days * DAY, tag))
    con.close()


def test_usage_lists_stores_by_model_and_untagged(cache_dir):
    assert C.usage() == []
    _filled("contexts", n=3).close()
    _filled("contexts", n=2, tag=C.tag("gemma", "fingerprint 00", "prompt marked-2026.1"), start=10).close()
    _filled("embeddings", n=4, tag=MINILM).close()
    _untagged(cache_dir, "embeddings", 5)
    usage = {s.name: s for s in C.usage()}
    assert sorted(usage) == ["contexts", "embeddings"]  # listing creates no store
    assert [(e.label, e.model, e.count) for e in usage["contexts"].entries] == [
        ("gemma (fingerprint 00, prompt marked-2026.1)", "gemma", 2), (QWEN, "qwen", 3)]
    assert [(e.label, e.model, e.count) for e in usage["embeddings"].entries] == [
        (MINILM, "minilm", 4), ("untagged (older localcr)", None, 5)]
    assert usage["embeddings"].count == 9 and usage["embeddings"].disk_bytes > 0
    assert all(e.size > 0 and e.oldest <= e.newest for s in usage.values() for e in s.entries)


def test_prune_by_model_with_and_without_dry_run(cache_dir):
    _filled("contexts", n=3).close()
    _filled("questions", n=2, tag=C.tag("qwen", "fingerprint 1f2e3d4c", "questions qa-2025.1")).close()
    _filled("embeddings", n=4, tag=MINILM).close()
    would = C.prune("qwen", dry_run=True)
    assert [(e.store, e.count) for e in would] == [("contexts", 3), ("questions", 2)]
    assert sum(s.count for s in C.usage()) == 9  # nothing went
    assert C.prune("qwen") == would
    assert {s.name: s.count for s in C.usage()} == {"contexts": 0, "embeddings": 4, "questions": 0}
    assert C.prune("qwen") == [] and C.prune("qwe") == []  # a model's whole name, never a prefix


def test_prune_by_age(cache_dir):
    _filled("contexts", n=3).close()
    _filled("embeddings", n=4, tag=MINILM).close()
    _untagged(cache_dir, "embeddings", 5)
    _age(cache_dir, "embeddings", 40)  # the untagged entries were written 40 days ago
    _age(cache_dir, "contexts", 10, QWEN)
    assert [(e.label, e.count) for e in C.prune(older_than="30d")] == [("untagged (older localcr)", 5)]
    assert [(e.label, e.count) for e in C.prune(older_than="1w")] == [(QWEN, 3)]
    assert {s.name: s.count for s in C.usage()} == {"contexts": 0, "embeddings": 4}
    _age(cache_dir, "embeddings", 40, MINILM)
    assert C.prune("qwen", older_than="30d") == []  # both given: entries that match both


def test_prune_needs_a_model_or_an_age_it_can_read(cache_dir):
    with pytest.raises(LocalcrError, match="name what to prune"):
        C.prune()
    with pytest.raises(LocalcrError, match="older_than='30 days' is not an age"):
        C.prune(older_than="30 days")


def test_cache_command_lists_and_prunes(cache_dir):
    assert "empty" in run("cache")
    _filled("contexts", n=3).close()
    _filled("embeddings", n=4, tag=MINILM).close()
    _untagged(cache_dir, "embeddings", 5)
    out = run("cache")
    assert f"cache {cache_dir}: each store kept under 20.0 GB, least recently used entries evicted first" in out
    lines = out.splitlines()
    assert [line.split()[0] for line in lines if not line.startswith(" ")][1:] == ["contexts", "embeddings"]
    assert any(line.startswith(f"  {QWEN}") and " 3 entries " in line for line in lines)
    assert any(line.startswith("  untagged (older localcr)") and " 5 entries " in line for line in lines)

    out = run("cache", "--prune-model", "qwen", "--dry-run")
    assert "would delete 3 entries" in out and "run again without --dry-run" in out
    assert " 3 entries " in [line for line in run("cache").splitlines() if line.startswith("contexts")][0]
    assert "deleted 3 entries" in run("cache", "--prune-model", "qwen")
    assert " 0 entries " in [line for line in run("cache").splitlines() if line.startswith("contexts")][0]
    assert run("cache", "--prune-model", "qwen") == "nothing to prune: no cache entry matches (models in the cache: minilm)\n"
    assert "deleted 9 entries" in run("cache", "--older-than", "0d")


def test_cache_command_shows_damaged_stores_and_refuses_bad_options(cache_dir):
    _filled("contexts", n=3).close()
    _garbage(cache_dir / "contexts" / "cache.db")
    out = run("cache")
    assert "was damaged" in out and "contexts.damaged-" in out and "nothing reads it, delete it when done" in out
    assert error_line("cache", "--older-than", "soon") == (
        "localcr: error: --older-than 'soon' is not an age: write e.g. 30d, 12h, 2w or 90m")
    assert error_line("cache", "--dry-run") == "localcr: error: --dry-run goes with --prune-model or --older-than"


@pytest.mark.model
def test_index_goes_on_over_a_damaged_cache(cache_dir, corpus, tmp_path):
    index = tmp_path / "index"
    run("index", corpus, "--index", index, "-q", "--contexts", "structural")
    _garbage(cache_dir / "embeddings" / "cache.db")
    out = run("index", corpus, "--index", tmp_path / "second", "-q")  # a new index: every embedding looked up
    [warning] = [line for line in out.splitlines() if "damaged" in line]  # SQLite's words depend on the garbage
    assert warning.startswith(f"warning: the cache store {cache_dir / 'embeddings'} was damaged (")
    assert warning.endswith(f"; moved it to {_aside(cache_dir, 'embeddings')[0].name} and started an empty one: "
                            "cached embeddings will be computed again")
    again = run("index", corpus, "--index", tmp_path / "third", "-q")
    assert "warning: the cache store" not in again
    assert "  minilm (fingerprint " in run("cache")
    assert run("search", "retries", "--index", index, "-k", "1").startswith("1. ")
