"""Paths shared by the Python tests: the `lgelu` executable (LGELU_CLI,
default <repo>/build/lgelu) and the fixtures (LGELU_FIXTURES, default
<repo>/tests/fixtures). The library itself is found as lgelu finds it
(LGELU_LIB, ...)."""
import json
import os
import subprocess

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLI = os.environ.get("LGELU_CLI", os.path.join(REPO, "build", "lgelu"))
FIXTURES = os.environ.get("LGELU_FIXTURES", os.path.join(REPO, "tests", "fixtures"))
FASHION = os.environ.get("LGELU_DATA", "/usr/share/datasets/fashion-mnist")


def fixture(*parts):
    return os.path.join(FIXTURES, *parts)


def cli(*args, check=True):
    """Run the lgelu executable; returns CompletedProcess (text)."""
    p = subprocess.run([CLI] + [str(a) for a in args], capture_output=True, text=True)
    if check and p.returncode != 0:
        raise AssertionError(f"lgelu {' '.join(map(str, args))} exited {p.returncode}:\n{p.stdout}\n{p.stderr}")
    return p


def cli_json(*args):
    return json.loads(cli(*args, "--json").stdout)
