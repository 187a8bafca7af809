"""The collector's pause, the exit a one-command program is spared, and a server's start-up kept out of it."""

from __future__ import annotations

import gc
import subprocess
import sys

from desched.runtime.collector import paused

EXIT_PROBE = """
import atexit, gc
from desched.runtime.collector import spare_exit
atexit.register(lambda: print(gc.get_freeze_count() > 0, flush=True))  # runs last: atexit is last in, first out
spare_exit()
spare_exit()
"""


def test_paused_turns_the_collector_back_on_only_if_it_was_on():
    assert gc.isenabled()
    with paused():
        assert not gc.isenabled()
        with paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_spare_exit_freezes_what_is_left_as_exit_begins():
    done = subprocess.run([sys.executable, "-c", EXIT_PROBE], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "True"


CLI_PROBE = """
import atexit, gc, sys
atexit.register(lambda: print(gc.get_freeze_count() > 0, flush=True))
from desched.cli import main
if sys.argv[2] == "program":
    sys.argv = ["desched", "lint", sys.argv[1]]
    main()
else:
    main(["lint", sys.argv[1]])
"""


def test_desched_lint_as_a_program_spares_its_exit(tmp_path):
    """``desched lint`` run as the program (arguments from the command line) spares its exit; the library call
    ``main([...])`` leaves the caller's exit alone."""
    policy = tmp_path / "policy.yaml"
    policy.write_text("apiVersion: descheduler/v1alpha2\nkind: DeschedulerPolicy\nprofiles: []\n", encoding="utf-8")
    for how, frozen in (("program", "True"), ("library", "False")):
        done = subprocess.run(
            [sys.executable, "-c", CLI_PROBE, str(policy), how],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            timeout=60,
        )
        assert done.stdout.strip().splitlines()[-1] == frozen, (how, done.stdout, done.stderr)


SURVIVORS_PROBE = """
import gc, weakref
from desched.runtime.collector import freeze_survivors


class Node:
    pass


garbage = Node()
garbage.itself = garbage  # a cycle only a collection frees
freed = []
weakref.finalize(garbage, freed.append, "garbage")
del garbage
kept = [Node() for _ in range(1000)]
before = gc.get_freeze_count()
freeze_survivors()
print(freed == ["garbage"], gc.get_freeze_count() - before >= len(kept), flush=True)
"""


def test_freeze_survivors_collects_garbage_then_freezes_what_is_alive():
    done = subprocess.run([sys.executable, "-c", SURVIVORS_PROBE], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True"]
