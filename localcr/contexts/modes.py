"""What a build situates each chunk with, by cost (docs/indexing-and-contexts.md, "Contexts: tiers by cost"): the
names `localcr index --contexts` offers, apart from the build itself (localcr.pipeline) so that the command line
knows them without importing it."""

# The document's structure (free); a card, one LLM sentence per document, joined to it ("cards" for every document;
# "auto" only for long prose that names no subject: no title, no heading); a context the LLM writes for every chunk
# ("llm"), with cards too ("cards+llm"); nothing.
CONTEXT_MODES = ("auto", "structural", "cards", "llm", "cards+llm", "none")
DEFAULT_CONTEXTS = "auto"  # docs/indexing-and-contexts.md, "Contexts: tiers by cost": as structural on code and prose
CARD_MODES = ("auto", "cards", "cards+llm")
LLM_MODES = ("cards", "llm", "cards+llm")  # the modes that need the LLM whatever the documents ("auto" may not)
