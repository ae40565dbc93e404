"""`nvmelab.py down --all` (tests/run-all.sh's exit trap) stops the labs of its own run only: two suites on one
machine (a clean-clone run beside CI) once stopped each other's lab nodes mid-step. Without NVMELAB_RUN it stops
every registered lab, as before. The registry is a temporary cache; no lab is started or stopped."""
import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
SPEC = importlib.util.spec_from_file_location("nvmelab_down", os.path.join(ROOT, "lab", "nvmelab.py"))
nvmelab = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(nvmelab)


def _register(monkeypatch, run, state_dir):
    monkeypatch.setenv("NVMELAB_RUN", run)
    with open(nvmelab.registry_entry(state_dir), "w") as handle:  # what save_state writes first
        handle.write("%s\n%s\n" % (state_dir, run))


def test_a_run_stops_its_own_labs_and_leaves_another_runs(monkeypatch, tmp_path):
    monkeypatch.setenv("CHECKPOINT_IO_LAB_CACHE", str(tmp_path))
    stopped = []
    monkeypatch.setattr(nvmelab, "down_dir", stopped.append)
    monkeypatch.setattr(nvmelab, "log", lambda *_: None)
    _register(monkeypatch, "run-1", "/tmp/a/lab")
    _register(monkeypatch, "run-2", "/tmp/b/lab")
    monkeypatch.setenv("NVMELAB_RUN", "run-1")
    nvmelab.down_all()
    assert stopped == ["/tmp/a/lab"]
    monkeypatch.delenv("NVMELAB_RUN")
    stopped.clear()
    nvmelab.down_all()
    assert sorted(stopped) == ["/tmp/a/lab", "/tmp/b/lab"]


def test_an_entry_of_an_older_layout_is_stopped_by_a_run_without_a_name(monkeypatch, tmp_path):
    monkeypatch.setenv("CHECKPOINT_IO_LAB_CACHE", str(tmp_path))
    monkeypatch.delenv("NVMELAB_RUN", raising=False)
    stopped = []
    monkeypatch.setattr(nvmelab, "down_dir", stopped.append)
    monkeypatch.setattr(nvmelab, "log", lambda *_: None)
    with open(nvmelab.registry_entry("/tmp/c/lab"), "w") as handle:
        handle.write("/tmp/c/lab")  # the state dir alone, no run
    nvmelab.down_all()
    assert stopped == ["/tmp/c/lab"]
