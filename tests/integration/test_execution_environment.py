# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The execution environments: ee/execution-environment.yml (the collection's own image) - `ansible-builder create`
writes the build context (no container engine needed) with the collection's Python, system and collection
requirements in it; and an EE that installs the collection - `ansible-builder introspect` of the built and
installed artifact finds the requirements its meta/execution-environment.yml names."""

from __future__ import absolute_import, division, print_function

__metaclass__ = type

import os
import subprocess
import sys

import yaml

from testenv import ROOT

EE = os.path.join(ROOT, 'ee', 'execution-environment.yml')


def test_ansible_builder_create_writes_the_context(tmp_path):
    builder = os.path.join(os.path.dirname(sys.executable), 'ansible-builder')
    assert os.access(builder, os.X_OK), 'ansible-builder is missing: lab/bootstrap.sh installs requirements-dev.txt'
    context = str(tmp_path / 'context')
    run = subprocess.run([builder, 'create', '-f', EE, '-c', context, '--output-filename', 'Containerfile'],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    assert run.returncode == 0, run.stdout
    with open(os.path.join(context, 'Containerfile')) as handle:
        containerfile = handle.read()
    assert 'quay.io/centos/centos:stream9' in containerfile and 'ansible-core' in containerfile
    build = os.path.join(context, '_build')
    with open(os.path.join(build, 'requirements.txt')) as handle:
        assert 'redis' in handle.read()
    with open(os.path.join(build, 'bindep.txt')) as handle:
        assert 'openssh-clients' in handle.read()
    with open(os.path.join(build, 'requirements.yml')) as handle:
        names = [c['name'] for c in yaml.safe_load(handle)['collections']]
    assert names == ['ansible.posix', 'community.general']


def test_the_requirements_match_the_controllers():
    with open(EE) as handle:
        ee = yaml.safe_load(handle)
    with open(os.path.join(ROOT, 'requirements.txt')) as handle:
        core = [line.strip() for line in handle if line.startswith('ansible-core')]
    assert ee['version'] == 3 and [ee['dependencies']['ansible_core']['package_pip']] == core


def test_an_ee_that_installs_the_collection_gets_its_requirements(tmp_path):
    bindir = os.path.dirname(sys.executable)
    built, installed = tmp_path / 'built', tmp_path / 'installed'
    run = subprocess.run([os.path.join(bindir, 'ansible-galaxy'), 'collection', 'build', ROOT, '--output-path',
                          str(built)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True,
                         check=False)
    assert run.returncode == 0, run.stdout
    artifact = [str(built / name) for name in os.listdir(str(built)) if name.endswith('.tar.gz')]
    # --force: the checkout's own collection path (ANSIBLE_COLLECTIONS_PATH) already has it
    run = subprocess.run([os.path.join(bindir, 'ansible-galaxy'), 'collection', 'install', '--offline', '--no-deps', '--force',
                          '-p', str(installed)] + artifact, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                         universal_newlines=True, check=False)
    assert run.returncode == 0, run.stdout
    collection = installed / 'ansible_collections' / 'ai_storage' / 'checkpoint_io'
    # what an EE needs is in the artifact; the collection's own image definition is not
    assert (collection / 'meta' / 'ee-requirements.txt').is_file() and (collection / 'meta' / 'ee-bindep.txt').is_file()
    assert not (collection / 'ee').exists()
    run = subprocess.run([os.path.join(bindir, 'ansible-builder'), 'introspect', '--sanitize', str(installed)],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    assert run.returncode == 0, run.stdout
    assert 'jmespath' in run.stdout and 'redis' in run.stdout, run.stdout
    assert 'openssh-client' in run.stdout, run.stdout
