# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report in a real browser: Debian's chromium (/usr/bin/chromium, lab/tools.txt) driven by Playwright for
Python, launched with the system browser's executable (no browser is ever downloaded: PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD
is set, `playwright install` is never run). Screenshots land in tests/output/screenshots/ (CHECKPOINT_IO_SCREENSHOTS
overrides); a console error or an uncaught page error fails the test that caused it."""

from __future__ import absolute_import, division, print_function

import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
for path in (os.path.join(ROOT, 'collections'), os.path.join(ROOT, 'tests', 'bench'), os.path.join(ROOT, 'tests', 'unit')):
    if path not in sys.path:
        sys.path.insert(0, path)
os.environ.setdefault('PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD', '1')

CHROMIUM = os.environ.get('CHECKPOINT_IO_CHROMIUM', '/usr/bin/chromium')
SHOTS = os.environ.get('CHECKPOINT_IO_SCREENSHOTS', os.path.join(ROOT, 'tests', 'output', 'screenshots'))
LAB_PLAN = {'checkpoint': 'llama3-8b', 'ranks_per_node': 4, 'window_s': 60, 'mtbf_hours': 20000}


@pytest.fixture(scope='session')
def shots():
    if not os.path.isdir(SHOTS):
        os.makedirs(SHOTS)
    return SHOTS


LAB_FLEET = os.environ.get('CHECKPOINT_IO_LAB_FLEET')


@pytest.fixture(scope='session')
def lab_fleet_is_real():
    """True where CHECKPOINT_IO_LAB_FLEET names what a real tune run of the lab fleet left (tests/run-all.sh step
    browser-lab, after molecule/default kept it); False for the synthetic lab fleet of tests/bench/fleet_cache.py."""
    return bool(LAB_FLEET)


@pytest.fixture(scope='session')
def lab_report(tmp_path_factory):
    """The lab fleet (node1, node2 after a tune run) through playbooks/fleet_report.yml from a jsonfile cache: no host
    is contacted (the hosts' address answers nothing). CHECKPOINT_IO_LAB_FLEET names the directory
    molecule/default/tests/test_after_tuning_fleet_report.py keeps (cache/: the real jsonfile fact cache of that
    scenario's nodes, verify/: their verification reports); without it the cache is tests/bench/fleet_cache.py --lab."""
    import fleet_cache
    work = tmp_path_factory.mktemp('lab')
    extra = {}
    if LAB_FLEET:
        cache = os.path.join(LAB_FLEET, 'cache')
        if not os.path.isdir(cache):
            pytest.fail('CHECKPOINT_IO_LAB_FLEET=%s has no cache/: run molecule test -s default first' % LAB_FLEET)
        extra['fleet_report_verify_dir'] = os.path.join(LAB_FLEET, 'verify')
        if os.path.isdir(os.path.join(LAB_FLEET, 'run')):   # the tune run's documents: the page shows its writes
            extra['fleet_report_run_dir'] = os.path.join(LAB_FLEET, 'run')
    else:
        cache = str(work / 'cache')
        fleet_cache.write_cache(cache, 2, lab=True)
    hosts = sorted(name[3:] if name.startswith('s1_') else name for name in os.listdir(cache))
    inventory = work / 'inventory.ini'
    inventory.write_text('[checkpoint_nodes]\n' + ''.join('%s ansible_host=192.0.2.1\n' % h for h in hosts))
    out = str(work / 'report')
    extra.update({'fleet_report_source': 'cache', 'fleet_report_cache_dir': cache, 'fleet_report_dir': out,
                  'fleet_report_plan': LAB_PLAN})
    run = subprocess.run(
        [os.path.join(os.path.dirname(sys.executable), 'ansible-playbook'), '-i', str(inventory),
         os.path.join(ROOT, 'playbooks', 'fleet_report.yml'), '-e', json.dumps(extra)],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True, check=False)
    assert run.returncode == 0, run.stdout[-3000:]
    assert '2 nodes, 4 data drives' in run.stdout
    if not LAB_FLEET:
        assert 'worst: node2' in run.stdout          # the synthetic node2's throttled drive
    return os.path.join(out, 'fleet_report.html')


@pytest.fixture(scope='session')
def big_report(tmp_path_factory):
    """10,000 synthetic nodes (tests/bench/fleet_cache.py) through module_utils/fleet/fleet_report.build, two worker
    processes reading the cache: the build's result."""
    import fleet_cache
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.fleet import fleet_report
    work = tmp_path_factory.mktemp('big')
    cache = str(work / 'cache')
    fleet_cache.write_cache(cache, int(os.environ.get('CHECKPOINT_IO_BIG_FLEET', '10000')))
    # a drift the synthetic fleet does not have, on every 7th node: a drift group of its own
    for name in sorted(os.listdir(cache))[::7]:
        path = os.path.join(cache, name)
        with open(path) as handle:
            doc = json.load(handle)
        inner = json.loads(doc['__payload__']) if '__payload__' in doc else doc   # 2.19's jsonfile layout
        inner['fleet_report_targets'] = {'block_layer_nr_requests': 64}
        with open(path, 'w') as handle:
            json.dump(dict(doc, __payload__=json.dumps(inner)) if '__payload__' in doc else inner, handle)
    result = fleet_report.build(fleet_report.CacheSource(cache), str(work), workers=2, plan_args={
        'checkpoint': 'llama3-405b', 'ranks_per_node': 8, 'window_s': 120, 'mtbf_hours': 50000})
    assert result['html_bytes'] < 1000 * 1000
    return result


@pytest.fixture(scope='session')
def browser():
    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail('%s is missing: lab/bootstrap.sh installs chromium (lab/tools.txt)' % CHROMIUM)
    from playwright.sync_api import sync_playwright
    with sync_playwright() as play:
        chromium = play.chromium.launch(executable_path=CHROMIUM, headless=True, args=['--no-sandbox'])
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser):
    """A page whose console errors and uncaught errors fail the test; dialogs (alert) fail it too."""
    context = browser.new_context(viewport={'width': 1400, 'height': 1000})
    tab = context.new_page()
    problems = []
    tab.on('console', lambda msg: problems.append('console %s: %s' % (msg.type, msg.text))
           if msg.type == 'error' else None)
    tab.on('pageerror', lambda exc: problems.append('pageerror: %s' % exc))
    tab.on('dialog', lambda dialog: (problems.append('dialog: %s' % dialog.message), dialog.dismiss()))
    tab.on('request', lambda req: problems.append('network request: %s' % req.url)
           if not req.url.startswith(('file:', 'data:', 'blob:')) else None)
    yield tab
    context.close()
    assert problems == [], problems
