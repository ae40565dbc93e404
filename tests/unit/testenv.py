"""What both Python test tiers share (tests/unit/testenv.py and tests/integration/conftest.py import it): the
checkout importable as ``ansible_collections.ai_storage.checkpoint_io``, the fixture and real-world output
directories, and the fixtures for modules run in-process.

The repository root is the collection root; ``collections/ansible_collections/ai_storage/checkpoint_io``
is a committed symlink back to it, so adding ``collections/`` to ``sys.path`` is all that is needed.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
COLLECTIONS = os.path.join(ROOT, "collections")
if COLLECTIONS not in sys.path:
    sys.path.insert(0, COLLECTIONS)

FIXTURES = os.path.join(ROOT, "tests", "unit", "fixtures")


def _origin_url(git_config):
    """remote.origin.url of the checkout, read from .git/config (no git process: the unit tier starts none)."""
    section = None
    try:
        with open(git_config) as handle:
            for line in handle:
                line = line.strip()
                if line.startswith("["):
                    section = line
                elif section == '[remote "origin"]' and line.replace(" ", "").startswith("url="):
                    return line.split("=", 1)[1].strip()
    except (IOError, OSError):
        pass
    return ""


def _real_world_outputs():
    """The shared real-world tool outputs (never committed): CHECKPOINT_IO_REAL_WORLD_OUTPUTS, else ../shared beside
    this checkout, else ../shared beside the local repository this checkout was cloned from (a clean clone in a
    temporary directory, as CI makes, reads the same samples as the work tree)."""
    given = os.environ.get("CHECKPOINT_IO_REAL_WORLD_OUTPUTS")
    if given:
        return given
    candidates = [ROOT]
    origin = _origin_url(os.path.join(ROOT, ".git", "config"))
    if origin.startswith("/"):
        candidates.append(origin)
    paths = [os.path.normpath(os.path.join(base, "..", "shared", "real-world-outputs")) for base in candidates]
    return next((path for path in paths if os.path.isdir(path)), paths[0])


REAL_WORLD = _real_world_outputs()


import pytest  # noqa: E402  (after the path set-up above)


@pytest.fixture(autouse=True)
def _fresh_module_warnings():
    """Modules run in-process here; ansible keeps their warnings in one process-wide dict (deduplicated), so a
    warning of one test would show up in the next test's result. Each test starts with none."""
    from ansible.module_utils.common import warnings as module_warnings
    module_warnings._global_warnings.clear()
    module_warnings._global_deprecations.clear()
    yield


@pytest.fixture
def warned(monkeypatch):
    """The messages passed to module.warn (where they end up depends on ansible-core's controller mode)."""
    from ansible.module_utils.basic import AnsibleModule
    messages = []
    original = AnsibleModule.warn

    def spy(self, warning, *args, **kwargs):
        messages.append(warning)
        return original(self, warning, *args, **kwargs)

    monkeypatch.setattr(AnsibleModule, 'warn', spy)
    return messages
