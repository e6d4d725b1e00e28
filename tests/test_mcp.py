"""`localcr mcp`: the real server in its own process, driven over stdio by the MCP SDK's own client."""
from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

from conftest import llm_work_env
from shared_states import STATES_VARIABLE, localcr_command
from localcr.filters import KINDS
from localcr.serve.service import MAX_K, AskRequest, SearchRequest

pytestmark = [pytest.mark.model, pytest.mark.anyio]

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def anyio_backend():
    return "asyncio"


@pytest.fixture(scope="module")
def stray() -> list:
    """What the client could not read as protocol on the server's stdout (anything printed there)."""
    return []


@pytest.fixture(scope="module")
async def client(indexed, stray):
    """One server for the module (it loads the embedder once), spoken to as MCP clients do today (initialize)."""
    async def on_message(message):
        if isinstance(message, Exception):
            stray.append(message)

    command = localcr_command("mcp", "--index", str(indexed.index))  # sharing the run's instruction states
    server = StdioServerParameters(command=command[0], args=command[1:],
                                   env={"LOCALCR_CACHE_DIR": str(indexed.cache), "PYTHONPATH": str(ROOT),
                                        STATES_VARIABLE: os.environ[STATES_VARIABLE], **llm_work_env()}, cwd=ROOT)
    # a guard against a hang: `ask` runs the 1.5B, 4 times slower on an AVX2 pair than on an AVX-512 one
    async with Client(server, mode="legacy", message_handler=on_message, read_timeout_seconds=600) as connected:
        yield connected


async def call(client, tool: str, **arguments) -> dict:
    """A tool's structured result, after checking it succeeded and that its text names what it carries."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    text = result.content[0].text
    for chunk in _chunks(result.structured_content):
        assert chunk["chunk_id"] in text and chunk["context"] in text
    return result.structured_content


def _chunks(data: dict) -> list[dict]:
    """The chunks a result carries: a search's hits, a document's chunks, a chunk and its neighbours."""
    if "hits" in data or "chunks" in data:
        return data.get("hits", data.get("chunks"))
    return [*data["before"], data["chunk"], *data["after"]]


async def test_four_tools_with_their_schemas_and_instructions(client):
    assert "orbit" in client.instructions and "search" in client.instructions
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert set(tools) == {"search", "get_document", "get_chunk", "ask"}
    assert all(tool.description and tool.annotations.read_only_hint for tool in tools.values())
    search = tools["search"].input_schema
    assert set(search["properties"]) == set(SearchRequest.model_fields) - {"highlight"} and search["required"] == ["query"]
    assert search["properties"]["k"]["maximum"] == MAX_K
    assert tools["get_document"].input_schema["required"] == ["doc_id"]
    assert set(tools["get_chunk"].input_schema["properties"]) == {"chunk_id", "window"}
    assert set(tools["ask"].input_schema["properties"]) == set(AskRequest.model_fields)
    assert tools["ask"].input_schema["required"] == ["question"] and "ask" in client.instructions


async def test_ask_answers_with_the_servers_llm_citing_its_sources(client):
    """For clients without a model of their own: the bundled 1.5B answers, and the text names its sources."""
    result = await client.call_tool("ask", {"question": "How many times is a failed job retried?", "k": 3})
    assert not result.is_error, result.content
    answer, text = result.structured_content, result.content[0].text
    assert not answer["refused"] and answer["citations"], answer
    cited = [s for s in answer["sources"] if s["number"] in answer["citations"]]
    assert all(s["path"].endswith("guide.md") for s in cited)
    assert text.startswith(answer["answer"]) and all(s["chunk_id"] in text for s in answer["sources"])
    empty = await client.call_tool("ask", {"question": ""})
    assert empty.is_error and "question" in empty.content[0].text


async def test_search_hits_carry_path_position_context_and_text(client):
    result = await call(client, "search", query="retry backoff", k=3)
    hits = result["hits"]
    assert len(hits) == 3 and all({"path", "position", "context", "text", "chunk_id", "doc_id"} <= set(hit) for hit in hits)
    top = hits[0]
    assert top["path"].endswith("guide.md") and "backoff" in top["text"] and "Retries" in top["context"]
    lexical = await call(client, "search", query="quota alerts", k=1, mode="lexical", window=1)
    assert lexical["hits"][0]["path"].endswith("release.md") and lexical["hits"][0]["window_text"]


async def test_search_only_where_the_agent_points(client):
    result = await call(client, "search", query="quota alerts release", k=10, glob=["docs/**", "!release.md"], kind="markdown")
    assert result["hits"] and {hit["doc_id"] for hit in result["hits"]} == {"orbit/docs/guide.md"}
    nothing = await client.call_tool("search", {"query": "quota", "glob": ["nowhere/*"]})
    assert not nothing.is_error and "passes --glob 'nowhere/*'" in nothing.content[0].text


async def test_get_chunk_brings_neighbours_from_the_same_document(client):
    hit = (await call(client, "search", query="retry backoff", k=1))["hits"][0]
    result = await call(client, "get_chunk", chunk_id=hit["chunk_id"], window=1)
    assert result["chunk"]["chunk_id"] == hit["chunk_id"] and result["doc_id"] == hit["doc_id"]
    assert [c["position"] for c in result["before"] + result["after"]] == [hit["position"] - 1, hit["position"] + 1]
    assert all(c["chunk_id"].startswith(hit["doc_id"] + "#") for c in result["before"] + result["after"])


async def test_get_document_gives_every_chunk_in_order(client):
    hit = (await call(client, "search", query="retry backoff", k=1))["hits"][0]
    document = await call(client, "get_document", doc_id=hit["doc_id"])
    assert document["path"] == hit["path"]
    assert [c["position"] for c in document["chunks"]] == list(range(len(document["chunks"])))
    assert all(c["context"] for c in document["chunks"])
    assert "midnight UTC" in "".join(c["text"] for c in document["chunks"])


@pytest.mark.parametrize(("tool", "arguments", "message"), [
    ("get_chunk", {"chunk_id": "orbit/docs/nowhere.md#0"}, "no chunk 'orbit/docs/nowhere.md#0' in this index"),
    ("get_document", {"doc_id": "nowhere"}, "no document 'nowhere' in this index"),
    ("search", {"query": "backoff", "k": MAX_K + 1}, f"k: Input should be less than or equal to {MAX_K}"),
    ("search", {"query": "backoff", "mode": "fuzzy"}, "mode: Input should be 'hybrid', 'dense' or 'lexical'"),
    ("get_chunk", {"window": 1}, "chunk_id: Field required"),
    ("search", {"query": "backoff", "kind": "movie"}, "kind='movie': unknown document kind; choose one of "
     f"{', '.join(KINDS)} (or code:SUFFIX, e.g. code:py)"),
])
async def test_errors_are_one_line_tool_errors_and_the_server_goes_on(client, tool, arguments, message):
    result = await client.call_tool(tool, arguments)
    assert result.is_error
    assert result.content[0].text == f"Error executing tool {tool}: {message}"
    assert (await call(client, "search", query="quota", k=1))["hits"]


async def test_stdout_carries_only_the_protocol(client, stray):
    await call(client, "search", query="scheduler", k=2)
    assert stray == []
