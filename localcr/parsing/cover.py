"""What a cover page or a letterhead prints about its document: the registrant, the form, the period.

A filing's cover names its company once ("3M COMPANY" over "(Exact name of registrant as specified in its
charter)"), its form ("FORM 8-K") and its period or date of report; no page after it says them again. A document
long enough for a card (localcr.contexts.cards) has them from the LLM; a shorter one, or one whose card fell
back, has them from here, without a model, wherever the cover prints them. The same for a letter's letterhead.
"""
from __future__ import annotations

import re

# What a document's opening says it is, where it says so in the words of a form: a filing's cover page, an
# earnings release's headline. (pattern, the kind to write, words of a kind that agrees with it)
FORM_KINDS = (
    (re.compile(r"\bFORM\s+10-K\b|\bANNUAL REPORT PURSUANT TO SECTION\b", re.IGNORECASE), "Annual report (Form 10-K)",
     ("10-k", "annual")),
    (re.compile(r"\bFORM\s+10-Q\b|\bQUARTERLY REPORT PURSUANT TO SECTION\b", re.IGNORECASE), "Quarterly report (Form 10-Q)",
     ("10-q", "quarterly")),
    (re.compile(r"\bFORM\s+8-K\b|\bCURRENT REPORT PURSUANT TO SECTION\b", re.IGNORECASE), "Current report (Form 8-K)",
     ("8-k", "current")),
    (re.compile(r"\b(?:announces|reports|reported|posts|delivers)\b[^\n.]{0,80}\b(?:results|earnings)\b|"
                r"\b(?:first|second|third|fourth)[- ]quarter\b[^\n.]{0,40}\bresults\b|"
                # a release that opens with the quarter's or the year's sales and earnings per share
                r"\b(?:for immediate release|press release|news release)\b.{0,600}?\b(?:first|second|third|fourth|full)"
                r"[- ](?:quarter|year)\b.{0,300}?\b(?:sales|revenues?|earnings|eps)\b", re.IGNORECASE | re.DOTALL),
     "Earnings release", ("earnings", "results", "release")),
)
# The period a filing's cover page states ("For the Quarterly Period Ended December 31, 2022").
COVER_PERIOD = re.compile(r"\bfor\s+the\s+((?:fiscal\s+)?(?:year|quarter|quarterly\s+period|period|fiscal\s+year)\s+ended\s+"
                          r"[A-Z][a-z]+\.?\s\d{1,2},\s(?:19|20)\d\d)", re.IGNORECASE)
_DATE = r"[A-Z][a-z]+\.? \d{1,2}, (?:19|20)\d\d"
# An 8-K's date, on its line or the next: "Date of Report (Date of earliest event reported): July 1, 2022".
_REPORT_DATE = re.compile(r"\bdate of report\b[^\n]{0,60}?:?\s*\n?\s*(" + _DATE + ")", re.IGNORECASE)
_REGISTRANT = re.compile(r"^(.*)\n[ \t_]*\(exact\s+name\s+of\s+(?:the\s+)?registrant", re.IGNORECASE | re.MULTILINE)
# A cover without that line (Microsoft's): the company in capitals on the line after the commission file number.
_AFTER_FILE_NUMBER = re.compile(r"commission\s+file\s+(?:number|no\.?)\s*:?\s*[\d-]+\s*\n([^\n]+)", re.IGNORECASE)
_FILE_NUMBER = re.compile(r"^.*commission\s+file\s+(?:number|no\.?)\s*:?\s*[\d-]+\s*", re.IGNORECASE)
_SALUTATION = re.compile(r"^\s*(?:dear|to whom it may concern)\b", re.IGNORECASE | re.MULTILINE)
_LETTER_LINES = 15  # a salutation this far down, or less, makes the lines above it a letter's head
_STARTS_WITH_DATE = re.compile(r"^(?:" + _DATE + r"|\d{1,2} [A-Z][a-z]+ (?:19|20)\d\d|\d{1,2}[/.-]\d{1,2}[/.-]\d{2,4})")
OPENING_CHARS = 4000  # a cover page, a letterhead: what the first page prints


def form_of(opening: str) -> str:
    """The kind of document the opening's form or headline says it is ("Current report (Form 8-K)"), or ""."""
    return next((label for pattern, label, _ in FORM_KINDS if pattern.search(opening)), "")


def registrant(opening: str) -> str:
    """The company a filing's cover names over "(Exact name of registrant as specified in its charter)", or ""."""
    match = _REGISTRANT.search(opening)
    if not match:
        after = _AFTER_FILE_NUMBER.search(opening)
        name = after.group(1).strip() if after else ""
        return name if name.isupper() and 1 <= len(name.split()) <= 6 and re.search(r"[A-Z]{2}", name) else ""
    above = [line for line in opening[: match.start()].split("\n") if line.strip()][-3:]
    if len(above) == 3 and all(len(line.split()) <= 2 for line in above):
        return ""  # a text layer of a word or two a line ("R" / "ESORTS I" / "NTERNATIONAL"): no name to trust
    name = _FILE_NUMBER.sub("", match.group(1)).split("__")[-1]
    name = " ".join(name.strip(" _").split())
    return name if re.search(r"[^\W\d_]{2}", name) and len(name.split()) <= 10 else ""


def letterhead(opening: str) -> str:
    """The sender a letter's head prints: its first line, where a salutation ("Dear ...") follows within a few
    lines and that first line is a short name (not a date, not the salutation), or ""."""
    lines = [line.strip() for line in opening.split("\n") if line.strip()][:_LETTER_LINES]
    if len(lines) < 2 or not any(_SALUTATION.match(line) for line in lines[1:]):
        return ""
    first = lines[0]
    if _SALUTATION.match(first) or _STARTS_WITH_DATE.match(first) or len(first.split()) > 8 or not first[0].isupper() \
            or first[-1] in ".,;:!?":
        return ""
    return first


def cover_line(text: str) -> str:
    """The one line a cover page or letterhead gives its document ("Johnson & Johnson, Current report (Form 8-K),
    August 30, 2023."), as a card would say it; "" where no registrant or letterhead is printed."""
    opening = text[:OPENING_CHARS]
    subject = registrant(opening)
    if not subject:
        sender = letterhead(opening)
        return f"Letter from {sender}." if sender else ""
    period = COVER_PERIOD.search(opening) or _REPORT_DATE.search(opening)
    parts = [subject, form_of(opening), " ".join(period.group(1).split()) if period else ""]
    return ", ".join(p for p in parts if p) + "."
