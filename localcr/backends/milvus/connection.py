"""The connection to a Milvus server (or a Milvus Lite file): where an index lives, the client, every failure as one
line naming what to do, the server's version and what it can hold, and the index's alias and generations."""
from __future__ import annotations

import json
import logging
import os
import re
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from localcr.errors import BackendError, LocalcrError

TOKEN_ENV = "LOCALCR_MILVUS_TOKEN"
DATABASE_ENV = "LOCALCR_MILVUS_DATABASE"
MANIFEST_PROPERTY = "localcr.manifest"
# The manifest's "layout": the fields of localcr.backends.milvus.build's schema; another value is another schema.
# 2: every entity carries its document's path, kind and language, which filters select by.
LAYOUT = "localcr-milvus-2"
GENERATION_SEPARATOR = "__"
QUERY_BATCH = 1000
TERMS_SUFFIX = "_terms"  # the document frequencies of a generation with client-computed sparse vectors
# What each lexical leg needs of a server (Milvus Lite has both); "none", a dense-only index, needs nothing new.
SERVER_NEEDED = {"client": ((2, 4), "sparse vectors"), "function": ((2, 5), "the BM25 function")}



@dataclass(frozen=True)
class Location:
    """Where a Milvus index lives, parsed from an --index value (see localcr.backends)."""

    text: str  # as the user wrote it
    uri: str  # what MilvusClient connects to: a server's URL, or a Milvus Lite file's absolute path
    name: str  # the alias searches go through
    lite: bool


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,200}")


def parse_location(text: str) -> Location:
    if text.startswith("milvus-lite:"):
        path, _, name = text.removeprefix("milvus-lite:").rpartition("/")
        if not path.endswith(".db"):
            raise LocalcrError(f"{text}: name a Milvus Lite index as milvus-lite:PATH.db/COLLECTION")
        location = Location(text, str(Path(path).expanduser().resolve()), name, True)
    else:
        scheme, _, rest = text.partition("://")
        host, _, name = rest.partition("/")
        if not host:
            raise LocalcrError(f"{text}: name a Milvus server index as milvus://HOST:PORT/COLLECTION")
        location = Location(text, f"{'https' if scheme == 'milvus+https' else 'http'}://{host}", name, False)
    if not _NAME.fullmatch(location.name) or GENERATION_SEPARATOR in location.name:
        raise LocalcrError(f"{text}: {location.name!r} is no collection name localcr can use: letters, digits and single "
                           "underscores, not starting with a digit (e.g. milvus://localhost:19530/docs)")
    return location


def connect(location: Location):
    """A client of the server (token and database from the environment), or of the Milvus Lite file."""
    try:
        from pymilvus import MilvusClient
    except ImportError:
        raise BackendError(f"{location.text}: a Milvus index needs pymilvus: pip install 'localcr[milvus]'") from None
    for name in ["pymilvus", "milvus_lite", *logging.root.manager.loggerDict]:  # failures reach the user as one line
        if name.startswith(("pymilvus", "milvus_lite")):
            logging.getLogger(name).setLevel(logging.CRITICAL)
    options = {} if location.lite else {"token": os.environ.get(TOKEN_ENV, ""), "db_name": os.environ.get(DATABASE_ENV, "")}
    try:
        if location.lite:
            Path(location.uri).parent.mkdir(parents=True, exist_ok=True)
        return MilvusClient(location.uri, timeout=30, **options)
    except Exception as exc:  # pymilvus raises MilvusException, and plain exceptions from Milvus Lite
        raise failure(location, exc) from None


def failure(location: Location, exc: Exception) -> BackendError:
    """One line for what went wrong talking to Milvus, naming what to do."""
    message = str(getattr(exc, "message", "") or exc)
    lowered = message.lower()
    if location.lite and ("open local milvus failed" in lowered or "lock" in lowered):
        return BackendError(f"{location.text}: {location.uri} is open in another process (Milvus Lite allows one); "
                            "stop that process, or search through it (localcr serve)")
    if any(word in lowered for word in ("unauthenticated", "auth", "credential", "token", "permission denied")):
        return BackendError(f"{location.text}: the server refused the credentials: set {TOKEN_ENV} to a valid token "
                            f"(user:password or an API key) ({message})")
    if "database" in lowered and "not" in lowered:
        return BackendError(f"{location.text}: {message}: set {DATABASE_ENV} to an existing database (or unset it for 'default')")
    if "fail connecting" in lowered or "unavailable" in lowered or "deadline" in lowered:
        return BackendError(f"{location.text}: cannot reach a Milvus server at {location.uri}: start it, or check the "
                            "host and port (and milvus+https:// for TLS)")
    return BackendError(f"{location.text}: Milvus failed: {message}")


def literal(value) -> str:
    """A Milvus filter expression literal (a string, or a list of them) with its quotes and backslashes escaped."""
    return json.dumps(value, ensure_ascii=False)


class Connection:
    """A client and the location it serves; every call's failure becomes a BackendError."""

    def __init__(self, location: str | Location):
        self.location = location if isinstance(location, Location) else parse_location(location)
        self.client = connect(self.location)

    def call(self, method: str, *args, **kwargs):
        try:
            return getattr(self.client, method)(*args, **kwargs)
        except LocalcrError:
            raise
        except Exception as exc:
            raise failure(self.location, exc) from None

    @cached_property
    def server_version(self) -> str:
        """The version the server reports, e.g. "v2.3.5-lite" (the standalone server of PyPI's milvus 2.3.5)."""
        return str(self.call("get_server_version"))

    def check_lexical(self, lexical: str) -> None:
        """Refuse, in one line, a lexical leg the server cannot hold, naming its version, the version needed and the
        option that works with it."""
        if self.location.lite or lexical not in SERVER_NEEDED:
            return
        (major, minor), feature = SERVER_NEEDED[lexical]
        found = re.match(r"v?(\d+)\.(\d+)", self.server_version)
        if found and (int(found[1]), int(found[2])) < (major, minor):
            raise BackendError(f"{self.location.text}: the server runs Milvus {self.server_version}; --lexical {lexical} needs "
                               f"Milvus {major}.{minor} or later ({feature}): index with --lexical none (a dense-only "
                               "index: dense and hybrid searches, no lexical leg) or upgrade the server")

    def aliased(self) -> str | None:
        """The generation the index's alias points at; None when there is none."""
        if self.location.name not in self.call("list_aliases").get("aliases", []):
            return None
        return self.call("describe_alias", self.location.name)["collection_name"]

    def generations(self) -> list[str]:
        prefix = self.location.name + GENERATION_SEPARATOR
        return [name for name in self.call("list_collections") if name.startswith(prefix) and not name.endswith(TERMS_SUFFIX)]

    def drop(self, generation: str) -> None:
        """A generation and its term statistics, if it has them."""
        for name in (generation, generation + TERMS_SUFFIX):
            if self.call("has_collection", name):
                self.call("drop_collection", name)

    def manifest(self, generation: str) -> dict:
        """A generation's manifest, after checking it is a collection of localcr's layout."""
        described = self.call("describe_collection", generation)
        recorded = described.get("properties", {}).get(MANIFEST_PROPERTY)
        manifest = json.loads(recorded) if recorded else {}
        if manifest.get("layout") != LAYOUT:
            raise BackendError(f"{self.location.text}: collection {generation} was not written by this localcr (layout "
                               f"{manifest.get('layout')!r}, not {LAYOUT!r}): rebuild it with `localcr index PATH --index "
                               f"{self.location.text} --rebuild`, or choose another collection name")
        dense = next((f for f in described["fields"] if f["name"] == "dense"), None)
        dimension = int(dense["params"]["dim"]) if dense else None
        if dimension != manifest["embedder"]["dimension"]:
            raise BackendError(f"{self.location.text}: collection {generation} holds dense vectors of {dimension} dimensions "
                               f"where its manifest says {manifest['embedder']['dimension']}: rebuild it with "
                               f"`localcr index PATH --index {self.location.text} --rebuild`")
        return manifest

    def refuse_foreign(self) -> None:
        """A collection that has the index's own name is someone else's: localcr only writes generations."""
        if self.location.name in self.call("list_collections"):
            raise BackendError(f"{self.location.text}: a collection named {self.location.name} exists and is not a "
                               "localcr index; choose another collection name")

    def iterate(self, generation: str, expression: str, fields: list[str]):
        """Every entity matching a filter, in batches (a query alone returns at most 16,384)."""
        iterator = self.call("query_iterator", generation, batch_size=QUERY_BATCH, filter=expression, output_fields=fields)
        try:
            while batch := iterator.next():
                yield from batch
        except Exception as exc:
            raise failure(self.location, exc) from None
        finally:
            iterator.close()

    def count(self, generation: str, expression: str) -> int:
        return int(self.call("query", generation, filter=expression, output_fields=["count(*)"])[0]["count(*)"])

