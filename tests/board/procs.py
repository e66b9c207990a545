"""Child processes of the board tests, bounded and never left behind.

A board simulation runs until it is told to stop: a test that dies early
(an exception, run_tests.sh's timeout sending SIGTERM) must not leave one
running, busy on a core for the rest of `make test`. Every child started
here is killed when the test exits, however it exits; every wait has a
bound and says what it waited for.
"""
import atexit
import os
import select
import signal
import subprocess
import time

_children = []


def _cleanup():
    for p in _children:
        if p.poll() is None:
            p.kill()
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass


def _on_signal(signum, frame):
    # SIGTERM (run_tests.sh's timeout) or SIGINT: unwind, so that the
    # children are killed on the way out.
    raise SystemExit(128 + signum)


atexit.register(_cleanup)
signal.signal(signal.SIGTERM, _on_signal)
signal.signal(signal.SIGINT, _on_signal)


def start(args, **kw):
    """subprocess.Popen, killed at exit if still running."""
    p = subprocess.Popen(args, **kw)
    _children.append(p)
    return p


def run(args, timeout, **kw):
    """subprocess.run with capture_output and text; a child still running
    after timeout seconds is killed and reported as exit -9 with a stderr
    naming the bound, never an exception."""
    try:
        return subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return subprocess.CompletedProcess(args, -9, out, f"timed out after {timeout} s, killed")


def wait_path(path, proc, timeout):
    """Wait until the file at path exists (the board simulation writes its
    pty's path there), the process has exited, or timeout seconds passed."""
    deadline = time.monotonic() + timeout
    while not os.path.exists(path) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    return os.path.exists(path)


def wait_line(stream, pred, timeout):
    """Read a child's pipe (a Popen stream, read with os.read so nothing
    stays in Python's buffers) line by line until a line satisfies pred,
    end of file, or timeout seconds. Returns (the line or None, all text
    read)."""
    fd = stream.fileno()
    deadline = time.monotonic() + timeout
    buf = b""
    done = 0  # bytes of buf in whole lines already looked at
    while True:
        while b"\n" in buf[done:]:
            end = buf.index(b"\n", done)
            line = buf[done:end].decode(errors="replace")
            done = end + 1
            if pred(line):
                return line, buf.decode(errors="replace")
        left = deadline - time.monotonic()
        if left <= 0:
            return None, buf.decode(errors="replace")
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            return None, buf.decode(errors="replace")
        chunk = os.read(fd, 4096)
        if not chunk:
            return None, buf.decode(errors="replace")
        buf += chunk


def stop(proc, timeout):
    """SIGTERM, then wait up to timeout seconds (SIGKILL after it). Returns
    the exit status, None when it had to be killed."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
    try:
        return proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=30)
        return None
