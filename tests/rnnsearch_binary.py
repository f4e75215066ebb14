"""The rnnsearch binary for the Python tests (test_python.py, test_page.py): run it, train a tiny model.

ctest sets RNNSEARCH_BINARY (the command, split as a shell would) and RNNSEARCH_SOURCE_DIR.
"""
import os
import re
import shlex
import subprocess
import time

SOURCE_DIR = os.environ.get("RNNSEARCH_SOURCE_DIR", os.path.join(os.path.dirname(__file__), ".."))
BINARY = shlex.split(os.environ.get("RNNSEARCH_BINARY", os.path.join(SOURCE_DIR, "build", "rnnsearch")))
TINY = os.path.join(SOURCE_DIR, "corpora", "tiny")


def run(*args, check=True):
    """Runs `rnnsearch ARGS`; returns (stdout bytes, stderr text)."""
    done = subprocess.run(BINARY + [str(a) for a in args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if check and done.returncode != 0:
        raise AssertionError("rnnsearch %s failed: %s" % (" ".join(map(str, args)), done.stderr.decode()))
    return done.stdout, done.stderr.decode("utf-8", "replace")


def train_tiny(model, *extra):
    """Trains a tiny model (400 updates, a few seconds) on corpora/tiny into directory `model`; returns it."""
    run("train", "--train-src", os.path.join(TINY, "train.en"), "--train-tgt", os.path.join(TINY, "train.de"),
        "--valid-src", os.path.join(TINY, "val.en"), "--valid-tgt", os.path.join(TINY, "val.de"), "--model", model,
        "--emb", 8, "--hidden", 12, "--maxout", 6, "--batch-size", 16, "--threads", 1, "--max-updates", 400,
        "--log-freq", 1000, *extra)
    return model


def start_server(model, log_path, wait_seconds=180):
    """`rnnsearch serve --port 0 -m MODEL --threads 1`, its stderr in log_path; returns (process, base URL)."""
    with open(log_path, "wb") as log:
        server = subprocess.Popen(BINARY + ["serve", "-m", model, "--port", "0", "--threads", "1"], stderr=log)
    deadline = time.monotonic() + wait_seconds
    while time.monotonic() < deadline and server.poll() is None:
        with open(log_path, encoding="utf-8", errors="replace") as f:
            match = re.search(r"listening on (http://[0-9.]+:[0-9]+/)", f.read())
        if match:
            return server, match.group(1)
        time.sleep(0.05)
    server.kill()
    with open(log_path, encoding="utf-8", errors="replace") as f:
        raise AssertionError("rnnsearch serve did not start: " + f.read())
