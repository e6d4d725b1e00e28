"""The one exception type a user should ever see: the CLI prints its message on one line and exits 1."""
from __future__ import annotations

from typing import Callable


class LocalcrError(Exception):
    """A problem with the user's input, files or models, phrased as what to do about it."""


class ArgumentError(LocalcrError):
    """A bad argument to the Python API. The message is made of text and (parameter, value) pairs: str()
    spells a pair the Python way (`chunk_tokens=190`), and a front end with its own names for the
    parameters (the CLI's options) spells them its way with `spell`."""

    def __init__(self, *parts: str | tuple[str, object]):
        self.parts = parts
        super().__init__(self.spell(lambda name, value: f"{name}={value!r}"))

    @property
    def names(self) -> set[str]:
        """The parameters the message is about."""
        return {part[0] for part in self.parts if not isinstance(part, str)}

    def spell(self, argument: Callable[[str, object], str]) -> str:
        return "".join(part if isinstance(part, str) else argument(*part) for part in self.parts)


class BackendError(LocalcrError):
    """An index store that cannot be used as it is: a Milvus server unreachable or refusing the token, a collection
    that localcr did not write (or wrote with another schema), the client library missing. The message names the
    location and what to do."""
