"""Nothing reaches the network: the real CLI, in its own process, with every socket connection refused and logged."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from conftest import CONNECT_ATTEMPTS

SITECUSTOMIZE = '''
import os, socket
_log = os.environ["CONNECT_LOG"]
_real = socket.socket.connect
def _refuse(self, address, *args, **kwargs):
    if self.family in (socket.AF_INET, socket.AF_INET6):
        with open(_log, "a") as f:
            f.write(repr(address) + "\\n")
        raise OSError("network blocked")
    return _real(self, address, *args, **kwargs)
socket.socket.connect = _refuse
socket.socket.connect_ex = _refuse
'''


def test_cli_never_connects(corpus, tmp_path):
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(SITECUSTOMIZE)
    log = tmp_path / "connections.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}  # localcr must set them itself
    env.update(PYTHONPATH=str(hooks), CONNECT_LOG=str(log))
    localcr = [sys.executable, "-m", "localcr"]
    for args in (["models"], ["index", str(corpus), "--index", str(tmp_path / "i"), "-q"],
                 ["search", "retries backoff", "--index", str(tmp_path / "i")], ["stats", "--index", str(tmp_path / "i")]):
        done = subprocess.run(localcr + args, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
    assert not log.exists(), f"connection attempts: {log.read_text()}"
    assert "Orbit" in done.stdout or "orbit" in done.stdout


def test_no_test_in_this_process_tried_to_connect():
    assert CONNECT_ATTEMPTS == []
    assert os.environ["HF_HUB_OFFLINE"] == "1" and Path(sys.executable).exists()
