"""What a run of LLM contexts did and what it cost: chunks served from the cache or generated, fallbacks and
their reasons, prompt tokens evaluated and reused, and time. The driver (run) counts it, an executor sums
its workers' (add_work), and rates learns this machine's speeds from it."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ContextStats:
    documents: int = 0
    chunks: int = 0
    cached: int = 0  # served from diskcache without running the model
    generated: int = 0
    fallbacks: int = 0  # guard rejections (or chunks too long for n_ctx): the structural context is kept
    prefix_tokens_evaluated: int = 0  # document-prefix tokens the model evaluated
    prefix_tokens_reused: int = 0  # prompt tokens served from the KV cache instead of evaluated
    chunk_tokens: int = 0  # per-chunk prompt tokens evaluated (the request: chunk text or marker + instruction)
    generated_tokens: int = 0
    windowed_documents: int = 0
    seconds: float = 0.0
    prompt_seconds: float = 0.0  # spent evaluating prompt tokens
    generate_seconds: float = 0.0  # spent generating
    fallback_reasons: dict[str, int] = field(default_factory=dict)
    prefixes: int = 0  # distinct document prefixes (whole documents or windows) prompts were built on

    @property
    def prompt_tokens(self) -> int:
        return self.prefix_tokens_evaluated + self.prefix_tokens_reused + self.chunk_tokens

    @property
    def cache_share(self) -> float:
        """Share of all prompt tokens that were served from the KV cache (0 when nothing was generated)."""
        total = self.prompt_tokens
        return self.prefix_tokens_reused / total if total else 0.0

    def summary(self) -> str:
        rate = self.generated / self.seconds if self.seconds else 0.0
        gen_rate = self.generated_tokens / self.generate_seconds if self.generate_seconds else 0.0
        prompt_rate = (self.prefix_tokens_evaluated + self.chunk_tokens) / self.prompt_seconds if self.prompt_seconds else 0.0
        reasons = ", ".join(f"{k} {v}" for k, v in sorted(self.fallback_reasons.items())) or "none"
        return "\n".join([
            f"contexts: {self.chunks} chunks in {self.documents} documents ({self.windowed_documents} windowed to fit n_ctx)",
            f"  from cache {self.cached}, generated {self.generated}, fallbacks {self.fallbacks} ({reasons})",
            f"  prompt tokens: {self.prefix_tokens_evaluated} document-prefix evaluated, {self.prefix_tokens_reused} served from KV cache, "
            f"{self.chunk_tokens} chunk tokens evaluated; cache share {self.cache_share:.1%}",
            f"  generated tokens: {self.generated_tokens} ({gen_rate:.1f} tok/s); prompt evaluation {prompt_rate:.0f} tok/s",
            f"  time: {self.seconds:.1f} s ({rate:.2f} chunks/s generated)",
        ])

    def count_fallback(self, reason: str) -> None:
        self.fallbacks += 1
        self.fallback_reasons[reason] = self.fallback_reasons.get(reason, 0) + 1
