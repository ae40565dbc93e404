"""Stand-in for the pip bootstrap script ansible-test downloads from its own file server.

These machines reach PyPI but not that server. ansible-test runs this file as ``get_pip`` with pip options
and requirement specifiers (e.g. ``--disable-pip-version-check pip==24.2 --no-setuptools``), in a fresh
venv and with a filtered environment: install pip from the interpreter's bundled wheel (ensurepip), make
that venv's pip trust the system's CA store (pip's own bundle does not know a site's TLS proxy), then let
pip install the requested specifiers from PyPI. tests/sanity.sh copies it to
~/.ansible/test/cache/get_pip_<version>.py.
"""
import ensurepip
import os
import ssl
import subprocess
import sys

ensurepip.bootstrap(upgrade=True)
cafile = ssl.get_default_verify_paths().openssl_cafile
if cafile and os.path.exists(cafile):
    with open(os.path.join(sys.prefix, "pip.conf"), "w") as handle:
        handle.write("[global]\ncert = %s\n" % os.path.realpath(cafile))
args = [a for a in sys.argv[1:] if a not in ("--no-setuptools", "--no-wheel")]
env = dict(os.environ)
env.pop("PIP_CONFIG_FILE", None)  # ensurepip points it at /dev/null for itself
sys.exit(subprocess.call([sys.executable, "-m", "pip", "install", "-q"] + args, env=env))
