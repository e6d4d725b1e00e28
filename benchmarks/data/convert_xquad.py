"""Builds the prose sets `xquad-en`, `-de`, `-zh`, `-es`, `-ru` and `-ar` (read by the retrieval and answer
benchmarks) from a snapshot of XQuAD; benchmarks/data/convert_jsquad.py builds `jsquad-ja` with the same code.

    .venv/bin/python benchmarks/data/convert_xquad.py SNAPSHOT OUT [--languages en,de,zh,es,ru,ar]

SNAPSHOT is a checkout (or unpacked archive) of github.com/google-deepmind/xquad, commit
7d30520c717524000f0d9d2f9c10a069acd9d285 (its `xquad.LANG.json` files date from 99910ec0, November 2019); the
script reads only those files and downloads nothing. It writes OUT/xquad-LANG/ in the format of the codebase set:

- `corpus.json`: one document an article, `{"doc_id": "doc_N", "original_uuid", "title", "content", "chunks"}`,
  a chunk a paragraph (`{"chunk_id": "doc_N_chunk_M", "original_index": M, "content"}`, the context stripped),
  `content` the paragraphs joined by a blank line; one line of JSON, no newline at its end;
- `queries.jsonl`: every question in the file's order, `{"query" (stripped), "answer" (its first answer),
  "golden_doc_uuids": [uuid], "golden_chunk_uuids": [[uuid, M]]}`.

`original_uuid` is an opaque id of 16 hex digits: the sets were made with ids that cannot be derived from the
articles, so benchmarks/data/squad_ids.json keeps them (one list a set, in article order; no text of the data) and
an article past its list gets sha256("SET:N")[:16]. With those ids and from that commit the output is byte for byte
the xquad-* sets of ../shared/data (48 articles, 240 paragraphs, 1,190 questions a language). Licence of the data:
CC BY-SA 4.0.
"""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from _snapshot import snapshot_parser

IDS = Path(__file__).resolve().parent / "squad_ids.json"
LANGUAGES = ("en", "de", "zh", "es", "ru", "ar")


def article_ids(name: str, count: int) -> list[str]:
    """The sets' own ids for their articles, then derived ones."""
    known = json.loads(IDS.read_text()).get(name, []) if IDS.exists() else []
    return [known[n] if n < len(known) else hashlib.sha256(f"{name}:{n}".encode()).hexdigest()[:16]
            for n in range(count)]


def build(squad: dict, name: str, articles: int | None = None) -> tuple[str, str]:
    """A SQuAD-format file's first `articles` articles (all by default) as the text of corpus.json and of
    queries.jsonl."""
    data = squad["data"][:articles]
    corpus, queries = [], []
    for n, (article, uuid) in enumerate(zip(data, article_ids(name, len(data)))):
        paragraphs = [paragraph["context"].strip() for paragraph in article["paragraphs"]]
        corpus.append({"doc_id": f"doc_{n}", "original_uuid": uuid, "title": article["title"],
                       "content": "\n\n".join(paragraphs),
                       "chunks": [{"chunk_id": f"doc_{n}_chunk_{m}", "original_index": m, "content": text}
                                  for m, text in enumerate(paragraphs)]})
        for m, paragraph in enumerate(article["paragraphs"]):
            for qa in paragraph["qas"]:
                queries.append({"query": qa["question"].strip(), "answer": qa["answers"][0]["text"],
                                "golden_doc_uuids": [uuid], "golden_chunk_uuids": [[uuid, m]]})
    return (json.dumps(corpus, ensure_ascii=False),
            "".join(json.dumps(query, ensure_ascii=False) + "\n" for query in queries))


def write(target: Path, corpus: str, queries: str) -> Path:
    target.mkdir(parents=True, exist_ok=True)
    (target / "corpus.json").write_text(corpus, encoding="utf-8", newline="")
    (target / "queries.jsonl").write_text(queries, encoding="utf-8", newline="")
    return target


def convert(snapshot: Path, out: Path, languages=LANGUAGES) -> list[Path]:
    written = []
    for language in languages:
        squad = json.loads((snapshot / f"xquad.{language}.json").read_text(encoding="utf-8"))
        written.append(write(out / f"xquad-{language}", *build(squad, f"xquad-{language}")))
    return written


def main(argv: list[str] | None = None) -> None:
    parser = snapshot_parser(__doc__, "google-deepmind/xquad", "each set is written to OUT/xquad-LANG")
    parser.add_argument("--languages", default=",".join(LANGUAGES), help="comma-separated (default: %(default)s)")
    args = parser.parse_args(argv)
    languages = [language for language in args.languages.split(",") if language]
    missing = [f"xquad.{language}.json" for language in languages
               if not (args.snapshot / f"xquad.{language}.json").is_file()]
    if missing:
        sys.exit(f"{args.snapshot}: no {', '.join(missing)}; give a checkout of github.com/google-deepmind/xquad")
    for target in convert(args.snapshot, args.out, languages):
        print(target)


if __name__ == "__main__":
    main()
