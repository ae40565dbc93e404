"""Every host tool a test or the lab runs is in lab/tools.txt, so lab/bootstrap.sh installs it on a fresh machine."""
import os
import re

from testenv import ROOT
from helpers import listed_tools

# Tools the tests and the lab scripts start on this machine (not inside lab nodes).
USED = re.compile(r"require_tool\(['\"]([\w.+-]+)['\"]\)")


def test_every_required_tool_is_listed():
    used = set()
    for top in ('tests', 'lab', 'molecule'):
        for folder, _dirs, files in os.walk(os.path.join(ROOT, top)):
            for name in files:
                if name.endswith('.py'):
                    with open(os.path.join(folder, name)) as handle:
                        used.update(USED.findall(handle.read()))
    assert 'fio' in used
    assert used <= listed_tools(), sorted(used - listed_tools())


def test_the_lab_tools_are_listed():
    listed = listed_tools()
    for tool in ('qemu-system-x86_64', 'qemu-img', 'mmdebstrap', 'nbdkit', 'fio', 'ssh', 'ssh-keygen'):
        assert tool in listed, tool
