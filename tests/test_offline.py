"""Nothing reaches the network: the real CLI in its own process with every socket connection refused and
logged, and, in this process, the guard (conftest) that fails any test which tries to connect."""
from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest
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


@pytest.mark.model
def test_cli_never_connects(corpus, tmp_path):
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(SITECUSTOMIZE)
    log = tmp_path / "connections.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}  # localcr must set them itself
    env.update(PYTHONPATH=str(hooks), CONNECT_LOG=str(log))
    localcr = [sys.executable, "-m", "localcr"]
    index = tmp_path / "i"
    outputs = {}
    for args in (["models"], ["index", str(corpus), "--index", str(index), "-q"],
                 ["search", "retries backoff", "--index", str(index)], ["stats", "--index", str(index)]):
        done = subprocess.run(localcr + args, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        outputs[args[0]] = done.stdout
    assert not log.exists(), f"connection attempts: {log.read_text()}"
    assert "indexed 4 documents" in outputs["index"]
    assert "guide.md" in outputs["search"]
    assert "documents   4" in outputs["stats"]


def test_this_process_refuses_and_records_connections():
    before = len(CONNECT_ATTEMPTS)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        with pytest.raises(OSError, match="network blocked"):
            sock.connect(("127.0.0.1", 9))
    assert CONNECT_ATTEMPTS[before:] == [("127.0.0.1", 9)]
    del CONNECT_ATTEMPTS[before:]  # the test's own attempt, not one the per-test guard should fail
