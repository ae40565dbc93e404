"""Every ``version_added`` of the collection's documentation (modules, filters, roles) is at most the version
galaxy.yml gives the artifact: a user reading "added in X" can install X."""
import os
import re

import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VERSION_ADDED = re.compile(r"^\s*version_added:\s*['\"]?([0-9][0-9.]*)['\"]?\s*$", re.M)


def _version(text):
    return tuple(int(part) for part in text.split("."))


def test_no_version_added_is_newer_than_the_artifact():
    with open(os.path.join(ROOT, "galaxy.yml")) as handle:
        galaxy = _version(yaml.safe_load(handle)["version"])
    found = []
    for top in ("plugins", "roles"):
        for folder, _dirs, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if not name.endswith((".py", ".yml", ".yaml")):
                    continue
                path = os.path.join(folder, name)
                with open(path, encoding="utf-8") as handle:
                    found += [(os.path.relpath(path, ROOT), value) for value in VERSION_ADDED.findall(handle.read())]
    assert found, "no version_added found: the pattern no longer matches the documentation"
    newer = [(path, value) for path, value in found if _version(value) > galaxy]
    assert not newer, "version_added newer than galaxy.yml's version %s: %s" % (".".join(map(str, galaxy)), newer)
