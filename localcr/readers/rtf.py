"""RTF: the text of a Rich Text Format file, by striprtf (control words and groups such as fonts, colours,
pictures and fields' instructions dropped). An RTF file is 7-bit text that names its own code page (`\\ansicpg`);
its `\\'xx` escapes are decoded in that code page, and `\\u` escapes as Unicode."""
from __future__ import annotations

import re

from localcr.readers import Read, ReaderError

_CODE_PAGE = re.compile(rb"\\ansicpg(\d+)")


def read_rtf(data: bytes) -> Read:
    from striprtf.striprtf import rtf_to_text

    if not data.lstrip().startswith(b"{\\rtf"):
        raise ReaderError("not a readable RTF file (it does not begin with {\\rtf)")
    found = _CODE_PAGE.search(data[:4096])
    encoding = f"cp{int(found.group(1))}" if found else "cp1252"
    try:
        text = rtf_to_text(data.decode("latin-1"), encoding=encoding, errors="replace")
    except LookupError:  # a code page Python does not know
        text = rtf_to_text(data.decode("latin-1"), errors="replace")
    return Read(text.replace("\r\n", "\n").strip() + "\n", "")
