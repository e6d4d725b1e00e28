"""Readers that fail the way parsers of hostile files do; imported by name in localcr's worker processes."""
from __future__ import annotations

import os
import signal
import time


def segfault(data: bytes):
    os.kill(os.getpid(), signal.SIGSEGV)


def hang(data: bytes):
    time.sleep(3600)


def hog(data: bytes):
    return bytearray(1 << 40)  # beyond any worker's memory limit


def broken(data: bytes):
    raise ValueError("xref table\nis damaged")
