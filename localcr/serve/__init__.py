"""Serving an index to other programs: one loaded index behind three surfaces.

    service.py  `Service`: the index and its models loaded once, the requests they answer (search, a
                document, a chunk with its neighbours, stats, health), the limits on them, and the switch to a
                rebuilt index's new generation without a restart
    http.py     the JSON API (FastAPI on uvicorn, OpenAPI at /openapi.json) and the search page at /
    mcp.py      the same tools for agents, over the Model Context Protocol on stdio
    page/       the search page: static HTML, CSS and JavaScript shipped in the package, no build step, no CDN
"""
