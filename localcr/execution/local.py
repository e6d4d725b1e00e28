"""The expensive work in this process: the code path localcr has always had."""
from __future__ import annotations

from localcr.execution.executor import Executor


class LocalExecutor(Executor):
    name = "local"

    def write_contexts(self, docs, chunks_by_doc, spec, *, composition, progress, log):
        from localcr.contexts import write_llm_contexts

        return write_llm_contexts(docs, chunks_by_doc, spec, progress=progress, composition=composition, log=log)

    def embed(self, model, texts, progress=None):
        return model.embed(texts, progress=progress)
