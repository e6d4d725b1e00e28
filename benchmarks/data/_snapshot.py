"""The command line every converter in this folder shares: the public snapshot it reads, the data folder it writes."""
from __future__ import annotations

import argparse
from pathlib import Path


def snapshot_parser(doc: str, checkout: str, written: str) -> argparse.ArgumentParser:
    """A converter's parser, its module docstring as description and epilog; `checkout`: what the snapshot is a
    checkout of; `written`: where in OUT the set goes."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter, epilog=doc)
    parser.add_argument("snapshot", type=Path, help=f"a checkout of {checkout}")
    parser.add_argument("out", type=Path, help=f"the data folder: {written}")
    return parser
