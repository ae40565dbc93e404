# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report's page in headless Chromium (see conftest.py): the lab fleet and 10,000 synthetic nodes - the
overview, the worst nodes, the drift groups, a node found by name with its details and SVG plots (loaded from the
data file beside the page); markup in facts stays text."""

from __future__ import absolute_import, division, print_function

import os

FLEET = int(os.environ.get('CHECKPOINT_IO_BIG_FLEET', '10000'))


def _open(page, path):
    page.goto('file://' + path)
    page.wait_for_selector('#cards .card')


def _column(page, table, index):
    return page.eval_on_selector_all('#%s tbody tr' % table, 'rows => rows.map(r => r.cells[%d].textContent)' % index)


def _find(page, host):
    """Look a node up by name; its details (or the page's answer)."""
    page.fill('#host', host)
    page.click('#find button')
    page.wait_for_function('(host) => (document.querySelector("#detail h2") || {}).textContent === host || '
                           '/no such node|could not/.test(document.getElementById("findinfo").textContent)', arg=host)


def _open_node(page, host):
    _find(page, host)
    assert page.text_content('#detail h2') == host


def test_lab_fleet_overview_and_a_node(page, lab_report, lab_fleet_is_real, shots):
    """The lab fleet's page: both nodes, the plan, the distributions, node2's details with its plots. With the real
    tune run's cache (browser-lab) the screenshots are lab_fleet_*.png, with the synthetic one lab_synthetic_*.png."""
    tag = 'lab_fleet' if lab_fleet_is_real else 'lab_synthetic'
    _open(page, lab_report)
    assert '2' in page.text_content('#cards')
    assert 'llama3-8b' in page.text_content('#plan')
    assert page.locator('#bwplot svg rect').count() >= 1 and page.locator('#tplot svg rect').count() >= 1
    if not lab_fleet_is_real:
        assert _column(page, 'worst', 0) == ['node2']                       # the synthetic node2's hot drive
    page.screenshot(path=os.path.join(shots, tag + '_overview.png'), full_page=True)
    _open_node(page, 'node1')
    _open_node(page, 'node2')
    assert page.locator('#depth-curve polyline.series').count() == 1
    assert page.locator('#thermal-series polyline.series').count() == 2      # one line per data drive
    assert page.locator('#bandwidth rect').count() == 2                       # before and after
    detail = page.text_content('#detail')
    assert 'DATA0001' in detail and 'DATA0002' in detail and 'OS0001' in detail
    if not lab_fleet_is_real:
        assert 'fix:' in detail and 'throttled' in detail
    page.screenshot(path=os.path.join(shots, tag + '_node2.png'), full_page=True)


def test_ten_thousand_nodes_worst_drift_groups_and_a_node_by_name(page, big_report, shots):
    _open(page, big_report['paths']['html'])
    assert str(FLEET) in page.text_content('#cards')
    # the worst nodes, worst first: errors, then warnings
    errors = [int(v) for v in _column(page, 'worst', 9)]
    assert len(errors) == 50 and errors == sorted(errors, reverse=True) and errors[0] >= 1
    assert _column(page, 'worst', 0) == [r['host'] for r in big_report['worst']]
    # the drift groups, the largest first; the one made for the test among them, with its count
    groups = page.eval_on_selector_all('#drift tr.group', 'rows => rows.map(r => [Number(r.cells[0].textContent), '
                                                          'r.cells[2].textContent])')
    counts = [count for count, _what in groups]
    assert counts == sorted(counts, reverse=True) and len(groups) == len(big_report['drift']['groups'])
    made = [count for count, what in groups if 'nr_requests: 256 \u2192 64' in what]
    assert made and made[0] >= FLEET // 7 // 2
    page.screenshot(path=os.path.join(shots, 'fleet10000_overview.png'), full_page=True)
    # a node far into the data file (a late chunk), then one from a drift group's list, then a name not there
    assert page.evaluate('document.scripts.length') == 2      # the data file is not loaded before a lookup
    _open_node(page, 'node%05d' % (FLEET - 124))
    assert page.locator('#depth-curve polyline.series').count() == 1
    assert page.locator('#thermal-series polyline.series').count() >= 1
    page.screenshot(path=os.path.join(shots, 'fleet10000_node.png'), full_page=True)
    first = page.locator('#drift button.host').first
    host = first.text_content()
    first.click()
    page.wait_for_function('(host) => document.querySelector("#detail h2").textContent === host', arg=host)
    assert 'Drift' in page.text_content('#detail')
    _find(page, 'node%05d' % (FLEET + 1))
    assert page.text_content('#findinfo') == 'node%05d: no such node in this report' % (FLEET + 1)


def test_markup_in_host_names_and_facts_stays_text(page, tmp_path, shots):
    import fleet_cache
    from ansible_collections.ai_storage.checkpoint_io.plugins.module_utils.fleet import fleet_report
    base = fleet_cache.base_facts()
    evil = '<img src=x onerror=alert(1)></script><script>alert(2)</script>'
    base['nvme']['controllers'][1]['model'] = evil
    base['io_uring']['kernel_release'] = evil
    result = fleet_report.build(iter([(evil, {'checkpoint_io': base, 'checkpoint_io_verify': {'findings': [
        {'severity': 'error', 'device': evil, 'message': evil, 'fix': evil}]}})]), str(tmp_path), title=evil)
    _open(page, result['paths']['html'])
    assert _column(page, 'worst', 0) == [evil]
    page.click('#worst tbody tr >> nth=0')
    page.wait_for_selector('#detail h2')
    assert page.text_content('#detail h2') == evil and evil in page.text_content('#detail')
    assert page.locator('img').count() == 0 and page.title() == evil
    assert page.evaluate('document.scripts.length') == 3     # the summary, the page's code, the data file
    page.screenshot(path=os.path.join(shots, 'markup_as_text.png'))
