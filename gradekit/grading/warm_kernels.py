"""Kernels forked from a warm parent, for nbgrader's Execute step.

Starting a fresh Python kernel and importing torch costs about a second per
notebook. Here each grading worker keeps one zygote process (kernel_zygote.py)
that has imported ipykernel and torch; every notebook still gets a brand-new
kernel process of its own, forked from the zygote in milliseconds, started in
the notebook's folder with the environment jupyter_client prepared for it.
Anything other than a plain `python -m ipykernel_launcher` kernel is started
the usual way. Either way the kernel leads its own process group, and
whatever is left in that group is killed when the kernel is cleaned up.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.client import KernelClient
from jupyter_client.connect import KernelConnectionInfo
from jupyter_client.manager import AsyncKernelManager
from jupyter_client.provisioning.local_provisioner import LocalProvisioner
from nbclient.util import run_sync
from nbformat import NotebookNode
from nbgrader.preprocessors import Execute
from traitlets import Bool, Instance, Type, default

from gradekit.core.failures import GraderCause, GraderFailure
from gradekit.grading import kernel_cgroups, worker_box
from gradekit.grading.kernel_folders import KernelFolder
from gradekit.grading.phase_clock import Phase
from gradekit.grading.prompt_client import PromptKernelClient
from gradekit.grading.run_sink import RunSink
from gradekit.sandbox.crossing import MAX_MESSAGE_BYTES
from gradekit.sandbox.kernel_guard import LOG_VARIABLE, PROTECTED_VARIABLE, SOCKETS_VARIABLE, TMP_VARIABLE

IN_KERNEL_DIR = Path(__file__).resolve().parent.parent / "sandbox"
ZYGOTE_SOURCE = (IN_KERNEL_DIR / "kernel_zygote.py").read_text()
GUARD_FILE = IN_KERNEL_DIR / "kernel_guard.py"
ANSWER_SERVER_FILE = IN_KERNEL_DIR / "answer_server.py"
BOX_FILE = IN_KERNEL_DIR / "kernel_box.py"
KERNEL_TMP_BYTES = 256 * 2**20  # a boxed kernel's /tmp: a tmpfs, so its pages are memory
# The largest file a boxed kernel may write, its reply on the grader's disk included: what the grader reads of a reply.
KERNEL_FILE_BYTES = MAX_MESSAGE_BYTES + 2**20
# Settings of the grader that a guarded kernel has no business reading.
SECRET_VARIABLES = ("KIT_GRADEBOOK_URL", "KIT_EXCHANGE_ROOT")
SHUTDOWN_POLL_SECONDS = 0.01
MEMORY_LIMIT_VARIABLE = "KIT_KERNEL_MEMORY_BYTES"  # kernel_zygote.py's: the kernel's memory cap, in bytes


class Zygote:
    """The warm parent process, driven over its stdin/stdout; inside the worker's box when `boxed`.

    `kernels_root` holds one folder per kernel (kernel_folders.py), the only
    folder of the machine a boxed zygote sees besides Python's own.
    """

    def __init__(self, env: dict[str, str], kernels_root: Path, boxed: bool = True, wait: bool = True):
        started = time.monotonic()
        self.lock = threading.Lock()
        self.kernels_root, self.boxed = kernels_root, boxed
        self.owner = os.getpid()  # a forked process inherits this object (and its exit handler): not its to close
        self.errors = tempfile.TemporaryFile()  # what a boxed zygote says on its standard error
        program = [sys.executable, "-c", ZYGOTE_SOURCE]
        if not boxed:
            pipes = dict(stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            self.process = subprocess.Popen(program, cwd="/", env=env, **pipes)  # type: ignore[call-overload]
            self.host_pid = self.process.pid
        else:
            try:
                self.process, self.host_pid = worker_box.start(kernels_root, program, env, self.errors)
            except worker_box.BoxUnavailable as error:
                raise OSError(str(error)) from None
        self.ready = False
        self._start_seconds = 0.0  # told once, to the first kernel's step (`claim_start`)
        if wait:
            self.wait_ready(since=started)

    def wait_ready(self, since: float | None = None) -> None:
        """Read the zygote's {"ready": true}, sent once its imports are done; at once when it was read before.

        The wait (from `since`, else from now) is told to the first kernel's step (`claim_start`): a zygote
        lent to a worker may have imported while the worker made its grader.
        """
        if not self.ready:
            waited_from = time.monotonic() if since is None else since
            self._reply()
            self.ready = True
            self._start_seconds = time.monotonic() - waited_from

    def running(self) -> bool:
        """Whether the zygote's process still runs; only the process that started it may wait for it."""
        if os.getpid() == self.owner:
            return self.process.poll() is None
        return _running(self.process.pid)

    def kill(self) -> None:
        """End the zygote now, with every kernel in its box; its folder of kernel folders goes too.

        Not Popen.kill, which a process that was lent the zygote cannot use (it cannot poll it).
        """
        mine = os.getpid() == self.owner
        try:
            # Boxed, bubblewrap's process: the zygote, PID 1 of the box, dies with it, and every kernel there.
            if not mine or self.process.poll() is None:  # once its starter reaped it, its PID may be another's
                with contextlib.suppress(ProcessLookupError):
                    os.kill(self.process.pid, signal.SIGKILL)
            if mine:
                self.process.wait()
                for stream in (self.process.stdin, self.process.stdout, self.errors):
                    with contextlib.suppress(OSError):  # a request still buffered for a dead zygote
                        if stream is not None:
                            stream.close()
                atexit.unregister(self.close)
        finally:
            shutil.rmtree(self.kernels_root, ignore_errors=True)

    def claim_start(self) -> float:
        """Seconds this zygote took to start, the first time it is asked; 0 after that."""
        seconds, self._start_seconds = self._start_seconds, 0.0
        return seconds

    def spawn(
        self,
        argv: list[str],
        cwd: str,
        env: dict[str, str],
        folder: KernelFolder | None = None,
        guarded: bool = False,
        compiles: bool = False,
    ) -> tuple[int, int]:
        """Fork a kernel; returns its PID inside the zygote's box and as the rest of the machine sees it.

        `compiles`: the kernel's notebook calls torch.compile, whose modules the zygote then imports first.
        """
        request: dict = {"argv": argv, "cwd": cwd, "env": env}
        if compiles:
            request["compiles"] = True
        if folder is not None and folder.boxed:
            request.update(box=str(BOX_FILE), kernel_dir=str(folder.path), tmp_bytes=KERNEL_TMP_BYTES)
            request.update(file_bytes=KERNEL_FILE_BYTES)
            request.update(keep=worker_box.read_only_views())
        if folder is not None and guarded:
            request.update(guard=str(GUARD_FILE), answer_server=str(ANSWER_SERVER_FILE))
            request.update(request=str(folder.request), reply=str(folder.reply))
            request.update(bell=str(folder.bell), answered=str(folder.answered))
        with self.lock:
            reply = self._ask(request)
        if "pid" not in reply:
            raise OSError(f"the kernel zygote could not fork: {reply.get('error')}")
        box_pid = reply["pid"]
        if not self.boxed:
            return box_pid, box_pid
        found = worker_box.host_pid(self.host_pid, box_pid)
        if found is None:
            raise OSError(f"kernel {box_pid} of the zygote's box is not to be found")
        return box_pid, found

    def clear(self) -> None:
        """Have the zygote kill whatever finished kernels left running in its box."""
        try:
            with self.lock:
                self._ask({"clear": True})
        except (OSError, ValueError):
            pass

    def _ask(self, request: dict) -> dict:
        self.wait_ready()
        self.send(request)
        return self._reply()

    def send(self, request: dict) -> None:
        """Write one request; its reply is read by whoever sent it."""
        assert self.process.stdin is not None  # opened as a pipe in __init__
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()

    def ended(self, pid: int) -> int | None:
        """The wait status of kernel `pid`, which this zygote forked and reaped; None when it does not know."""
        try:
            with self.lock:
                return self._ask({"ended": pid}).get("status")
        except (OSError, ValueError):
            return None

    def _reply(self) -> dict:
        assert self.process.stdout is not None  # opened as a pipe in __init__
        line = self.process.stdout.readline()
        if not line:
            said = worker_box.last_words(self.errors) if self.boxed else ""
            code = self.process.poll() if os.getpid() == self.owner else "unknown here"
            raise OSError(f"the kernel zygote exited (code {code}) {said}".strip())
        return json.loads(line)

    def close(self) -> None:
        if os.getpid() != self.owner:
            return
        if self.running():
            assert self.process.stdin is not None  # opened as a pipe in __init__
            self.process.stdin.close()
            self.process.wait(timeout=10)
        self.errors.close()
        shutil.rmtree(self.kernels_root, ignore_errors=True)


_zygote: Zygote | None = None
# A Unix socket's path holds at most 107 bytes: the folders of kernel folders go where their
# sockets' paths stay short, named after the run that made them, so its coordinator can remove them.
SHORT_TEMPORARY_FOLDER = "/tmp"
LONGEST_KERNELS_BASE = 40  # characters; a kernel's deepest socket path adds about sixty
KERNELS_PREFIX = "kit-kernels-"
_run_tag = ""


def kernels_base() -> str:
    """Where this process makes its folder of kernel folders: the temporary folder, unless its path is long."""
    temporary = tempfile.gettempdir()
    return temporary if len(temporary) <= LONGEST_KERNELS_BASE else SHORT_TEMPORARY_FOLDER


def name_kernel_folders_after(run_tag: str) -> None:
    """Name this process's folder of kernel folders after a run (a pool worker's coordinator removes them)."""
    global _run_tag
    _run_tag = run_tag


def kernels_prefix(run_tag: str = "") -> str:
    return f"{KERNELS_PREFIX}{run_tag}-" if run_tag else KERNELS_PREFIX


def without_secrets(environment: Mapping[str, str]) -> dict[str, str]:
    """`environment` without the grader's secrets.

    The zygote is started with it (a new program, not a fork): a kernel forked
    from the zygote inherits its memory, its initial environment block included,
    and can read that block back from /proc/self/environ.
    """
    # The protected roots too: a guarded kernel receives them in its request, and its guard removes them.
    hidden = (*SECRET_VARIABLES, PROTECTED_VARIABLE)
    return {name: value for name, value in environment.items() if name not in hidden}


def zygote(allow_unconfined: bool = False) -> Zygote:
    """This process's zygote (started on first use, or lent to it: `adopt`); one that cannot start is the grader's failure.

    `allow_unconfined` lets it start without its box where the machine cannot make one.
    """
    global _zygote
    since = None  # a lent one's wait counts from now
    if _zygote is None or not _zygote.running():
        if _zygote is not None:
            _zygote.kill()  # a dead one's pipes, exit handler and folder go with it
        boxed = worker_box.require(allow_unconfined)  # refuses, unless allowed, where there is no box
        since = time.monotonic()
        # Known as this process's before its imports are done, so a task's clock counts them as the grader's.
        _zygote = start_zygote(boxed, os.environ, wait=False)
    if not _zygote.ready:  # just started, or lent before its imports were done
        try:
            with _zygote.lock:
                _zygote.wait_ready(since)
        except (OSError, ValueError) as error:
            discard_zygote()
            raise GraderFailure(GraderCause.ZYGOTE_START, str(error)) from error
    return _zygote


def start_zygote(boxed: bool, environment: Mapping[str, str], wait: bool = True) -> Zygote:
    """A new zygote started with `environment` less the grader's secrets; ended at this process's exit.

    Without `wait` it is returned as soon as its process runs: whoever asks it first waits for its imports.
    """
    root = Path(tempfile.mkdtemp(prefix=kernels_prefix(_run_tag), dir=kernels_base()))
    try:
        parent = Zygote(without_secrets(environment), root, boxed, wait)
    except OSError as error:
        shutil.rmtree(root, ignore_errors=True)
        raise GraderFailure(GraderCause.ZYGOTE_START, str(error)) from error
    atexit.register(parent.close)
    return parent


def adopt(parent: Zygote) -> None:
    """Make `parent`, which another process started and lends, this process's zygote (a pool worker's start)."""
    global _zygote
    _zygote = parent


def lent_parent() -> int | None:
    """The process (bubblewrap's, when boxed) of this process's zygote where another process lent it; else None.

    Its kernels are not this process's descendants: whoever clocks this process's work counts that tree too.
    """
    lent, _ = clocked_parent()
    return lent[0] if lent else None


def clocked_parent() -> tuple[tuple[int, ...], frozenset[int]]:
    """What a task's clock needs of this process's zygote, from one look at it (another thread may replace it).

    The lent parent's process, whose tree the clock adds (none when this process started it, or has none);
    and the zygote's own processes (bubblewrap's and its own), whose work is the grader's (imports, forks,
    reaps): the clock leaves it out of the student's CPU.
    """
    parent = _zygote
    if parent is None:
        return (), frozenset()
    lent = (parent.process.pid,) if parent.owner != os.getpid() else ()
    return lent, frozenset({parent.process.pid, parent.host_pid})


def _forget_in_child() -> None:
    """A forked process starts its own zygote: its parent's (its process, pipes and folder) stays the parent's.

    Without this, a forked grading process that ends with `discard_zygote` would kill its parent's
    zygote and remove the folder where the parent's next kernel is made.
    """
    global _zygote
    _zygote = None


os.register_at_fork(after_in_child=_forget_in_child)


def discard_zygote() -> None:
    """End this process's zygote (if any), so that the next kernel is forked from a fresh one."""
    global _zygote
    if _zygote is not None:
        _zygote.kill()
        _zygote = None


class ForkedKernelProcess:
    """The Popen calls jupyter_client makes, for a kernel that the zygote forked (and reaps).

    `pid` is the kernel as this machine sees it (signals, /proc); `box_pid` is
    how its zygote knows it, inside the box.
    """

    stdin = stdout = stderr = None

    def __init__(self, pid: int, box_pid: int | None = None):
        self.pid = pid
        self.box_pid = pid if box_pid is None else box_pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None and not _running(self.pid):
            self.returncode = _exit_code(self.box_pid)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while (code := self.poll()) is None:
            if timeout is not None and deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"kernel {self.pid}", timeout)
            time.sleep(0.02)
        return code

    def send_signal(self, signum: int) -> None:
        try:
            os.kill(self.pid, signum)
        except ProcessLookupError:
            pass

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)


def kill_process_group(pgid: int | None) -> None:
    """SIGKILL to every process left in a kernel's group; never to the grader's own group."""
    if not pgid or pgid == os.getpgrp():
        return
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass  # nothing left in the group


def _exit_code(pid: int) -> int:
    """How a forked kernel ended, as Popen says it (-signal when killed), asked of the zygote that reaped it."""
    status = _zygote.ended(pid) if _zygote is not None and _zygote.running() else None
    if status is None:
        return -signal.SIGKILL  # unknown: the zygote is gone or never saw it end
    return os.waitstatus_to_exitcode(status)


def killed_from_outside(process: object) -> bool:
    """True when a kernel ended by SIGKILL, which it does not send itself unless it means to (the grader retries)."""
    return getattr(process, "returncode", None) == -signal.SIGKILL


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def _forkable(cmd: list[str]) -> bool:
    return (
        len(cmd) >= 3
        and cmd[1:3] == ["-m", "ipykernel_launcher"]
        and os.path.realpath(cmd[0]) == os.path.realpath(sys.executable)
    )


class WarmProvisioner(LocalProvisioner):
    """Forks the kernel from the zygote, boxed in a folder of its own; guards it when the grader names protected roots.

    `folder` is the kernel's folder (kernel_folders.py): its mailbox, its guard
    log (see kernel_guard.py) and its sockets. A boxed kernel has no network:
    it talks to the grader over Unix sockets in that folder.
    """

    allow_unconfined = Bool(
        False,
        help=(
            "Fork kernels without their box where the machine cannot make one (CourseKit.allow_unconfined, "
            "set by the scratch grader for its run); otherwise such a machine is refused."
        ),
    ).tag(config=True)
    folder: KernelFolder | None = None
    guarded = False
    box_start_seconds = 0.0  # how long this kernel waited for its zygote to start (0 when it was already up)
    cgroup: kernel_cgroups.KernelGroup | None = None  # the kernel's memory and pids group, where one can be made

    async def pre_launch(self, **kwargs: Any) -> dict[str, Any]:
        parent = zygote(self.allow_unconfined)  # before the connection file is written: it names the sockets
        self.box_start_seconds = parent.claim_start()
        self.folder = KernelFolder.make(parent.kernels_root, str(kwargs.get("cwd") or os.getcwd()), parent.boxed)
        km = self.parent
        if parent.boxed and km is not None:
            km.transport, km.cache_ports = "ipc", False
            km.ip = str(self.folder.sockets / "k")
        return await super().pre_launch(**kwargs)

    @property
    def guard_log(self) -> str | None:
        return str(self.folder.guard_log) if self.folder and self.guarded else None

    async def launch_kernel(self, cmd: list[str], **kwargs: Any) -> KernelConnectionInfo:
        folder = self.folder
        if folder is None or not _forkable(cmd):
            return await super().launch_kernel(cmd, **kwargs)
        notebook_dir = str(kwargs.get("cwd") or os.getcwd())
        env = dict(kwargs.get("env") or os.environ)
        env["JPY_PARENT_PID"] = str(os.getpid())  # as jupyter_client's own launcher sets it
        if folder.boxed:  # a boxed kernel cannot see its worker (and must not learn its PID)
            del env["JPY_PARENT_PID"]
        self.guarded = bool(env.get(PROTECTED_VARIABLE))
        if self.guarded:
            env[LOG_VARIABLE] = str(folder.guard_log)
            env[TMP_VARIABLE] = folder.kernel_tmp()
            if folder.boxed:
                env[SOCKETS_VARIABLE] = str(folder.sockets)
            for name in SECRET_VARIABLES:  # a gradebook URL may carry a password
                env.pop(name, None)
        if folder.boxed:
            env.update(HOME="/tmp", TMPDIR="/tmp", IPYTHONDIR="/tmp/ipython", MPLCONFIGDIR="/tmp/matplotlib")
        argv = _boxed_arguments(cmd[3:], folder)
        try:
            compiles = bool(getattr(self.parent, "compiles", False))
            box_pid, pid = zygote(self.allow_unconfined).spawn(argv, notebook_dir, env, folder, self.guarded, compiles)
        except (OSError, GraderFailure) as error:
            self.remove_private_files()
            if isinstance(error, GraderFailure):
                raise
            discard_zygote()
            raise GraderFailure(GraderCause.ZYGOTE_START, str(error)) from error
        self.process = cast(subprocess.Popen, ForkedKernelProcess(pid, box_pid))  # answers jupyter_client's calls
        self.cgroup = _grouped(pid, env)
        self.pid = self.pgid = pid  # the kernel leads a session of its own (kernel_zygote.py)
        self.cwd = notebook_dir
        return self.connection_info

    async def cleanup(self, restart: bool = False) -> None:
        # A child the kernel forked without exec would outlive it, beside the next
        # student's kernel: the kernel's whole process group dies with it, and the
        # zygote kills whatever left the group.
        kill_process_group(self.pgid)
        if self.cgroup is not None:  # and whatever is left of its tree, wherever it went
            kernel_cgroups.end_group(self.cgroup)
            self.cgroup = None
        if _zygote is not None and _zygote.boxed:
            _zygote.clear()
        await super().cleanup(restart)
        if self.folder and not self.guarded:  # a guarded kernel's folder holds its log: removed once read
            self.folder.remove()

    def remove_private_files(self) -> None:
        """The kernel's folder, for a kernel that never ran."""
        if self.folder:
            self.folder.remove()


def _grouped(pid: int, env: dict[str, str]) -> kernel_cgroups.KernelGroup | None:
    """Put the new kernel in a memory and pids group of its own, before the grader sends it any cell.

    Where groups can be made, a kernel that cannot be put in one is killed: the grader's failure.
    """
    memory = int(env.get(MEMORY_LIMIT_VARIABLE) or 0)
    try:
        group = kernel_cgroups.kernel_group(memory) if memory else None
        if group is not None:
            group.add(pid)
    except OSError as error:
        kill_process_group(pid)
        raise GraderFailure(GraderCause.KERNEL_START, f"the kernel's cgroup could not be made: {error}") from error
    return group


def _boxed_arguments(argv: list[str], folder: KernelFolder) -> list[str]:
    """The kernel's arguments, its connection file copied into its folder where a boxed kernel can read it."""
    if not folder.boxed or "-f" not in argv:
        return argv
    at = argv.index("-f") + 1
    shutil.copyfile(argv[at], folder.connection_file)
    return [*argv[:at], str(folder.connection_file), *argv[at + 1 :]]


class WarmKernelManager(AsyncKernelManager):
    client_factory = Type(klass=AsyncKernelClient, default_value=PromptKernelClient)
    compiles = False  # the notebook calls torch.compile (WarmExecute says so): its warm parent imports that first

    async def _async_pre_start_kernel(self, **kw: Any) -> tuple[list[str], dict[str, Any]]:
        if self.provisioner is None:
            self.kernel_id = self.kernel_id or kw.pop("kernel_id", str(uuid.uuid4()))
            self.provisioner = WarmProvisioner(kernel_id=self.kernel_id, kernel_spec=self.kernel_spec, parent=self)
        return await super()._async_pre_start_kernel(**kw)

    async def _async_wait(self, pollinterval: float = 0.1) -> None:
        # A forked kernel is gone milliseconds after its shutdown reply; polling
        # every 0.1 s made each notebook wait for most of that interval.
        await super()._async_wait(pollinterval=min(pollinterval, SHUTDOWN_POLL_SECONDS))


def calls_compile(notebook: NotebookNode) -> bool:
    """Whether a code cell of `notebook` names torch.compile: a hint for the warm parent, never a grade.

    A notebook that compiles under another name only starts a little slower (its kernel imports
    what it needs); one that names it without compiling costs its warm parent one import.
    """
    sources = (cell.get("source") for cell in notebook.cells if cell.get("cell_type") == "code")
    return any(isinstance(source, str) and "torch.compile" in source for source in sources)


class WarmExecute(Execute):
    """nbgrader's Execute step (same configuration, same outputs) with forked kernels."""

    sink = Instance(
        RunSink,
        help=(
            "Where this step hands the scratch grader each notebook's report and the grader's own failures it met; "
            "the scratch grader sets one per grader (a step built alone keeps its own)."
        ),
    ).tag(config=True)

    @default("sink")
    def _own_sink(self) -> RunSink:
        return RunSink()

    @default("shutdown_kernel")
    def _killed_at_the_end(self) -> str:
        # A graded kernel has nothing to save, and a student's exit hooks have no time to run.
        return "immediate"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("kernel_manager_class", WarmKernelManager)
        super().__init__(*args, **kwargs)

    def preprocess(
        self, nb: NotebookNode, resources: dict | None = None, km: AsyncKernelManager | None = None
    ) -> tuple[NotebookNode, dict]:
        try:
            return super().preprocess(nb, resources, km)
        except GraderFailure as failure:  # nbgrader would make it a log line: the scratch grader must see it
            self.sink.notice(failure)
            raise

    async def async_start_new_kernel(self, **kwargs: Any) -> None:
        if isinstance(self.km, WarmKernelManager):
            self.km.compiles = calls_compile(self.nb)
        try:
            with self.sink.clock.phase(Phase.KERNEL_START):
                await super().async_start_new_kernel(**kwargs)
            box_start = getattr(getattr(self.km, "provisioner", None), "box_start_seconds", 0.0)
            self.sink.clock.move(box_start, Phase.KERNEL_START, Phase.BOX_START)
        except GraderFailure:
            raise
        except Exception as error:  # no student code has run yet: a kernel that does not start is ours
            raise GraderFailure(GraderCause.KERNEL_START, f"{type(error).__name__}: {error}") from error

    async def async_start_new_kernel_client(self) -> KernelClient:
        provisioner = getattr(self.km, "provisioner", None)  # nbclient drops the manager when the start fails
        try:
            with self.sink.clock.phase(Phase.KERNEL_START):
                return await super().async_start_new_kernel_client()
        except Exception as error:  # the kernel never answered: it did not start
            if isinstance(provisioner, WarmProvisioner):
                provisioner.remove_private_files()
            if isinstance(error, GraderFailure):
                raise
            raise GraderFailure(GraderCause.KERNEL_START, f"{type(error).__name__}: {error}") from error

    async def _async_cleanup_kernel(self) -> None:
        with self.sink.clock.phase(Phase.KERNEL_STOP):
            await super()._async_cleanup_kernel()

    # nbclient binds its synchronous wrappers to its own coroutine functions; rebind them to ours.
    start_new_kernel = run_sync(async_start_new_kernel)
    start_new_kernel_client = run_sync(async_start_new_kernel_client)
    _cleanup_kernel = run_sync(_async_cleanup_kernel)
