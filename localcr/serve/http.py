"""The HTTP surface: a JSON API over `Service` (FastAPI on uvicorn) and the search page.

    GET  /api/health                 is the index loaded, which generation, how many chunks
    GET  /api/stats                  what `localcr stats --json` prints
    POST /api/search                 a SearchRequest as JSON (GET /api/search takes the same fields as parameters)
    POST /api/ask                    an AskRequest as JSON: the answer streamed as JSON lines (Service.ask)
    GET  /api/documents/{doc_id}     a document's chunks and contexts
    GET  /api/chunks/{chunk_id}      a chunk and its neighbours (?window=N)
    GET  /openapi.json               the OpenAPI description;  GET /  the search page

Safety: bound to a loopback address the server answers only requests addressed to a loopback host name (a web
page cannot reach it by DNS rebinding); bound to any other address it requires a token, checked on every API
request. Request bodies, queries, k, candidates and windows are capped (service.py); errors are JSON with a
one-line "error" (but for the two the framework's own guards send as plain text: 413 for a body over the cap,
400 for a host name that is not loopback). The interactive docs pages are off: they load their scripts from a CDN.
"""

import hmac
import ipaddress
import json
from pathlib import Path
from typing import Annotated

from fastapi import APIRouter, Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, StreamingResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import iterate_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware.trustedhost import TrustedHostMiddleware

import localcr
from localcr.errors import LocalcrError
from localcr.serve.service import MAX_BODY_BYTES, MAX_WINDOW, AskRequest, NotFound, SearchRequest, Service

PAGE = Path(__file__).parent / "page"
LOOPBACK_NAMES = ["localhost", "127.0.0.1", "::1", "[::1]"]


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_binding(host: str, token: str | None) -> None:
    if not is_loopback(host) and not token:
        raise LocalcrError(f"serving on {host} opens the index to the network: give a token (--token or the "
                           "LOCALCR_TOKEN environment variable) that every request must carry, or bind to 127.0.0.1")


def create_app(service: Service, *, token: str | None = None, host: str = "127.0.0.1") -> FastAPI:
    """The application for an index. `token`: required on every API request as `Authorization: Bearer TOKEN`
    (mandatory when `host` is not a loopback address)."""
    check_binding(host, token)
    app = FastAPI(title="localcr", version=localcr.__version__, docs_url=None, redoc_url=None,
                  max_body_size=MAX_BODY_BYTES, description="Search a localcr index: hybrid dense + BM25 over chunks "
                  "and their situating contexts, optionally reranked.")
    if is_loopback(host):
        app.add_middleware(TrustedHostMiddleware, allowed_hosts=LOOPBACK_NAMES + ([host] if host not in LOOPBACK_NAMES else []))
    app.state.service = service
    app.include_router(_api(token), prefix="/api")

    @app.get("/", include_in_schema=False)
    def page():
        return FileResponse(PAGE / "index.html")

    app.mount("/page", StaticFiles(directory=PAGE), name="page")
    _error_handlers(app)
    return app


def _api(token: str | None) -> APIRouter:
    bearer = HTTPBearer(auto_error=False)

    def authorised(credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]) -> None:
        if token is None:
            return
        given = credentials.credentials if credentials else ""
        if not hmac.compare_digest(given.encode(), token.encode()):
            raise HTTPException(401, "this server needs its token: send `Authorization: Bearer TOKEN`")

    router = APIRouter(dependencies=[Depends(authorised)])

    def service(request: Request) -> Service:
        return request.app.state.service

    Served = Annotated[Service, Depends(service)]

    @router.get("/health")
    def health(svc: Served) -> dict:
        return svc.health()

    @router.get("/stats")
    def stats(svc: Served) -> dict:
        return svc.stats()

    @router.post("/search")
    def search(body: SearchRequest, svc: Served) -> dict:
        return svc.search(body)

    @router.get("/search")
    def search_get(params: Annotated[SearchRequest, Query()], svc: Served) -> dict:
        return svc.search(params)

    @router.post("/ask", response_class=StreamingResponse, responses={200: {
        "content": {"application/x-ndjson": {}},
        "description": "One JSON object a line: the sources, the answer's text as it is written, then the answer "
                       "with its checked citations, unsupported sentences and timings."}})
    def ask(body: AskRequest, svc: Served) -> StreamingResponse:
        return StreamingResponse(_json_lines(svc.ask(body)), media_type="application/x-ndjson",
                                 headers={"Cache-Control": "no-store"})

    @router.get("/documents/{doc_id:path}")
    def document(doc_id: str, svc: Served) -> dict:
        return svc.document(doc_id)

    @router.get("/chunks/{chunk_id:path}")
    def chunk(chunk_id: str, svc: Served, window: Annotated[int, Query(ge=0, le=MAX_WINDOW)] = 1) -> dict:
        return svc.chunk(chunk_id, window)

    return router


async def _json_lines(events):
    """Each event as a JSON line, the next one read on a worker thread (the LLM writes it there). Closed however the
    response ends: a client that goes away mid-answer stops the generation and frees the LLM for the next question
    (Starlette cancels a streaming response on disconnect but does not close its iterator)."""
    try:
        async for event in iterate_in_threadpool(events):
            yield json.dumps(event, ensure_ascii=False) + "\n"
    finally:
        events.close()


def _error_handlers(app: FastAPI) -> None:
    """Every error as {"error": one line} (plus "detail" for validation errors), with the fitting status."""

    @app.exception_handler(RequestValidationError)
    def invalid(request: Request, exc: RequestValidationError):
        return JSONResponse({"error": validation_message(exc.errors()), "detail": _jsonable(exc.errors())}, status_code=422)

    @app.exception_handler(NotFound)
    def not_found(request: Request, exc: NotFound):
        return JSONResponse({"error": str(exc)}, status_code=404)

    @app.exception_handler(LocalcrError)
    def bad_request(request: Request, exc: LocalcrError):
        return JSONResponse({"error": str(exc)}, status_code=400)

    @app.exception_handler(HTTPException)
    def http_error(request: Request, exc: HTTPException):
        headers = {"WWW-Authenticate": "Bearer"} if exc.status_code == 401 else None
        return JSONResponse({"error": str(exc.detail)}, status_code=exc.status_code, headers=headers)


def validation_message(errors) -> str:
    """`body.k: Input should be less than or equal to 100; body.query: Field required`; malformed JSON as
    `body: malformed JSON (Expecting ',' delimiter at character 14)`."""
    parts = []
    for error in errors:
        where = ".".join(str(part) for part in error["loc"] if not isinstance(part, int) or error["type"] != "json_invalid")
        if error["type"] == "json_invalid":
            parts.append(f"{where}: malformed JSON ({error.get('ctx', {}).get('error', 'unreadable')} at character {error['loc'][-1]})")
        else:
            parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)


def _jsonable(errors) -> list[dict]:
    return [{key: value for key, value in error.items() if key in ("type", "loc", "msg")} for error in errors]


def serve(service: Service, *, host: str, port: int, token: str | None) -> None:
    """Run the server until interrupted (one process; requests are answered on its thread pool)."""
    import uvicorn

    uvicorn.run(create_app(service, token=token, host=host), host=host, port=port, log_level="warning",
                access_log=False, server_header=False)
