"""The expensive work in this process: the code path localcr has always had."""
from __future__ import annotations

from localcr.execution.executor import Executor


class LocalExecutor(Executor):
    """Runs a build's work here; the LLM, once loaded, serves every document of the build (a build writes one
    document's contexts a call, so each is committed when done, and loaded the 1.5B again for each: 7-9 s a
    document on AVX2, four times in `localcr demo`)."""

    name = "local"

    def __init__(self) -> None:
        self._runners: dict = {}  # repr(spec) -> LlamaRunner, loaded at the first document that needs it

    def write_contexts(self, docs, chunks_by_doc, spec, *, composition, progress, log):
        from localcr.contexts import write_llm_contexts

        return write_llm_contexts(docs, chunks_by_doc, spec, progress=progress, composition=composition, log=log,
                                  load_runner=lambda: self._runner(spec))

    def _runner(self, spec):
        from localcr.contexts.run import DEFAULT_PARALLEL
        from localcr.llm import LlamaRunner

        key = repr(spec)
        if key not in self._runners:
            self._runners[key] = LlamaRunner(spec, parallel=DEFAULT_PARALLEL)
        return self._runners[key]

    def embed(self, model, texts, progress=None):
        return model.embed(texts, progress=progress)

    def close(self) -> None:
        for runner in self._runners.values():
            runner.close()
        self._runners.clear()
