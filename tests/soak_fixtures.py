"""What the soak's tests share: short-lived programs to find in the process tree, and a patient wait."""

import time

SLEEPER = "import time; time.sleep(60)"
PARENT_OF_A_SLEEPER = (
    f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', {SLEEPER!r}]); time.sleep(60)"
)


def wait_for(condition, seconds=10.0):
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)
