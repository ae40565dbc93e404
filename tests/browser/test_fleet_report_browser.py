# -*- coding: utf-8 -*-
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The fleet report's page in headless Chromium (see conftest.py): the lab fleet and 10,000 synthetic nodes - the
overview, sort, filter, page, a node's details with its SVG plots; markup in facts stays text."""

from __future__ import absolute_import, division, print_function

import os

FLEET = int(os.environ.get('CHECKPOINT_IO_BIG_FLEET', '10000'))


def _open(page, path):
    page.goto('file://' + path)
    page.wait_for_selector('#nodes tbody tr')


def _hosts(page):
    return page.eval_on_selector_all('#nodes tbody tr', 'rows => rows.map(r => r.cells[0].textContent)')


def _open_node(page, host):
    page.fill('#filter', host)
    page.click('#nodes tbody tr >> nth=0')
    page.wait_for_selector('#detail h2')
    assert page.text_content('#detail h2') == host


def test_lab_fleet_overview_and_a_node(page, lab_report, lab_fleet_is_real, shots):
    """The lab fleet's page: both nodes, the plan, the distributions, node2's details with its plots. With the real
    tune run's cache (browser-lab) the screenshots are lab_fleet_*.png, with the synthetic one lab_synthetic_*.png."""
    tag = 'lab_fleet' if lab_fleet_is_real else 'lab_synthetic'
    _open(page, lab_report)
    assert sorted(_hosts(page)) == ['node1', 'node2']
    assert '2' in page.text_content('#cards')
    assert 'llama3-8b' in page.text_content('#plan')
    assert page.locator('#bwplot svg rect').count() >= 1 and page.locator('#tplot svg rect').count() >= 1
    page.screenshot(path=os.path.join(shots, tag + '_overview.png'), full_page=True)
    _open_node(page, 'node2')
    assert page.locator('#depth-curve polyline.series').count() == 1
    assert page.locator('#thermal-series polyline.series').count() == 2      # one line per data drive
    assert page.locator('#bandwidth rect').count() == 2                       # before and after
    detail = page.text_content('#detail')
    assert 'DATA0001' in detail and 'DATA0002' in detail and 'OS0001' in detail
    if not lab_fleet_is_real:
        assert 'fix:' in detail and 'throttled' in detail                     # the synthetic node2's hot drive
    page.screenshot(path=os.path.join(shots, tag + '_node2.png'), full_page=True)


def test_ten_thousand_nodes_sort_filter_page_open(page, big_report, shots):
    _open(page, big_report)
    info = page.text_content('#pageinfo')
    assert info == 'page 1 of %d (%d nodes)' % ((FLEET + 49) // 50, FLEET)
    assert len(_hosts(page)) == 50
    page.screenshot(path=os.path.join(shots, 'fleet10000_overview.png'))
    # sort by node name, both ways
    page.click('#nodes th[data-key="host"]')
    first = _hosts(page)
    assert first == sorted(first) and first[0] == 'node00001'
    page.click('#nodes th[data-key="host"]')
    assert _hosts(page)[0] == 'node%05d' % FLEET
    # sort by bandwidth after tuning: ascending, blanks last
    page.click('#nodes th[data-key="bw_after"]')
    values = page.eval_on_selector_all('#nodes tbody tr', 'rows => rows.map(r => r.cells[7].textContent)')
    numbers = [float(v) for v in values if v != '\u2013']
    assert numbers == sorted(numbers)
    # page forward and back
    page.click('#next')
    assert page.text_content('#pageinfo').startswith('page 2 of')
    page.click('#prev')
    assert page.text_content('#pageinfo').startswith('page 1 of')
    # filter by status and by name
    page.select_option('#status', 'error')
    statuses = page.eval_on_selector_all('#nodes tbody tr', 'rows => rows.map(r => r.cells[1].textContent)')
    assert statuses and set(statuses) == set(['error'])
    page.select_option('#status', '')
    page.fill('#filter', 'node0099')
    assert sorted(_hosts(page)) == ['node0099%d' % i for i in range(10)]
    # a node far into the page data (its details in a late chunk)
    page.fill('#filter', '')
    _open_node(page, 'node%05d' % (FLEET - 124))
    assert page.locator('#depth-curve polyline.series').count() == 1
    assert page.locator('#thermal-series polyline.series').count() >= 1
    page.screenshot(path=os.path.join(shots, 'fleet10000_node.png'), full_page=True)


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
    assert _hosts(page) == [evil]
    page.click('#nodes tbody tr >> nth=0')
    page.wait_for_selector('#detail h2')
    assert page.text_content('#detail h2') == evil and evil in page.text_content('#detail')
    assert page.locator('img').count() == 0 and page.title() == evil
    assert page.evaluate('document.scripts.length') == 3     # the data, one chunk, the page's code
    page.screenshot(path=os.path.join(shots, 'markup_as_text.png'))
