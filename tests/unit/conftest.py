"""Make the checkout importable as ``ansible_collections.ai_storage.checkpoint_io``.

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
REAL_WORLD = os.path.normpath(os.path.join(ROOT, "..", "shared", "real-world-outputs"))


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
