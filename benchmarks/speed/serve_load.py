"""Load on a served index: N concurrent clients against the real `localcr serve`, loopback only.

    .venv/bin/python benchmarks/speed/serve_load.py --data ../shared/data/anthropic-codebase \
        [--clients 1,2,4,8] [--mode hybrid] [-k 5] [--requests 744] [--seconds 60] [--rebuild-at 8] [--index DIR]

Builds (once, in --work) an index of the set with structural contexts. For each number of clients it starts a
fresh `localcr serve` (no query vector cached yet) and the clients, each on its own keep-alive connection,
send the set's queries round-robin until --requests answers have arrived or --seconds have passed. Reported:
throughput, latency as a client sees it (p50/p95/p99), the server's own time per search (took_ms, p50),
errors (any answer but 200; must be zero) and the server's peak RSS. Queries repeat after the set's count
(248 on the code set), and repeats find their vector in the server's query cache: the "first" columns are
the latencies of the requests whose query the server had not seen.
A last run at --rebuild-at clients rebuilds the index halfway through (build_index in this process, as
`localcr index` would, embeddings from the cache) and checks that no request fails and that the server
answers from the new generation afterwards. Clients run in this process, on the same two cores as the server.
With --requests 248 on the code set every query is new to the server (no query vector cached): the latency of
searches that each embed their query. --index serves an index already built instead (e.g. the 100 K-chunk one
`benchmarks/scale/scale.py --sizes 100000` leaves in its --work: synthetic text from the code set's vocabulary, random
vectors), still with --data's queries, and rebuilds nothing.
The table goes to stdout and benchmarks/results/serve_load-MODE-kK.md (-INDEX.md with --index).
"""
from __future__ import annotations

import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from _common import corpus_files, machine, parser, peak_rss_mb, table  # noqa: E402


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))] if ordered else float("nan")


def live_chunks(index: Path) -> int:
    """The live chunks of an index, from its manifest."""
    from localcr import store

    manifest = store.current_manifest(index, store.read_marker(index))
    return sum(s["chunks"] - s["dead_chunks"] for s in manifest["segments"])


class Server:
    """`localcr serve` in its own process, ready once /api/health answers."""

    def __init__(self, index: Path):
        self.port = free_port()
        self.process = subprocess.Popen([sys.executable, "-m", "localcr", "serve", "--index", str(index), "--port", str(self.port)],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise SystemExit(f"localcr serve exited: {self.process.stderr.read()}")
            try:
                if self.get("/api/health")["status"] == "ok":
                    return
            except OSError:
                time.sleep(0.5)
        raise SystemExit("localcr serve did not start within 180 s")

    def get(self, path: str) -> dict:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        connection.request("GET", path)
        return json.loads(connection.getresponse().read())

    def peak_rss_mb(self) -> float:
        return peak_rss_mb(self.process.pid)

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=30)


def load(server: Server, queries: list[str], clients: int, mode: str, k: int, requests: int, seconds: float, during=None) -> dict:
    """Clients send queries round-robin until `requests` answers or `seconds`; `during` runs halfway through."""
    next_query = iter(range(requests))
    lock = threading.Lock()
    latencies, first, took, errors = [], [], [], []
    seen: set[str] = set()
    deadline = time.monotonic() + seconds

    def client():
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
        while time.monotonic() < deadline:
            with lock:
                n = next(next_query, None)
                if n is None:
                    return
                query = queries[n % len(queries)]
                is_first = query not in seen
                seen.add(query)
            body = json.dumps({"query": query, "k": k, "mode": mode})
            began = time.perf_counter()
            try:
                connection.request("POST", "/api/search", body, {"Content-Type": "application/json"})
                response = connection.getresponse()
                payload = response.read()
                elapsed = (time.perf_counter() - began) * 1000
                if response.status != 200:
                    errors.append(f"{response.status}: {payload[:200]!r}")
                    continue
                answer = json.loads(payload)
            except (OSError, http.client.HTTPException, ValueError) as exc:
                errors.append(f"{type(exc).__name__}: {exc}")
                connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
                continue
            with lock:
                latencies.append(elapsed)
                took.append(answer["took_ms"])
                if is_first:
                    first.append(elapsed)

    threads = [threading.Thread(target=client) for _ in range(clients)]
    began = time.perf_counter()
    for t in threads:
        t.start()
    if during:
        while len(latencies) < requests // 2 and any(t.is_alive() for t in threads):
            time.sleep(0.05)
        during()
    for t in threads:
        t.join()
    wall = time.perf_counter() - began
    return {"answered": len(latencies), "errors": errors, "wall": wall, "latencies": latencies, "first": first, "took": took}


def main() -> None:
    p = parser(__doc__.split("\n")[0])
    p.add_argument("--clients", default="1,2,4,8", help="numbers of concurrent clients, one run each")
    p.add_argument("--mode", default="hybrid", choices=["hybrid", "dense", "lexical"])
    p.add_argument("-k", type=int, default=5, help="hits per answer (default 5, the API's; each hit carries its text)")
    p.add_argument("--requests", type=int, default=744, help="answers per run (default: the code set's queries three times)")
    p.add_argument("--seconds", type=float, default=60, help="time limit per run")
    p.add_argument("--rebuild-at", type=int, default=8, help="clients for the run with a rebuild halfway (0: none)")
    p.add_argument("--index", type=Path, help="serve this index, already built, instead of building one of --data's corpus")
    args = p.parse_args()
    if args.index and args.rebuild_at:
        raise SystemExit("--index serves an index as it is: add --rebuild-at 0")
    os.environ.setdefault("LOCALCR_CACHE_DIR", str(args.work / "cache"))
    from localcr.index import build_index
    from localcr.models import load_registry

    chunks, queries_file = corpus_files(args.data)
    queries = [json.loads(line)["query"] for line in queries_file.read_text().splitlines() if line.strip()]
    index = args.index or args.work / f"serve-{args.data.name}"
    rebuild = lambda: build_index([str(chunks)], index, load_registry(), contexts="structural", progress=False,  # noqa: E731
                                  log=lambda m: None)
    if not index.exists():
        rebuild()
    chunk_count = live_chunks(index)

    rows, notes = [], []
    runs = [(int(n), False) for n in args.clients.split(",")] + ([(args.rebuild_at, True)] if args.rebuild_at else [])
    for clients, with_rebuild in runs:
        server = Server(index)
        try:
            before = server.get("/api/health")["generation"]
            result = load(server, queries, clients, args.mode, args.k, args.requests, args.seconds, rebuild if with_rebuild else None)
            after = server.get("/api/health")["generation"]
            rss = server.peak_rss_mb()
        finally:
            server.stop()
        lat, first = result["latencies"], result["first"]
        label = f"{clients}" + (" + rebuild" if with_rebuild else "")
        rows.append([label, result["answered"], len(result["errors"]), f"{result['answered'] / result['wall']:.1f}",
                     f"{percentile(lat, 50):.1f}", f"{percentile(lat, 95):.1f}", f"{percentile(lat, 99):.1f}",
                     f"{percentile(first, 50):.1f}", f"{percentile(first, 95):.1f}",
                     f"{statistics.median(result['took']):.1f}", f"{rss:.0f}"])
        if with_rebuild:
            notes.append(f"rebuild run: generation {before} -> {after} ({'switched' if after != before else 'NOT switched'})")
        notes.extend(f"{label} clients: {e}" for e in result["errors"][:5])
        print(rows[-1], file=sys.stderr)

    head = ["clients", "answered", "errors", "req/s", "p50 ms", "p95 ms", "p99 ms", "first p50", "first p95",
            "server p50", "peak RSS MB"]
    text = (f"# Served index under load ({args.mode})\n\n{machine()}; {index.name} ({chunk_count:,} chunks), "
            f"{args.data.name}'s {len(queries)} queries, k={args.k}, "
            f"at most {args.requests} answers or {args.seconds:.0f} s per run, clients in the benchmark's process\n\n"
            + table(head, rows) + "\n\n" + "".join(f"- {n}\n" for n in notes))
    print(text)
    out = ROOT / "benchmarks" / "results" / f"serve_load-{args.mode}-k{args.k}{'-' + index.name if args.index else ''}.md"
    out.write_text(text)


if __name__ == "__main__":
    main()
