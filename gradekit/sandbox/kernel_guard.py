"""The grading kernel's guard: installed in each forked kernel before any student code runs.

The kernels' warm parent loads this file by path (kernel_zygote.py, with runpy)
and each kernel it forks installs it, so it uses the standard library only;
the grader imports it just for its constants. It
does two things:

* An audit hook (PEP 578; once added it cannot be removed) is armed by the
  grader's audit event `kit.arm`, sent once the kernel has started (IPython
  itself opens a SQLite history and loads C symbols while starting) and
  before the first cell. Armed, it refuses what an answer to this problem
  set never needs and a cheat does: reading or writing
  the course's files (source notebooks with hidden tests, the gradebook,
  graded notebooks), opening SQLite databases or network connections,
  starting processes, forking, raw memory access through ctypes, walking the
  garbage collector to reach the guard, adding an audit hook of its own (one
  that could answer the probe). Each refusal is written to the guard's log.
  Arming also installs the seccomp filter (seccomp_filter.py, loaded by path
  beside this file), which refuses new programs and processes below Python.
* An integrity check, run when the grader raises the audit event
  `kit.probe`: are the objects the checks rely on (builtins, torch and
  numpy comparison functions, the check helpers, IPython's traceback and
  execution machinery) still the ones that were there before the student's
  code ran? Its answer goes to the log, tagged with the grader's nonce.

The log is a file the grader reads after the notebook; a probe without an
answer is itself a finding. The arming record and every answer carry the
identity (device, inode) of the file the guard's descriptor points to, so a
descriptor the student redirected, or a file put in the log's place, shows. A determined attacker with arbitrary memory
access can defeat any in-process guard; docs/pages/security.md says what to do then.
"""

from __future__ import annotations

import builtins
import functools
import json
import os
import runpy
import sys
from typing import TYPE_CHECKING

LOG_VARIABLE = "KIT_GUARD_LOG"
PROTECTED_VARIABLE = "KIT_PROTECTED_ROOTS"
TMP_VARIABLE = "KIT_KERNEL_TMP"  # the kernel's private temporary folder, made and removed by the grader
SOCKETS_VARIABLE = "KIT_KERNEL_SOCKETS"  # where a boxed kernel binds its Jupyter sockets
ARM_EVENT = "kit.arm"
PROBE_EVENT = "kit.probe"
SANDBOX_FILE = "kernel_sandbox.py"
SECCOMP_FILE = "seccomp_filter.py"

if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any, TypeAlias

    from gradekit.sandbox.kernel_sandbox import confine as _confine_with_landlock
    from gradekit.sandbox.seccomp_filter import SECCOMP_ARCHES, forbid_new_programs

    AuditArgs: TypeAlias = tuple[Any, ...]  # whatever the code that raised the event passed, the student's included
    Hooks: TypeAlias = dict[str, tuple[object, ...]]  # a kind of IPython hook -> the objects registered
else:  # by path, as the kernel loads this file: nothing of gradekit is importable there
    _seccomp = runpy.run_path(os.path.join(os.path.dirname(os.path.realpath(__file__)), SECCOMP_FILE))
    SECCOMP_ARCHES, forbid_new_programs = _seccomp["SECCOMP_ARCHES"], _seccomp["forbid_new_programs"]
    # Loaded with this file too, so that a kernel forked from a zygote that loaded it compiles nothing.
    _confine_with_landlock = runpy.run_path(os.path.join(os.path.dirname(os.path.realpath(__file__)), SANDBOX_FILE))[
        "confine"
    ]

# Audit events refused outright, with the reason written to the log.
REFUSED_EVENTS = {
    "sqlite3.connect": "opened a SQLite database",
    "subprocess.Popen": "started a process",
    "os.system": "started a process",
    "os.exec": "started a process",
    "os.posix_spawn": "started a process",
    "os.spawn": "started a process",
    "pty.spawn": "started a process",
    "os.fork": "forked the kernel",
    "os.forkpty": "forked the kernel",
    "os.truncate": "truncated a file",
    "gc.get_objects": "walked the garbage collector",
    "gc.get_referrers": "walked the garbage collector",
    "gc.get_referents": "walked the garbage collector",
    "os.kill": "sent a signal to a process",
    "os.killpg": "sent a signal to a process",
    "signal.pthread_kill": "sent a signal to a process",
    "sys.settrace": "set a trace function",
    "sys.setprofile": "set a profile function",
    # Python drops the new hook when an existing one raises here, and tells nobody: the guard logs it.
    "sys.addaudithook": "added an audit hook",
    "socket.connect": "opened a network connection",
    "socket.sendto": "opened a network connection",
}
REFUSED_PREFIXES = {"ctypes.": "used ctypes (raw memory access)"}
CONFUSED = "confused the grading guard"  # the reason for an event whose judging raised: refused, and logged

# Audit events whose first argument is a path: refused inside the protected roots.
PATH_EVENTS = {
    "open",
    "os.listdir",
    "os.scandir",
    "glob.glob",
    "os.remove",
    "os.rename",
    "os.rmdir",
    "os.mkdir",
    "os.chmod",
    "os.chown",
    "os.link",
    "os.symlink",
    "os.utime",
    "shutil.copyfile",
    "shutil.copymode",
    "shutil.copystat",
    "shutil.copytree",
    "shutil.move",
    "shutil.rmtree",
}

# Names the checks depend on; replacing any of them is tampering.
WATCHED_MODULES = (
    "torch",
    "torch.testing",
    "torch.autograd",
    "torch.nn.functional",
    "numpy",
    "numpy.testing",
    "math",
    "warnings",
    "traceback",
)
# Whole packages whose every loaded module is watched: the comparison machinery behind the checks.
WATCHED_PACKAGES = ("torch.testing", "numpy.testing", "torch.autograd")
WATCHED_CLASSES = (
    ("torch", "Tensor"),
    ("IPython.core.interactiveshell", "InteractiveShell"),
    ("ipykernel.zmqshell", "ZMQInteractiveShell"),
    ("ipykernel.ipkernel", "IPythonKernel"),
)
CHECK_MODULES = ("autograd_checks",)
# Names the notebooks' own cells bind to modules; the test cells use them.
NOTEBOOK_MODULE_NAMES = {"torch": "torch", "np": "numpy", "numpy": "numpy", "math": "math", "F": "torch.nn.functional"}
# IPython rebinds these in builtins while a cell runs; they are not the checks' business.
BUILTINS_IPYTHON_OWNS = {"_", "__", "___", "exit", "quit", "display", "get_ipython", "__IPYTHON__", "input"}
# The shell's lists of code rewriters: a cheat could rewrite the test cells before they run.
SHELL_TRANSFORMERS = ("ast_transformers", "input_transformers_cleanup", "input_transformers_post")
# Methods a cheat rebinds on the shell or kernel instance to hide a failure.
INSTANCE_METHODS = (
    "showtraceback",
    "_showtraceback",
    "showsyntaxerror",
    "run_cell",
    "run_cell_async",
    "run_code",
    "run_ast_nodes",
    "_run_cell",
    "get_exception_only",
    "do_execute",
    "execute_request",
)


class Guard:
    """The guard's state and judgement; `audit_hook` is what Python calls on every audit event."""

    def __init__(
        self,
        log_path: str,
        protected_roots: Iterable[str],
        allowed_roots: Iterable[str],
        notebook_dir: str,
        seal: bool = True,
    ) -> None:
        self.log_fd = os.open(log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self.log_identity = log_identity(self.log_fd)  # before any student code: the file the grader made
        self.log_path = os.path.realpath(log_path)
        self.protected = tuple(protected_roots)
        self.allowed = tuple(allowed_roots)
        self.notebook_dir = notebook_dir
        self.seal = seal  # forbid new programs when armed (off only where the hook is tested in-process)
        self.snapshot: dict[str, object] = {}
        self.places: list[tuple[str, object, Place]] = []  # the snapshot's entries, each with where it is looked up
        self.types: list[tuple[str, Place, type]] = []  # each watched module and class, where it is, and its type
        self.instance_methods: dict[str, object] = {}
        self.shell_hooks: Hooks = {}
        self.armed = False
        self.reported: set[tuple[str, str]] = set()
        self.refusals = 0  # refusal records written (or tried): a log that holds fewer lost some
        self.sandboxed = False  # whether Landlock confines the kernel's files (kernel_sandbox.py)

    def hook(self, event: str, args: AuditArgs) -> None:
        """Raise PermissionError for a refused event, as the installed hook does (the tests call this directly)."""
        audit_hook(event, args, self)

    def verdict(self, event: str, args: AuditArgs) -> str | None:
        """Why `event` is refused (logged), or None; never raises, whatever the student passed."""
        if event == ARM_EVENT and not self.armed:
            self.arm()
            return None
        if not self.armed:
            return None
        if event == PROBE_EVENT:
            self.answer_probe(args)
            return None
        reason = self.reason_to_refuse(event, args)
        if reason is not None:
            self.log_refusal(event, reason)
        return reason

    def arm(self) -> None:
        """Take the snapshot the probes compare with, seal the process (seccomp), and log that it is armed."""
        self.snapshot = take_snapshot()
        self.places = [(name, original, place_of(name)) for name, original in self.snapshot.items()]
        self.types = watched_types(self.snapshot)
        self.instance_methods = instance_methods()
        self.shell_hooks = shell_hooks()
        no_exec = forbid_new_programs() if self.seal else False
        self.armed = True
        self.write({"armed": True, "exec_forbidden": no_exec, "sandboxed": self.sandboxed, "log": self.log_identity})

    def answer_probe(self, args: AuditArgs) -> None:
        """Log what changed since arming, tagged with the grader's nonce, and how many refusals were logged."""
        nonce = args[0] if args and type(args[0]) is str else ""
        findings = self.integrity_findings()
        # Where this answer really goes: a descriptor redirected to another file shows another identity.
        self.write({"probe": nonce, "findings": findings, "refusals": self.refusals, "log": log_identity(self.log_fd)})

    def reason_to_refuse(self, event: str, args: AuditArgs) -> str | None:
        """Why an armed guard refuses `event`, or None; judges only, writes nothing."""
        if event == "os.kill" and _own_child(args):
            return None  # ipykernel ends the kernel's children at shutdown; they are nobody else's
        reason = REFUSED_EVENTS.get(event) or next(
            (why for prefix, why in REFUSED_PREFIXES.items() if event.startswith(prefix)), None
        )
        if reason is None and event in PATH_EVENTS and args:
            reason = self.path_reason(event, args)
        return reason

    def log_refusal(self, event: str, reason: str) -> None:
        """Write a refusal to the log once per (event, reason), counting each one written."""
        if (event, reason) in self.reported:
            return
        self.reported.add((event, reason))
        self.refusals += 1
        self.write({"refused": event, "reason": reason})

    def path_reason(self, event: str, args: AuditArgs) -> str | None:
        path = args[0]
        if type(path) not in (str, bytes):  # a descriptor; and never run a student's __fspath__ in here
            return None
        try:
            real = os.path.realpath(os.fsdecode(path))
        except (TypeError, ValueError):
            return None
        if real == self.log_path:
            return "touched the grading guard's log"
        other = _other_process(real, _reads(event, args))
        if other:
            return f"looked into another process ({other})"
        if not _inside(real, self.protected) or _inside(real, self.allowed):
            return None
        if _inside(real, (self.notebook_dir,)) and _reads(event, args) and not real.endswith(".ipynb"):
            return None  # the support modules next to the notebook
        return f"accessed a course file ({os.path.basename(real)})"

    def write(self, record: dict[str, object]) -> None:
        try:
            os.write(self.log_fd, (json.dumps(record) + "\n").encode())
        except OSError:
            pass  # a closed or redirected log: the grader sees answers or records missing

    def integrity_findings(self) -> list[str]:
        lookup = CurrentLookup()
        findings = [
            f"the type of {name} was replaced" for name, place, kind in self.types if _retyped(lookup, place, kind)
        ]
        findings += [
            f"{name} was replaced" for name, original, place in self.places if lookup.at(place) is not original
        ]
        findings.extend(added_to_classes(self.snapshot))
        now = instance_methods()
        findings.extend(
            f"{name} was replaced"
            for name in sorted(set(now) | set(self.instance_methods))
            if now.get(name) is not self.instance_methods.get(name)
        )
        findings.extend(self.namespace_findings())
        findings.extend(changed_hooks(self.shell_hooks, shell_hooks()))
        findings.extend(active_torch_modes())
        return findings

    def namespace_findings(self) -> list[str]:
        """Names in the notebook's namespace that the test cells call, now bound to something else."""
        namespace = _field(_shell(), "_user_ns") if _shell() is not None else {}
        if type(namespace) is not dict:
            return ["the notebook's namespace was replaced"]
        findings = []
        for name, value in list(dict.items(namespace)):
            helper = self.snapshot.get(f"{CHECK_MODULES[0]}.{name}", _MISSING)
            module = self.snapshot.get(f"sys.modules[{NOTEBOOK_MODULE_NAMES.get(name)!r}]", _MISSING)
            expected = helper if helper is not _MISSING else module
            if expected is not _MISSING and value is not expected:
                findings.append(f"the notebook's name {name!r} no longer refers to what the checks use")
        return findings


def log_identity(descriptor: int) -> list[int] | None:
    """[device, inode] of the file behind `descriptor`, which the grader compares with the log it made."""
    try:
        info = os.fstat(descriptor)
    except OSError:
        return None
    return [info.st_dev, info.st_ino]


def take_snapshot() -> dict[str, object]:
    """Every watched name with the object it holds now, before the student's code runs."""
    snapshot = {}
    for name, value in vars(builtins).items():
        if name not in BUILTINS_IPYTHON_OWNS:
            snapshot[f"builtins.{name}"] = value
    for module_name in watched_module_names():
        module = sys.modules.get(module_name)
        if module is None:
            continue
        snapshot[f"sys.modules[{module_name!r}]"] = module
        for name, value in vars(module).items():
            if not name.startswith("__") and (callable(value) or isinstance(value, type(sys))):
                snapshot[f"{module_name}.{name}"] = value
    for module_name, class_name in WATCHED_CLASSES:
        cls = getattr(sys.modules.get(module_name), class_name, None)
        if cls is not None:
            for name, value in vars(cls).items():
                if callable(value):
                    snapshot[f"{module_name}.{class_name}.{name}"] = value
    return snapshot


def watched_types(snapshot: dict[str, object]) -> list[tuple[str, Place, type]]:
    """(name, place, type) of each watched module and class: a module or class given another type
    (`torch.__class__ = Cheat`) keeps its identity and namespace, while its new type's attribute
    lookup answers what it likes."""
    modules = [(name, value) for name, value in snapshot.items() if name.startswith("sys.modules[")]
    classes = [
        (f"{module_name}.{class_name}", getattr(sys.modules.get(module_name), class_name, None))
        for module_name, class_name in WATCHED_CLASSES
    ]
    return [(name, place_of(name), type(value)) for name, value in modules + classes if value is not None]


def _retyped(lookup: CurrentLookup, place: Place, kind: type) -> bool:
    """What is at `place` now has another type than `kind` (something gone or replaced is reported apart)."""
    current = lookup.at(place)
    return current is not _MISSING and type(current) is not kind


def watched_module_names() -> tuple[str, ...]:
    prefixes = tuple(f"{package}." for package in WATCHED_PACKAGES)
    packaged = (name for name in list(sys.modules) if name.startswith(prefixes))
    return tuple(dict.fromkeys((*WATCHED_MODULES, *CHECK_MODULES, *sorted(packaged))))


def added_to_classes(snapshot: dict[str, object]) -> list[str]:
    """Callables set on a watched class after the snapshot: they shadow what the class inherits."""
    found = []
    for module_name, class_name in WATCHED_CLASSES:
        cls = getattr(sys.modules.get(module_name), class_name, None)
        for name, value in vars(cls).items() if cls is not None else ():
            if callable(value) and f"{module_name}.{class_name}.{name}" not in snapshot:
                found.append(f"{module_name}.{class_name}.{name} was added")
    return found


_MISSING = object()

# Where a snapshot's name is looked up: (kind, container, attribute), read from the name once, at arming.
Place = tuple[str, str, str]
MODULE, BUILTIN, CLASS_ATTRIBUTE, MODULE_ATTRIBUTE = "module", "builtin", "class attribute", "module attribute"
CLASS_PREFIXES = tuple(f"{module_name}.{class_name}." for module_name, class_name in WATCHED_CLASSES)


def place_of(name: str) -> Place:
    """Where `name` (a key of `take_snapshot`) lives now: a module, a builtin, or an attribute of a class or module."""
    if name.startswith("sys.modules["):
        return MODULE, name[len("sys.modules['") : -2], ""
    if name.startswith("builtins."):
        return BUILTIN, "", name[len("builtins.") :]
    if name.startswith(CLASS_PREFIXES):
        prefix = next(prefix for prefix in CLASS_PREFIXES if name.startswith(prefix))
        return CLASS_ATTRIBUTE, prefix[:-1], name[len(prefix) :]
    module_name, _, attribute = name.rpartition(".")
    return MODULE_ATTRIBUTE, module_name, attribute


class CurrentLookup:
    """What each place holds now, reading each module's and class's namespace once per probe (they are thousands)."""

    def __init__(self) -> None:
        self.namespaces: dict[tuple[str, str], Any] = {}

    def at(self, place: Place) -> object:
        kind, container, attribute = place
        if kind == MODULE:
            return sys.modules.get(container, _MISSING)
        namespace = self.namespaces.get((kind, container))
        if namespace is None:
            namespace = self.namespaces[(kind, container)] = self._namespace(kind, container)
        return namespace.get(attribute, _MISSING)

    @staticmethod
    def _namespace(kind: str, container: str) -> Any:
        if kind == BUILTIN:
            return vars(builtins)
        if kind == CLASS_ATTRIBUTE:
            module_name, _, class_name = container.rpartition(".")
            cls = getattr(sys.modules.get(module_name), class_name, None)
            return vars(cls) if cls is not None else {}
        return vars(sys.modules.get(container, sys))


def _shell() -> object | None:
    shell_module = sys.modules.get("IPython.core.interactiveshell")
    return shell_module.InteractiveShell._instance if shell_module else None


def shell_hooks() -> Hooks:
    """The shell's code rewriters and event callbacks, as tuples of the objects registered now.

    Read through the instances' own dictionaries and exact types only, so that no
    property or container of the student's runs inside the guard.
    """
    shell = _shell()
    if shell is None:
        return {}
    hooks = {f"IPython's {name}": _plain_list(_field(shell, name)) for name in SHELL_TRANSFORMERS}
    events = _field(shell, "events")
    callbacks = _field(events, "callbacks") if events is not None else {}
    if type(callbacks) is not dict:
        return {**hooks, "IPython's event callbacks": ("replaced",)}
    hooks.update((f"IPython's {event} callbacks", _plain_list(found)) for event, found in dict.items(callbacks))
    return hooks


def _field(obj: object, name: str) -> object:
    """An attribute as the object itself stores it (a traitlets value or its own __dict__ entry)."""
    own = vars(obj)
    traits = own.get("_trait_values")
    if type(traits) is dict and name in traits:
        return traits[name]
    return own.get(name)


def _plain_list(value: object) -> tuple[object, ...]:
    return tuple(list.__iter__(value)) if type(value) is list else ("replaced",)


def changed_hooks(before: Hooks, now: Hooks) -> list[str]:
    findings = []
    for name, registered in now.items():
        known = before.get(name, ())
        if len(registered) != len(known) or any(hook is not old for hook, old in zip(registered, known)):
            findings.append(f"{name} were changed")
    return findings


def active_torch_modes() -> list[str]:
    """Torch function or dispatch modes left active between cells would intercept every check."""
    torch = sys.modules.get("torch")
    if torch is None:
        return []
    found = []
    if torch._C._len_torch_function_stack():
        found.append("a torch function mode was left active")
    if torch._C._len_torch_dispatch_stack():
        found.append("a torch dispatch mode was left active")
    return found


def instance_methods() -> dict[str, object]:
    """Watched methods set on the running shell or kernel object itself, shadowing their classes'."""
    found: dict[str, object] = {}
    shell = _shell()
    for owner, label in ((shell, "the IPython shell"), (getattr(shell, "kernel", None), "the kernel")):
        if owner is not None:
            found.update((f"{label}'s {name}", vars(owner)[name]) for name in INSTANCE_METHODS if name in vars(owner))
    return found


# What /proc shows of another process that a kernel must not touch: its memory, environment, files.
PRIVATE_PROC_ENTRIES = {"mem", "environ", "fd", "map_files", "pagemap", "cwd", "root", "exe"}


def _other_process(path: str, reading: bool) -> str | None:
    """The /proc entry of another process that this access would read privately or write, if any.

    Its folder itself counts as private: opened, it is a descriptor through which a relative open
    reaches its private entries, and the open's audit event names only the relative path.
    """
    parts = path.split(os.sep)
    if len(parts) < 3 or parts[1] != "proc" or not parts[2].isdigit() or parts[2] == str(os.getpid()):
        return None
    if not reading or len(parts) == 3 or parts[3] in PRIVATE_PROC_ENTRIES:
        return os.sep.join(parts[:4])
    return None


def _own_child(args: AuditArgs) -> bool:
    """True for a signal to one process of this kernel's own process group, other than the kernel.

    The kernel leads its group, and no member may leave it or start another
    (seccomp refuses setsid and setpgid), so its members are its own descendants.
    """
    pid = args[0] if args else None
    if type(pid) is not int or pid <= 0 or pid == os.getpid() or os.getpgrp() != os.getpid():
        return False
    try:
        return os.getpgid(pid) == os.getpgrp()
    except OSError:
        return False


def _inside(path: str, roots: Iterable[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


def _reads(event: str, args: AuditArgs) -> bool:
    """True when the event only looks: listing a folder, or opening a file for reading."""
    if event in ("os.listdir", "os.scandir", "glob.glob"):
        return True
    if event != "open":
        return False
    mode = args[1] if len(args) > 1 else "r"
    flags = args[2] if len(args) > 2 else 0
    if isinstance(mode, str) and any(c in mode for c in "wax+"):
        return False
    return not (isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC))


def _allowed_roots() -> tuple[str, ...]:
    """Where Python and its packages live: readable even when inside a course root."""
    roots = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    roots.update(p for p in sys.path if p and "site-packages" in p)
    return tuple(sorted(os.path.realpath(r) for r in roots))


def _confine(roots: tuple[str, ...], allowed: tuple[str, ...], private_tmp: str, socket_dir: str) -> bool:
    """Landlock confinement (kernel_sandbox.py); False where the system does not offer it."""
    try:
        return _confine_with_landlock(roots, allowed, os.path.realpath(os.getcwd()), private_tmp, socket_dir)
    except Exception:
        return False


def audit_hook(event: str, args: AuditArgs, guard: Guard) -> None:
    """The hook Python calls (bound to the guard with functools.partial, a C object).

    The guard is dropped from this frame before raising: a refused answer sees
    this frame in its traceback, and must not find the guard there.
    """
    try:
        reason = guard.verdict(event, args)
    except Exception:
        reason = CONFUSED
        try:  # counted and logged as any refusal, unless the log itself is what failed
            guard.log_refusal(event, reason)
        except Exception:
            pass
    if reason is None:
        return
    del guard
    raise PermissionError(f"grading forbids this: the answer {reason}")


def install() -> None:
    """Guard this process if the grader asked for it; the environment variables are removed."""
    log_path = os.environ.pop(LOG_VARIABLE, None)
    protected = os.environ.pop(PROTECTED_VARIABLE, "")
    if not log_path:
        return None
    # Loaded now, so that the snapshot holds the originals.
    for name in WATCHED_MODULES + CHECK_MODULES + ("torch.testing._comparison",):
        try:
            __import__(name)
        except Exception:
            pass
    roots = tuple(os.path.realpath(p) for p in protected.split(os.pathsep) if p)
    here = os.path.dirname(os.path.realpath(__file__))
    # A traceback through the hook makes IPython read these files' source: let it.
    # So does a compiler that reads the source of the frames it traces (the answer server's among them).
    readable = ("kernel_guard.py", SANDBOX_FILE, "answer_server.py", "crossing.py")
    allowed = _allowed_roots() + tuple(os.path.join(here, name) for name in readable)
    guard = Guard(log_path, roots, allowed, os.path.realpath(os.getcwd()))  # opens its log first
    private_tmp = os.environ.pop(TMP_VARIABLE, "")
    socket_dir = os.environ.pop(SOCKETS_VARIABLE, "")
    guard.sandboxed = bool(private_tmp) and _confine(roots, allowed, private_tmp, socket_dir)
    sys.dont_write_bytecode = True
    sys.addaudithook(functools.partial(audit_hook, guard=guard))
    return None  # nothing of the guard stays reachable from the kernel's code
