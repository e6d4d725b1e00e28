"""The expensive work of a build on Ray actors (`localcr index --ray auto|ADDRESS`).

The driver (this process) checks the caches, sends only the misses, writes what comes back to the caches
and builds the segment; actors only compute, and touch no cache (on a cluster they have none). Each actor
loads its model once per build and uses as many threads as the CPUs Ray gives it (`cpus_per_actor`, default
1), so actors on one machine do not oversubscribe its cores. LLM work goes out a whole document per task:
the actor evaluates the document once into its KV cache and writes all that document's missing contexts on it,
exactly as the local path does (same groups, prompts and greedy decoding). Embeddings go out in the batches the
local path encodes, and come back in order.

"auto" starts a private Ray instance on this machine with all its CPUs, bound to the loopback interface
only (Ray's no-cluster mode), and stops it when the build ends; an address joins a running cluster
(`ray start --head` on one machine, `ray start --address HEAD:6379` on the others; every node needs localcr
and the models installed at the same paths). A Ray already initialised in this process is used as it is.
"""
from __future__ import annotations

import contextlib
import logging
import os
import socket
import sys
import time
from pathlib import Path

import localcr
from localcr.errors import LocalcrError
from localcr.execution.executor import Executor

DEFAULT_PORT = {"": 6379, "ray://": 10001}  # a cluster's GCS port; Ray Client's
REACH_TIMEOUT = 5.0


def _import_ray():
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # offline tool: no usage reports
    try:
        import ray
    except ImportError:
        raise LocalcrError("--ray needs Ray, which is not installed: pip install 'localcr[ray]' (or 'ray>=2.40')") from None
    return ray


def _split_address(address: str) -> tuple[str, str, int]:
    """(scheme, host, port) of a Ray address such as 10.0.0.5:6379, head-node or ray://10.0.0.5:10001."""
    scheme = "ray://" if address.startswith("ray://") else ""
    rest = address[len(scheme):].strip("/")
    host, colon, port = rest.rpartition(":")
    if not colon or port.startswith("]"):  # no port, or a bare IPv6 address
        host, port = rest, str(DEFAULT_PORT[scheme])
    host = host.strip("[]")
    if not host or not port.isdigit():
        raise LocalcrError(f"--ray {address!r} is not a Ray address: write auto, HOST:PORT or ray://HOST:PORT")
    return scheme, host, int(port)


def _check_reachable(address: str) -> None:
    """Fail at once, in one line, when nothing listens at the address (Ray itself retries for a long time)."""
    _, host, port = _split_address(address)
    try:
        with socket.create_connection((host, port), timeout=REACH_TIMEOUT):
            pass
    except OSError as exc:
        why = exc.strerror or str(exc) or type(exc).__name__
        raise LocalcrError(f"cannot reach a Ray cluster at {address} ({why}): start one with `ray start --head` "
                           f"there, or use --ray auto for a local one; the index is untouched") from None


def connect(address: str) -> bool:
    """Connect this process to Ray: "auto" starts a local instance with this machine's CPUs, anything else
    joins the cluster at that address. Returns whether Ray was started or joined here (and so is to be shut
    down by the caller); a Ray already initialised in this process is used as it is."""
    ray = _import_ray()
    if ray.is_initialized():
        current = ray.get_runtime_context().gcs_address
        if address != "auto" and not address.startswith("ray://") and current and \
                _split_address(address)[1:] != _split_address(current)[1:]:
            raise LocalcrError(f"this process is already connected to Ray at {current}, not {address}")
        return False
    quiet = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.ERROR}
    try:
        if address == "auto":
            with _loopback_only():
                # "local": a new instance even when RAY_ADDRESS names a cluster
                ray.init(address="local", num_cpus=len(os.sched_getaffinity(0)), **quiet)
        else:
            _check_reachable(address)
            ray.init(address=address, **quiet)
    except LocalcrError:
        raise
    except Exception as exc:  # ConnectionError, RuntimeError, ValueError ...: the user needs one line
        raise LocalcrError(f"cannot connect to Ray at {address} ({type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}); "
                           "the index is untouched") from None
    return True


@contextlib.contextmanager
def _loopback_only():
    """Ray's no-cluster mode while a local instance starts: its processes (which inherit the variable) listen on
    127.0.0.1 only. Otherwise Ray binds its servers to all interfaces, named by the machine's network address.
    Ray reads the variable when it is imported: if it was imported already, its constant is set too."""
    try:
        from ray._private import ray_constants  # private: where Ray 2.40-2.60 keep it
    except ImportError:
        ray_constants = None
    saved_env, saved = os.environ.get(_NO_CLUSTER), getattr(ray_constants, "ENABLE_RAY_CLUSTER", None)
    os.environ[_NO_CLUSTER] = "0"
    if saved is not None:
        ray_constants.ENABLE_RAY_CLUSTER = False
    try:
        yield
    finally:
        if saved is not None:
            ray_constants.ENABLE_RAY_CLUSTER = saved
        if saved_env is None:
            os.environ.pop(_NO_CLUSTER, None)
        else:
            os.environ[_NO_CLUSTER] = saved_env


_NO_CLUSTER = "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"


def _assigned_cpus() -> int:
    """The CPUs Ray gave this actor: its llama.cpp and torch threads."""
    import ray

    cpus = ray.get_runtime_context().get_assigned_resources().get("CPU", 1)
    return max(1, int(round(cpus)))


class _Worker:
    """A Ray actor that loads its model once. A LocalcrError while loading (a model that does not load on this
    node) is raised by the first call, about(): Ray keeps the exception of a method, but of a failed __init__
    only a message with a traceback in it."""

    def __init__(self, *args):
        self.error: LocalcrError | None = None
        self.threads = _assigned_cpus()
        try:
            self.load(*args)
        except LocalcrError as exc:
            self.error = exc

    def load(self, *args) -> None:
        raise NotImplementedError

    def about(self) -> dict:
        """Where the actor runs and which localcr it imported (a stale install on a node shows here)."""
        if self.error is not None:
            raise self.error
        return {"localcr": localcr.__file__, "pid": os.getpid(), "host": socket.gethostname(), "threads": self.threads}


class _ContextWorker(_Worker):
    """A Ray actor holding one loaded LLM; writes the missing contexts of one document per call."""

    def load(self, spec, parallel: int) -> None:
        from dataclasses import replace

        from localcr.llm import LlamaRunner

        self.spec = replace(spec, params={**spec.params, "n_threads": self.threads})
        self.runner = LlamaRunner(self.spec, parallel=parallel)

    def generate(self, doc, all_chunks, missing, fingerprint):
        from localcr.contexts import generate_document

        return generate_document(self.runner, self.spec, doc, all_chunks, missing, fingerprint)


class _EmbedWorker(_Worker):
    """A Ray actor holding one loaded embedder (without its cache); encodes one batch of texts per call."""

    def load(self, spec) -> None:
        from localcr.embeddings import load_backend

        self.backend = load_backend(spec, self.threads)

    def encode(self, texts):
        import numpy as np

        return self.backend.encode(texts).astype(np.float32)


class RayExecutor(Executor):
    name = "ray"
    spreads_documents = True

    def __init__(self, address: str, *, actors: int | None = None, cpus_per_actor: int = 1, log=None):
        self.address = address
        self.ray = _import_ray()
        self.started = connect(address)
        self.cpus_per_actor = max(1, cpus_per_actor)
        cpus = int(self.ray.cluster_resources().get("CPU", 0))
        self.actors = actors or max(1, cpus // self.cpus_per_actor)
        self.log = log or (lambda message: print(message, file=sys.stderr))
        self.workers: list[dict] = []  # what each actor of the last phase reported (about())
        self.runtime_env = _runtime_env()
        # Embedding actors, kept from the first window a build computes to its LLM phase or its end: a lexical-first
        # build embeds a group of documents a call (localcr.pipeline), and an actor loads its model in seconds.
        self.embedders: list = []

    # --- the two kinds of work

    def write_contexts(self, docs, chunks_by_doc, spec, *, composition, progress, log):
        from tqdm import tqdm

        from localcr.cache import open_cache
        from localcr.contexts import (DEFAULT_PARALLEL, ContextStats, add_work, apply_generated, context_tag,
                                      pending_contexts, store_context)

        self._stop(self.embedders)  # their CPUs are the LLM actors'
        started = time.perf_counter()
        stats = ContextStats()
        cache = open_cache("contexts")
        try:
            todo = pending_contexts(docs, chunks_by_doc, spec, cache, stats, composition)
            if not todo:
                return stats
            fingerprint = spec.fingerprint()
            tag = context_tag(fingerprint, spec)
            actors = self._start(_ContextWorker, min(self.actors, len(todo)), spec, DEFAULT_PARALLEL)
            n = sum(len(missing) for _, _, missing in todo)
            (log or self.log)(f"contexts: {n} to write with {spec.name} in {len(todo)} documents on {len(actors)} Ray "
                              f"actors of {self.cpus_per_actor} CPU; an interrupted run resumes where it stopped")
            bar = tqdm(total=stats.chunks, initial=stats.cached, unit="chunk", desc="contexts", file=sys.stderr,
                       disable=not progress, dynamic_ncols=True)
            try:
                work = [(doc, all_chunks, missing, fingerprint) for doc, all_chunks, missing in todo]
                for i, (entries, done) in self._spread(actors, "generate", work, in_flight=1):
                    doc, _, missing = todo[i]
                    for chunk, entry in zip(missing, entries):
                        store_context(cache, fingerprint, spec, doc, chunk, entry, tag)
                        apply_generated(doc, chunk, entry, stats, composition)
                    add_work(stats, done)
                    bar.update(len(missing))
            finally:
                bar.close()
                self._stop(actors)
        finally:
            cache.close()
            stats.seconds = time.perf_counter() - started
        return stats

    def embed(self, model, texts, progress=None):
        def encode_batches(batches):
            if not batches:
                return iter(())
            wanted = min(self.actors, len(batches))
            if len(self.embedders) < wanted:
                self.embedders += self._start(_EmbedWorker, wanted - len(self.embedders), model.spec)
            return self._in_order(self._spread(self.embedders, "encode", [(b,) for b in batches], in_flight=2))

        return model.embed(texts, progress=progress, encode_batches=encode_batches)

    def close(self) -> None:
        self._stop(self.embedders)
        if self.started and self.ray.is_initialized():
            self.ray.shutdown()
        self.started = False

    # --- actors

    def _start(self, cls, n: int, *args) -> list:
        """n actors of cls, each with cpus_per_actor CPUs, once every one has loaded its model."""
        remote = self.ray.remote(cls).options(num_cpus=self.cpus_per_actor, runtime_env=self.runtime_env)
        actors = [remote.remote(*args) for _ in range(max(1, n))]
        try:
            self.workers = self._get([a.about.remote() for a in actors])
        except BaseException:
            self._stop(actors)
            raise
        threads = sorted({w["threads"] for w in self.workers})
        self.log(f"ray: {len(actors)} {cls.__name__.strip('_')} actor{'s' if len(actors) > 1 else ''} on "
                 f"{len({w['host'] for w in self.workers})} node(s), {'/'.join(map(str, threads))} thread(s) each, "
                 f"localcr from {', '.join(sorted({str(Path(w['localcr']).parent) for w in self.workers}))}")
        return actors

    def _stop(self, actors: list) -> None:
        for actor in actors:
            self.ray.kill(actor)
        actors.clear()

    def _spread(self, actors, method: str, items: list[tuple], in_flight: int):
        """Call method(*item) for every item on the actors, each actor given the next item as soon as it is
        free (at most in_flight queued on each); yields (index, result) as results arrive."""
        ray = self.ray
        queue = iter(enumerate(items))
        pending: dict = {}

        def submit(actor) -> None:
            nxt = next(queue, None)
            if nxt is not None:
                pending[getattr(actor, method).remote(*nxt[1])] = (nxt[0], actor)

        for _ in range(in_flight):
            for actor in actors:
                submit(actor)
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1)
            i, actor = pending.pop(done[0])
            result = self._get(done[0])
            submit(actor)
            yield i, result

    @staticmethod
    def _in_order(results):
        """The results of _spread in the order of their items."""
        waiting, following = {}, 0
        for i, result in results:
            waiting[i] = result
            while following in waiting:
                yield waiting.pop(following)
                following += 1

    def _get(self, refs):
        """ray.get, with a LocalcrError raised on an actor (a model that does not load, a prompt that does not
        fit) re-raised here as itself, and a lost actor as one line."""
        ray = self.ray
        try:
            return ray.get(refs)
        except ray.exceptions.RayTaskError as exc:
            if isinstance(exc.cause, LocalcrError):
                raise LocalcrError(str(exc.cause)) from None
            raise
        except ray.exceptions.RayActorError as exc:
            cause = getattr(exc, "cause", None) or exc
            if isinstance(cause, ray.exceptions.RayTaskError) and isinstance(cause.cause, LocalcrError):
                raise LocalcrError(str(cause.cause)) from None
            first = str(cause).strip().splitlines()[0] if str(cause).strip() else type(cause).__name__
            raise LocalcrError(f"a Ray actor died ({first}); the index is untouched and finished work is cached: "
                               "run the same command again") from None


def _runtime_env() -> dict:
    """When localcr runs from a checkout (not installed), its workers import the same checkout."""
    root = Path(localcr.__file__).resolve().parent.parent
    if not (root / "pyproject.toml").is_file():
        return {}
    path = os.pathsep.join(p for p in (str(root), os.environ.get("PYTHONPATH", "")) if p)
    return {"env_vars": {"PYTHONPATH": path}}
