"""The MCP surface: `Service` as three tools for agents, over the Model Context Protocol on stdio.

    search        a query plus every SearchRequest option: hits with path, position, context and text
    get_document  a document's chunks in order, each with its context
    get_chunk     a chunk with its neighbours before and after, from its own document
    ask           a question answered by the server's local LLM from the best hits, citing them (for clients
                  without a model of their own; seconds a question on a CPU)

Each result carries the same JSON as the HTTP API (structured content) and a plain-text rendering of it for a
model to read. Requests are validated by SearchRequest and Service, so the limits live there; a bad request,
an unknown id or any LocalcrError comes back as a tool error with one line, and the server goes on answering.
stdout carries only the protocol: the SDK points it at stderr while serving, and logs go to stderr.
"""
from __future__ import annotations

import logging
import sys
from typing import Annotated

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp.types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field, ValidationError

import localcr
from localcr.errors import LocalcrError
from localcr.serve.service import MAX_WINDOW, AskRequest, SearchRequest, Service

log = logging.getLogger("localcr.serve")

READ_ONLY = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)


def create_server(service: Service) -> MCPServer:
    """The MCP server for an index: its tools answered by `service`."""
    stats = service.stats()

    def search(query: str, k: int | None = None, mode: str | None = None, fusion: str | None = None,
               alpha: float | None = None, rerank: bool | None = None, reranker: str | None = None,
               candidates: int | None = None, window: int | None = None, glob: list[str] | None = None,
               kind: str | None = None, lang: str | None = None) -> CallToolResult:
        """Search the index for passages about `query` (natural language or keywords, any wording).

        Hybrid search (meaning and exact words) over chunks of the indexed files, best first. Each hit has the
        file's path, the chunk's position in it, a context situating the chunk in its document, the chunk's
        text and its chunk_id (for get_chunk; its doc_id for get_document). Only `query` is needed: omitted
        options take their defaults. Use `window` to get the neighbouring chunks of each hit at once, and `glob`,
        `kind` or `lang` to search only some documents (e.g. glob ["docs/**"], kind "pdf")."""
        options = {name: value for name, value in locals().items() if name in SearchRequest.model_fields and value is not None}
        result = service.search(SearchRequest(**options))
        hits = result["hits"]
        lines = [f"{len(hits)} hit{'' if len(hits) == 1 else 's'} for {result['query']!r}" + (":" if hits else ".")]
        lines += [result["unmatched"]] if "unmatched" in result else []
        lines += [result["note"]] if "note" in result else []
        lines += [_render(hit, f"{n}. ") for n, hit in enumerate(hits, start=1)]
        return _result("\n\n".join(lines), result)

    def get_document(doc_id: str) -> CallToolResult:
        """A whole document from the index: its path and all its chunks in order, each with its context.

        `doc_id` is the doc_id of a search hit."""
        result = service.document(doc_id)
        chunks = [_render({**chunk, "path": result["path"]}) for chunk in result["chunks"]]
        return _result("\n\n".join([f"{result['path']} ({len(chunks)} chunks):", *chunks]), result)

    def get_chunk(chunk_id: str, window: Annotated[int, Field(
            description=f"Neighbouring chunks to add on each side, 0 to {MAX_WINDOW}.")] = 1) -> CallToolResult:
        """One chunk with up to `window` neighbouring chunks before and after it, from its own document.

        `chunk_id` is the chunk_id of a search hit: read around a hit without fetching the whole document."""
        result = service.chunk(chunk_id, window)
        path = result["path"]
        parts = [_render({**chunk, "path": path}, "before: ") for chunk in result["before"]]
        parts.append(_render({**result["chunk"], "path": path}, "chunk: "))
        parts += [_render({**chunk, "path": path}, "after: ") for chunk in result["after"]]
        return _result("\n\n".join(parts), result)

    def ask(question: str, k: int | None = None, llm: str | None = None, fresh: bool | None = None,
            compute: bool | None = None, mode: str | None = None, fusion: str | None = None, alpha: float | None = None, rerank: bool | None = None,
            reranker: str | None = None, candidates: int | None = None, window: int | None = None,
            glob: list[str] | None = None, kind: str | None = None, lang: str | None = None) -> CallToolResult:
        """Answer `question` from the indexed documents with the server's local LLM, citing its sources.

        The k best hits (found as `search` finds them) are read as numbered sources [1]..[k]; the answer cites
        them, citations to no source are dropped, and a sentence whose figures, names or quotes no cited source
        holds is listed as unsupported. When the sources do not hold the answer it says so. Where they hold a
        table that answers by arithmetic, the answer is computed from its cells (`compute`: false to never). Slow on a CPU
        (seconds); a client with its own model can `search` and read the hits itself instead."""
        options = {name: value for name, value in locals().items() if name in AskRequest.model_fields and value is not None}
        events = list(service.ask(AskRequest(**options)))
        answer = events[-1]  # the answer, or an error
        if answer["event"] == "error":
            raise LocalcrError(answer["error"])
        lines = [answer["answer"]] + [event["text"] for event in events if event["event"] == "note"]
        lines += [f"unsupported: {sentence}" for sentence in answer["unsupported"]]
        lines += ["", "Nearest sources:" if answer["refused"] else "Sources:"]
        for source in answer["sources"]:
            cited = "" if answer["refused"] or source["number"] in answer["citations"] else " (not cited)"
            lines.append(f"[{source['number']}] {source['path']} (chunk_id {source['chunk_id']}){cited}"
                         + (f"\n    \u201c{source['support']}\u201d" if source["support"] else ""))
        return _result("\n".join(lines), {key: value for key, value in answer.items() if key != "event"})

    tools = [Tool.from_function(fn, annotations=READ_ONLY) for fn in (search, get_document, get_chunk, ask)]
    # The search tool publishes SearchRequest's own schema: its defaults, limits and choices, which it enforces
    # (all but highlight: character spans are for the search page, not for a model reading text).
    tools[0].parameters = SearchRequest.model_json_schema()
    del tools[0].parameters["properties"]["highlight"]
    tools[3].parameters = AskRequest.model_json_schema()
    return _Server(
        "localcr", version=localcr.__version__, tools=tools,
        instructions=f"Search a local index of {', '.join(stats['sources'])} ({stats['documents']} documents): "
        "files split into chunks, each with a context that situates it in its document. Start with `search`; "
        "read around a hit with `get_chunk` (its chunk_id) or the whole file with `get_document` (its doc_id). "
        "`ask` has the server's local LLM answer a question from the hits, citing them (slow on a CPU).")


class _Server(MCPServer):
    async def call_tool(self, name, arguments, context=None):
        """Refused arguments (by the SDK or by SearchRequest) and LocalcrErrors (an unknown id, a window over
        the limit, ...) as tool errors in one line; anything else stays what the SDK makes of it: a crash,
        logged, reported to the client without its details."""
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                message = "; ".join(f"{'.'.join(map(str, error['loc'])) or 'arguments'}: {error['msg']}"
                                    for error in cause.errors())
            elif isinstance(cause, LocalcrError):
                message = " ".join(str(cause).split())
            else:
                raise
            raise ToolError(f"Error executing tool {name}: {message}") from cause


def serve_stdio(service: Service) -> None:
    """Answer one MCP client on stdin/stdout until it closes the connection; log lines go to stderr."""
    logging.basicConfig(level=logging.INFO, format="localcr mcp: %(message)s", stream=sys.stderr)
    server = create_server(service)
    log.info("serving %s (%d chunks) over MCP on stdio", service.directory, service.index.store.live_chunks)
    server.run("stdio")


def _result(text: str, data: dict) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def _render(chunk: dict, label: str = "") -> str:
    """A chunk (or a hit) as text: where it is, its context, its text (a hit's window when it has one)."""
    page = f", page {chunk['page']}" if chunk.get("page") else ""
    return (f"{label}{chunk['path']} (position {chunk['position']}{page}, chunk_id {chunk['chunk_id']}"
            + (f", doc_id {chunk['doc_id']}" if "doc_id" in chunk else "") + ")\n"
            f"context: {chunk['context']}\n{chunk.get('window_text') or chunk['text']}")
