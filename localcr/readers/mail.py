"""Mail: a message (`.eml`) or a mailbox of them (`.mbox`), each message a document titled by its subject.

Python's own `email` package parses the message (MIME parts, encoded headers and bodies) and `mailbox` splits
a mailbox, so nothing here is a hand-written parser. The sender, recipients and date go into the text and into
every chunk's context (Read.about); a reply's quoted chain (from "On ... wrote:" or an "Original Message" line
on) becomes a section of its own, "Quoted: ...", so a hit in it says it is quoted. Each attachment is read by
its own kind's reader, as a document of its own (`archive.mbox#12/contract.pdf`); one that cannot be read is a
warning. Nothing in a message is followed or fetched: an HTML body's links and remote images stay text.
"""
from __future__ import annotations

import mimetypes
import re
import tempfile
from pathlib import Path

from localcr.readers import Part, Read, ReaderError, kind_of, reader_for

_QUOTE_START = re.compile(
    r"^(?:On\s.{1,200}?\swrote:|Am\s.{1,200}?\sschrieb\s.{0,100}?:|El\s.{1,200}?\sescribió:"
    r"|-{2,}\s*(?:Original Message|Forwarded message|Ursprüngliche Nachricht|Mensaje original)\s*-{2,})\s*$",
    re.MULTILINE | re.IGNORECASE | re.DOTALL)
_ABOUT = {"From": "from", "To": "to", "Cc": "cc", "Date": "sent"}  # the headers shown, as a chunk's context says them
# What may stand before a mailbox's first `From ` line, as Python's `mailbox` allows (git's sample.mbox starts with
# blank lines): a UTF-8 BOM and lines of white space.
_BEFORE_FIRST_MESSAGE = re.compile(rb"\A(?:\xef\xbb\xbf)?(?:[ \t]*\r?\n)*")
MAX_ATTACHMENT_DEPTH = 3  # a message attached to a message attached to ...: read this deep, no deeper


def read_message(data: bytes) -> Read:
    return _message(_parse(data), depth=0)


def read_mbox(data: bytes) -> Read:
    """Every message of a mailbox, as parts named by their number (1 for the first)."""
    import mailbox

    data = _BEFORE_FIRST_MESSAGE.sub(b"", data, count=1)
    if not data.startswith(b"From "):
        raise ReaderError("not a readable mailbox (an mbox file starts with a 'From ' line)")
    with tempfile.NamedTemporaryFile(suffix=".mbox") as copy:  # mailbox reads a file by its path
        copy.write(data)
        copy.flush()
        messages = [m.as_bytes() for m in mailbox.mbox(copy.name, create=False)]
    parts, warnings = [], []
    for n, message in enumerate(messages, 1):
        try:
            parts.append(Part(str(n), "mail", _message(_parse(message), depth=0)))
        except ReaderError as exc:
            warnings.append(f"message {n}: {exc}, skipped")
    return Read("", "", warnings, parts=parts)


def _parse(data: bytes):
    from email import policy
    from email.parser import BytesParser

    message = BytesParser(policy=policy.default).parsebytes(data)
    if not any(message.get(header) for header in ("From", "Subject", "Date", "To")):
        raise ReaderError("not a mail message (no From, To, Subject or Date header)")
    return message


def _message(message, depth: int) -> Read:
    """A message's text: its subject as the heading, its headers, its body with the quoted chain as a section;
    its attachments as parts."""
    subject = _header(message, "Subject")
    headers = {name: value for name in _ABOUT if (value := _header(message, name))}
    warnings: list[str] = []
    blocks = [f"# {subject}" if subject else "", "\n".join(f"{name}: {value}" for name, value in headers.items()),
              _with_quoted_section(_body(message))]
    parts = _attachments(message, depth, warnings)
    about = "Mail " + ", ".join(f"{_ABOUT[name]} {value}" for name, value in headers.items()) + "." if headers else ""
    return Read("\n\n".join(b for b in blocks if b) + "\n", "", warnings, title=subject, about=about, parts=parts)


def _header(message, name: str) -> str:
    try:
        value = message.get(name)
    except (ValueError, IndexError):  # a header the policy cannot parse: its raw text will do
        value = message.get_all(name, failobj=[""])[0]
    return " ".join(str(value or "").split())


def _body(message) -> str:
    """The plain-text body, else the HTML one as text, else a text part of another subtype that is no attachment
    (`text/asciidoc`, `text/x-diff`: read as plain text, as RFC 2046 says of text subtypes a reader does not know;
    git's howto mails are written so)."""
    from localcr.readers.html import html_to_text

    body = message.get_body(preferencelist=("plain", "html")) or next(
        (part for part in message.walk() if part.get_content_maintype() == "text" and not part.is_multipart()
         and part.get_content_disposition() != "attachment"), None)
    if body is None:
        return ""
    text = _text_of(body)
    return html_to_text(text) if body.get_content_type() == "text/html" else text.replace("\r\n", "\n").strip()


def _text_of(part) -> str:
    try:
        return part.get_content()
    except (LookupError, ValueError):  # an unknown or wrong charset: the bytes as best they decode
        return (part.get_payload(decode=True) or b"").decode("utf-8", errors="replace")


def _with_quoted_section(body: str) -> str:
    """The body with its quoted reply chain, from the first attribution line on, under a heading of its own."""
    found = _QUOTE_START.search(body)
    if found is None:
        return body
    attribution = " ".join(found.group(0).strip(" -").split())
    return f"{body[:found.start()].rstrip()}\n\n## Quoted: {attribution}\n\n{body[found.end():].strip()}".strip()


def _attachments(message, depth: int, warnings: list[str]) -> list[Part]:
    """Each attachment read by its own kind's reader; inline images (a signature's logo) are left out."""
    from localcr.readers.workers import read_with

    parts, names = [], set()
    for n, attachment in enumerate(message.iter_attachments(), 1):
        name = _attachment_name(attachment, n, names)
        kind = kind_of(Path(name))
        if kind == "image" and attachment.get_content_disposition() != "attachment":
            continue
        if kind is None or depth >= MAX_ATTACHMENT_DEPTH:
            warnings.append(f"attachment {name}: {'unsupported file type' if kind is None else 'nested too deep'}, skipped")
            continue
        try:
            if kind == "mail":
                read = _message(_parse(_payload(attachment)), depth + 1)
            else:
                read = read_with(reader_for(kind), _payload(attachment))
        except ReaderError as exc:
            warnings.append(f"attachment {name}: {exc}, skipped")
            continue
        parts.append(Part(name, kind, read))
    return parts


def _attachment_name(attachment, n: int, taken: set[str]) -> str:
    """The attachment's file name as a name within the message (no folders, no `#`), unique; a nameless one is
    `attachment-<n>` with the extension of its content type."""
    given = (attachment.get_filename() or "").replace("\\", "/").rsplit("/", 1)[-1].replace("#", "_").strip()
    name = given or f"attachment-{n}{mimetypes.guess_extension(attachment.get_content_type()) or ''}"
    while name in taken:
        name = f"{n}-{name}"
    taken.add(name)
    return name


def _payload(attachment) -> bytes:
    """An attachment's bytes, decoded from its transfer encoding; an attached message's as it was sent."""
    if attachment.get_content_type() == "message/rfc822":
        inner = attachment.get_payload()
        return inner[0].as_bytes() if isinstance(inner, list) and inner else b""
    return attachment.get_payload(decode=True) or b""
