"""What the lab benches share: their playbook run on an inventory given (-i) or on one lab node booted for the run
(lab/nvmelab.py, a drive model behind its data drives), stopped afterwards; the playbook hands its results to the
driver in the JSON file ``bench_out``."""
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAB = [sys.executable, os.path.join(ROOT, "lab", "nvmelab.py")]


def run_playbook(inventory, playbook, extra):
    """ansible-playbook of this venv with the checkout's ansible.cfg; returns the results it wrote."""
    env = dict(os.environ, ANSIBLE_CONFIG=os.path.join(ROOT, "ansible.cfg"))
    cmd = [os.path.join(os.path.dirname(sys.executable), "ansible-playbook"), "-i", inventory,
           os.path.join(ROOT, "tests", "bench", playbook), "-e", json.dumps(extra)]
    subprocess.run(cmd, env=env, check=True)
    with open(extra["bench_out"]) as handle:
        return json.load(handle)


def run_bench(args, release, playbook, extra, report):
    """``report(results)`` of ``playbook`` on ``args.inventory``, or on node1 of ``release`` booted with
    ``args.drive_model`` behind its two data drives (checkpoint_io_data_drives names them)."""
    extra = dict(extra, checkpoint_io_data_drives={"serials": ["DATA0001", "DATA0002"]})
    with tempfile.TemporaryDirectory() as tmp:
        extra["bench_out"] = os.path.join(tmp, "bench.json")
        if args.inventory:
            return report(run_playbook(args.inventory, playbook, extra))
        state = os.path.join(tmp, "lab")
        subprocess.run(LAB + ["up", "--state-dir", state, "--node", "node1:%s" % release,
                              "--drive-model", args.drive_model], check=True)
        try:
            return report(run_playbook(os.path.join(state, "inventory.yml"), playbook, extra))
        finally:
            subprocess.run(LAB + ["down", "--state-dir", state], check=False)
