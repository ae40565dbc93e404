"""Stand-in for the pip bootstrap script ansible-test downloads from its own file server.

These machines reach PyPI but not that server. ansible-test runs this file as ``get_pip`` with pip options
and requirement specifiers (e.g. ``--disable-pip-version-check pip==24.2 --no-setuptools``): install pip from
the interpreter's bundled wheel (ensurepip), then let that pip install the requested specifiers from PyPI.
tests/sanity.sh copies it to ~/.ansible/test/cache/get_pip_<version>.py.
"""
import ensurepip
import subprocess
import sys

ensurepip.bootstrap(upgrade=True)
args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
sys.exit(subprocess.call([sys.executable, "-m", "pip", "install", "-q"] + args))
