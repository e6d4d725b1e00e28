"""How often an encoding detector gets legacy-encoded text back exactly, on the prose sets.

    .venv/bin/python benchmarks/formats/encodings.py --data ../shared/data

Every document of each prose set (and its first paragraph, a short file's worth) is encoded the way Windows
tools of its language write it (Windows-1252 for English, German and Spanish, Windows-1251 for Russian,
Windows-1256 for Arabic, GBK for Chinese, Shift_JIS (cp932) for Japanese; texts the encoding cannot hold are left
out), and so is a handful of one-line texts, and each detector must decode the bytes back to the exact text. localcr's own reader
(`localcr.readers.plain.decode`) is measured beside the bare detectors. The table goes to stdout and
benchmarks/results/encodings.md.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

LEGACY = {"xquad-en": "cp1252", "xquad-de": "cp1252", "xquad-es": "cp1252", "xquad-ru": "cp1251",
          "xquad-ar": "cp1256", "xquad-zh": "gbk", "jsquad-ja": "cp932"}


# One line each, as a file name or a short note might hold: detectors have the least to go on.
SHORT = [("Café menu: crème brûlée.", "cp1252"), ("Größe, Übermaß und süße Straße.", "cp1252"),
         ("Señal: año, niño, corazón.", "cp1252"), ("日本語のメニュー：寿司、天ぷら。", "cp932"),
         ("中文菜单：北京烤鸭，麻婆豆腐。", "gbk"), ("Меню: борщ, пельмени, блины.", "cp1251"),
         ("한국어 메뉴: 김치찌개, 불고기.", "cp949"), ("قائمة الطعام: حمص وفلافل.", "cp1256")]


def samples(data: Path, name: str, encoding: str) -> list[tuple[str, bytes]]:
    """(text, legacy bytes) for each whole document and each first paragraph that the encoding can hold."""
    found = []
    for doc in json.loads((data / name / "corpus.json").read_text(encoding="utf-8")):
        for text in (doc["content"], doc["content"].split("\n\n")[0][:600]):
            try:
                found.append((text, text.encode(encoding)))
            except UnicodeEncodeError:
                pass
    return found


def charset_normalizer_decode(data: bytes) -> str | None:
    import charset_normalizer

    best = charset_normalizer.from_bytes(data).best()
    return str(best) if best is not None else None


def chardet_decode(data: bytes) -> str | None:
    import chardet

    guess = chardet.detect(data)["encoding"]
    try:
        return data.decode(guess) if guess else None
    except (LookupError, UnicodeDecodeError):
        return None


def localcr_decode(data: bytes) -> str:
    from localcr.readers.plain import decode

    return decode(data).text


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--data", type=Path, required=True, help="the shared data directory (holding xquad-*/, jsquad-ja/)")
    args = p.parse_args()
    detectors = {"charset-normalizer": charset_normalizer_decode, "chardet": chardet_decode, "localcr": localcr_decode}
    available = {}
    for name, fn in detectors.items():
        try:
            fn(b"probe")
            available[name] = fn
        except ImportError:
            print(f"{name}: not installed, left out", file=sys.stderr)
    rows, seconds = [], dict.fromkeys(available, 0.0)
    sets = [(name, encoding, samples(args.data, name, encoding)) for name, encoding in LEGACY.items() if (args.data / name).exists()]
    sets.append(("short lines", "each its own", [(text, text.encode(encoding)) for text, encoding in SHORT]))
    for name, encoding, tried in sets:
        row = [name, encoding, str(len(tried))]
        for detector, fn in available.items():
            started = time.perf_counter()
            right = sum(fn(data) == text for text, data in tried)
            seconds[detector] += time.perf_counter() - started
            row.append(f"{100 * right / max(1, len(tried)):.1f}")
        rows.append(row)
    head = ["set", "encoding", "texts"] + [f"{d} exact %" for d in available]
    lines = ["# Encoding detection on legacy-encoded prose", "",
             "| " + " | ".join(head) + " |", "|" + "---|" * len(head), *("| " + " | ".join(r) + " |" for r in rows), "",
             "- time: " + ", ".join(f"{d} {s:.1f} s" for d, s in seconds.items())]
    text = "\n".join(lines) + "\n"
    print(text)
    (ROOT / "benchmarks" / "results" / "encodings.md").write_text(text)


if __name__ == "__main__":
    main()
