"""The wire between the grader and a student's kernel: values cross as data, objects stay where they live.

Both processes hold a `Mirror`. Anything sent across is either data (plain
Python values of the exact builtin types, tensors and NumPy arrays as bytes
plus their autograd facts) or a handle to an object that stays on its side.
Tensors, lists and dicts that have crossed once stay paired with their copy on
the other side: when either side changes one (values, `.grad`,
`requires_grad`, `_version`, list items), the next message carries the change,
so a test reading `x.grad` after a call sees what the student's code left there.

The grader's own tensors are read-only to the kernel. A tensor the test made
(its handle starts with "g") keeps its values, layout, dtype and
requires_grad whatever the kernel reports, and so does every storage the
grader paired; a change the kernel makes to one is not applied, is recorded
in `Mirror.refused` (the grader flags the submission), and the next request
sets the kernel's copy back. Two kinds of change stay open, because honest
answers make them: `.grad` (backward() fills the gradient of a leaf the test
made, and clears or zeroes it: the storage of a tensor that is some paired
tensor's `.grad` is writable too), and the values of tensors the test
declared with `Mirror.allow_changes` (through `may_change_in_place` in the
course's checks), the parameters it hands to an update step. A test takes
its expected values from copies made before the call, never from a tensor it
declared, so nothing the kernel may write can move an expected value. Lists
and dicts the test made stay writable: the test's own functions, run in the
kernel, record into them.

Direction matters. From the grader to the kernel, no code of a test travels: a
function crosses only by name, when the kernel can import it (torch's own, or
the course's public module `autograd_checks`), and `functools.partial` of such a
function crosses with its arguments as data. Any other function is refused,
so a hidden test keeps its code, closures and constants on the grader's side.
From the kernel to the grader only data and handles travel: messages are read
with `torch.load(weights_only=True)` and every node is rebuilt as an exact
builtin type, a plain tensor or a `RemoteObject`, so nothing the student wrote
runs in the grader. (The kernel reads the grader's requests with pickle's own
reader: they are the grader's bytes, and nothing it could be made to read there
does more than the student's own code in that kernel.)

What arrives, for each kind of value an answer returns:
- a strided CPU tensor of any dtype (bool, the integers, float8 to float64,
  complex32 to complex128) as the same dtype, shape, strides and bytes; a
  view as a view on the same storage; a conjugate or negative view with its
  bit, so it reads the same values; an inference tensor (made under
  `torch.inference_mode()`) as a plain tensor, its version counted from 0
  since it has none; requires_grad, leafness, `.grad` and the name of the
  `grad_fn` as they were, with a stand-in for the graph that refuses backward;
- exact builtin lists and dicts as paired lists and dicts; a subclass of one
  (OrderedDict, defaultdict, a class of the student's) as a plain list or dict
  in its own order, and any tuple (a namedtuple, torch's return types) as a
  plain tuple; a set or frozenset, or a subclass, as a plain set or frozenset;
  a subclass of int, float, complex, str or bytes as its base value;
- a sparse, quantized or nested tensor, or one on another device, does not
  cross: the kernel refuses it with `ValueCannotCross`, which reaches the test
  as the student's error ("... cannot cross: return a dense tensor"), never
  as a broken channel; grading reads dense tensors only, and the course asks
  for nothing else. Any other object stays in the kernel behind a handle.
Nothing is rebuilt by importing a class the kernel names.

This file is loaded by path inside kernels (it imports only torch, numpy and
the standard library) and imported as part of gradekit in the grader.
"""

from __future__ import annotations

import builtins
import functools
import hashlib
import importlib
import io
import itertools
import keyword
import time
import types
import zipfile
from typing import TYPE_CHECKING, NamedTuple

import numpy
import torch

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping
    from typing import Any, NoReturn, TypeAlias

    Tree: TypeAlias = tuple[Any, ...]  # an encoded node, its Node tag first; what arrives is checked as it is read
    Facts: TypeAlias = dict[str, Any]  # a tensor's facts, as `_Encoder._tensor` writes them
    StorageNode: TypeAlias = tuple[Any, int, int]  # (storage handle, index of its bytes in the message or -1, bytes)
    Fingerprint: TypeAlias = bytes  # a copy of a storage's bytes (a _Snapshot), or their SHA-256
    Reply: TypeAlias = tuple[Any, ...]  # ("returned", value), ("failed", why) or ("raised", type, builtin, message)

TEXT_LIMIT = 1000  # characters of a student's exception message that cross
MAX_ELEMENTS = 2**27  # of one tensor rebuilt on the grader's side (a stride-0 view could claim any size)
# Caps on what one message may bring. The course's largest honest message carries raw_params' default
# weights (784 x 128 float64, 0.8 MB), and a whole notebook pairs a few megabytes: each cap leaves more
# than twenty times that, while a reply of a megabyte can no longer make the grader hold gigabytes.
MAX_MESSAGE_BYTES = 2**26  # the archive's entries, as declared, summed (each is stored, never inflated)
MAX_MESSAGE_STORAGES = 4096  # storages one message brings or changes (an honest call moves a few dozen)
MAX_MESSAGE_STORAGE_BYTES = 2**26  # bytes of the storages one message pairs anew or resizes
MAX_PAIRED_STORAGE_BYTES = 2**28  # bytes of every storage the other side paired, over a whole notebook
# Paired storages are compared with copies of their bytes while they add up to this, by hash beyond.
SNAPSHOT_BYTES = 2**26
NO_BYTES = numpy.empty(0, dtype=numpy.uint8)  # an empty storage's bytes (it has no memory to view)
MAX_ARCHIVE_ENTRIES = MAX_MESSAGE_STORAGES + 16  # the storages, the pickle, and torch's few bookkeeping records
# The message's structure (its pickle) is bounded apart from its tensors' bytes: each opcode of a
# pickle can make an object, so 64 MB of them would be tens of millions. An honest reply's structure
# is a few kilobytes (the largest, a list of a few thousand numbers, under 100 kB).
MAX_STRUCTURE_BYTES = 2**22
# Nodes the decoder may visit: a node reached twice (a shared subtree) counts twice, so a reply of
# tuples sharing their children cannot ask for 2^64 visits. The reference answers of all eleven
# notebooks, graded, read at most 87 nodes in one message and 945 over one notebook.
MAX_MESSAGE_NODES = 100_000
MAX_NOTEBOOK_NODES = 1_000_000
MAX_DEPTH = 48  # of nested nodes; an honest reply nests a handful deep
TOO_LARGE = "reply too large"  # how every budget's refusal begins, for the student and the TA
PLAIN_TYPES = (bool, int, float, complex, str, bytes, type(None))
DATA_BASES: tuple[type, ...] = (int, float, complex, str, bytes)  # what a subclass crosses as (bool has none)
PUBLIC_MODULE = "autograd_checks"  # the course's module shipped beside the notebooks
MODULES_BY_NAME = ("torch", "numpy", "math", "functools", "operator", "itertools", "collections")


class CrossingError(BaseException):
    """A value cannot cross, or a message is malformed; the message says why.

    Not an Exception: a test's `except Exception` (around a call it expects to
    raise) must not take a broken channel for the student's error.
    """


class ValueCannotCross(CrossingError):
    """The kernel's side refuses to send a value the wire does not carry; the message says why.

    The reply then says the student's code raised (`refusal_reply`): the value
    is what the student's code made, and the test says what was wrong with it.
    """


REFUSAL_TYPE = "ValueCannotCross"  # the type name a refusal reaches the grader under (a TypeError there)


class Node:
    """The wire's grammar: the tag each encoded node starts with, written by `_Encoder`, read by `_Decoder`.

    Tags are plain strings on the wire; every writer and reader names them here.
    """

    PLAIN = "v"  # (PLAIN, a value of PLAIN_TYPES)
    REF = "ref"  # (REF, handle): an object the other side already holds
    TENSOR = "tensor"  # (TENSOR, handle, facts): a view on a storage, with its autograd facts
    NDARRAY = "ndarray"  # (NDARRAY, (None, handle, facts)): an array, carried as the tensor sharing its bytes
    LIST = "list"  # (LIST, handle or None, [items])
    DICT = "dict"  # (DICT, handle or None, [[key, value], ...])
    TUPLE = "tuple"  # (TUPLE, [items])
    SET = "set"  # (SET, [items])
    FROZENSET = "frozenset"  # (FROZENSET, [items])
    NPSCALAR = "npscalar"  # (NPSCALAR, dtype string, value)
    DTYPE = "dtype"  # (DTYPE, torch's name without "torch.")
    SIZE = "size"  # (SIZE, [ints])
    DEVICE = "device"  # (DEVICE, name)
    SLICE = "slice"  # (SLICE, [start, stop, step] as nodes)
    RANGE = "range"  # (RANGE, [start, stop, step] as ints)
    ELLIPSIS = "ellipsis"  # (ELLIPSIS,)
    # Kernel to grader only: an object of the student's the grader holds by handle.
    HANDLE = "handle"  # (HANDLE, handle, type name)
    # Grader to kernel only: what the test calls, named so the kernel finds it itself.
    ANSWER = "answer"  # (ANSWER, the answer function's name)
    MODULE = "module"  # (MODULE, module name)
    GLOBAL = "global"  # (GLOBAL, module name, dotted attribute path)
    METHOD = "method"  # (METHOD, node of the object, method name)
    GETATTR = "getattr"  # (GETATTR,)
    PARTIAL = "partial"  # (PARTIAL, function node, args node, keywords node)


def refusal_reply(refusal: ValueCannotCross) -> tuple[str, str, str, str]:
    """The reply that reports a refused value as the student's error."""
    return ("raised", REFUSAL_TYPE, "TypeError", str(refusal)[:TEXT_LIMIT])


class RemoteObject:
    """An object that stays in the student's kernel; calls and attribute reads go there."""

    def __init__(self, mirror: Mirror, handle: str, type_name: str) -> None:
        object.__setattr__(self, "_mirror", mirror)
        object.__setattr__(self, "_handle", handle)
        object.__setattr__(self, "_type_name", type_name)

    @property
    def __name__(self) -> str:
        return self._type_name

    def __call__(self, *args: object, **kwargs: object) -> Any:
        return self._mirror.call(self, args, kwargs)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return self._mirror.call(_GETATTR, (self, name), {})

    def __repr__(self) -> str:
        return f"<{self._type_name} in the student's kernel>"


def call_message(mirror: Mirror, target: object, args: Iterable[object], kwargs: Mapping[str, object]) -> bytes:
    """Grader side: the request to run `target(*args, **kwargs)` in the kernel."""
    return mirror.outgoing(lambda encoder: encoder.encode((target, tuple(args), tuple(kwargs.items()))))


def checked_reply(reply: Any) -> Reply:
    """The kernel's decoded reply, if it has one of the three shapes `answer_server.respond` makes."""
    kind = reply[0] if isinstance(reply, tuple) and reply else None
    if (
        (kind == "returned" and len(reply) == 2)
        or (kind == "failed" and len(reply) == 2)
        or (kind == "raised" and len(reply) == 4 and all(isinstance(part, str) for part in reply[1:]))
    ):
        return reply
    raise CrossingError("the kernel's reply has the wrong shape")


def result_of(reply: Reply) -> Any:
    """What a checked reply means on the grader's side: the value, the student's error, or a broken call."""
    if reply[0] == "returned":
        return reply[1]
    if reply[0] == "raised":
        raise raised_in_student_process(*reply[1:])
    raise CrossingError(f"the kernel could not answer: {str(reply[1])[:300]}")


class _Getattr:
    """Marker target: read an attribute of a kernel object."""


_GETATTR = _Getattr()


def _builtin_exception(error: BaseException) -> str:
    for klass in type(error).__mro__:
        if klass.__module__ == "builtins" and issubclass(klass, BaseException):
            return klass.__name__
    return "Exception"


def _identifier(name: object, fallback: str) -> str:
    name = str(name)[:80]
    return name if name.isidentifier() and not keyword.iskeyword(name) else fallback


# The names of the checks' verdicts (autograd_checks.Diagnosis and its subclass Forgery). No step
# of a check that runs in the kernel raises one, so an exception of that name from the kernel is
# the student's own class: it crosses under its built-in base's name, never read as a check's words.
KIT_VERDICT_NAMES = frozenset({"Diagnosis", "Forgery"})


def raised_in_student_process(type_name: str, builtin_name: str, message: str) -> Exception:
    """The student's exception rebuilt on the grader's side: its type name and message only."""
    base = getattr(builtins, builtin_name, Exception)
    if not (isinstance(base, type) and issubclass(base, Exception)):
        base = Exception
    name = _identifier(type_name, base.__name__)
    if name in KIT_VERDICT_NAMES:
        name = base.__name__
    klass = base if name == base.__name__ else type(name, (base,), {"__module__": "student"})
    error = klass(message)
    error.raised_in_student_process = True
    return error


def _storage_bytes(storage: torch.UntypedStorage) -> torch.Tensor:
    return torch.empty(0, dtype=torch.uint8).set_(storage, 0, (storage.nbytes(),), (1,))


def _version_of(tensor: torch.Tensor) -> int:
    """The tensor's version counter; an inference tensor has none, and counts as 0."""
    return 0 if tensor.is_inference() else tensor._version


def _not_carried(tensor: torch.Tensor) -> str | None:
    """Why the wire does not carry `tensor`'s values, or None when it does (a dense CPU tensor)."""
    if tensor.is_cpu and tensor.layout == torch.strided and not (tensor.is_quantized or tensor.is_nested):
        return None  # every scan asks this of every paired tensor: `is_cpu` is a sixth of `device`'s cost
    if tensor.is_quantized:
        return f"a quantized tensor ({tensor.dtype})"
    if tensor.is_nested:
        return "a nested tensor"
    if tensor.layout != torch.strided:
        return f"a tensor of layout {tensor.layout}"
    if tensor.device.type != "cpu":
        return f"a tensor on the device {tensor.device}"
    return None


def _tensor_facts(tensor: torch.Tensor) -> tuple[object, ...] | None:
    """What a test may read of a tensor besides its values."""
    if _not_carried(tensor) is not None:  # never paired as a tensor; nothing to compare
        return None
    grad = tensor.grad if tensor.is_leaf or tensor.retains_grad else None
    return (
        tensor.untyped_storage().data_ptr(),
        tensor.storage_offset(),
        tuple(tensor.shape),
        tuple(tensor.stride()),
        tensor.requires_grad,
        tensor.is_leaf,
        id(grad) if grad is not None else None,
        _version_of(tensor),
        not tensor.is_leaf and tensor.retains_grad,
    )


class _Snapshot(bytes):
    """A copy of a paired storage's bytes, kept as its fingerprint (a SHA-256 digest is plain bytes)."""

    __slots__ = ()


class Mirror:
    """One side's half of the pairing; `side` is "grader" or "kernel"."""

    def __init__(
        self,
        side: str,
        call: Callable[[object, tuple[object, ...], dict[str, object]], object] | None = None,
        resolve_answer: Callable[[str], object] | None = None,
        trusts_messages: bool = False,
    ) -> None:
        self.side = side
        # Whether the other side's messages are read with pickle's own (C) reader rather than torch's
        # restricted one: only where they come from the grader, whom the reading side cannot doubt.
        self.trusts_messages = trusts_messages
        self._call = call  # grader: sends a request and returns the decoded reply
        self._resolve_answer = resolve_answer  # kernel: answer name -> the student's object
        self._numbers = itertools.count()
        self.objects: dict[str, Any] = {}  # handle -> object on this side (kept alive while the notebook runs)
        self.handles: dict[int, str] = {}  # id(object) -> handle
        self.storages: dict[str, torch.UntypedStorage] = {}  # storage handle -> UntypedStorage on this side
        self.storage_handles: dict[int, str] = {}  # address of a storage's first byte -> storage handle
        # storage handle -> fingerprint of the content both sides agree on (None: the kernel's copy is not it)
        self.storage_digests: dict[str, Fingerprint | None] = {}
        # handle -> the facts (tensors) or item keys (lists, dicts) both sides agree on
        self.agreed: dict[str, object] = {}
        # handle of a NumPy array -> a tensor sharing its memory (kept for its storage)
        self.array_tensors: dict[str, torch.Tensor] = {}
        # handle of a tensor (or array) -> the handle of the storage its bytes are in
        self.tensor_storage: dict[str, str] = {}
        # storage handle -> ((address, size), a NumPy view of its bytes)
        self.storage_views: dict[str, tuple[tuple[int, int], numpy.ndarray]] = {}
        # grader: id -> a tensor of the test's that the kernel may change in place
        self.changeable: dict[int, torch.Tensor] = {}
        self.refused: list[str] = []  # grader: the kernel's changes to the grader's own tensors that were not applied
        # grader: each refused change as (what, tensor handle, storage handle), beside refused
        self.refusals: list[tuple[str, str | None, str | None]] = []
        self.paired_bytes = 0  # bytes of the storages the other side's messages paired or grew
        self.decoded_nodes = 0  # nodes read from the other side's messages, over the whole notebook
        # time.monotonic() past which reading a message stops (set per call by the grader)
        self.deadline: float | None = None

    # ----- pairing -------------------------------------------------------------------------

    def _new_handle(self) -> str:
        return f"{self.side[0]}{next(self._numbers)}"

    def _pair(self, handle: str, obj: object) -> None:
        self.objects[handle] = obj
        self.handles[id(obj)] = handle

    def allow_changes(self, tensors: Iterable[object]) -> None:
        """Grader side: the kernel may change these tensors of the test's in place (see the module docstring)."""
        for tensor in tensors:
            if isinstance(tensor, torch.Tensor):
                self.changeable[id(tensor)] = tensor

    def grader_made(self, handle: object) -> bool:
        """True for a handle this grader made: its object belongs to the test."""
        return self.side == "grader" and str(handle).startswith("g")

    def writable(self) -> tuple[set[str], set[str]]:
        """(tensor handles, storage handles) of the grader's own that the kernel may change right now."""
        tensors = list(self.changeable.values())
        for obj in list(self.objects.values()):
            if isinstance(obj, torch.Tensor) and (obj.is_leaf or obj.retains_grad) and obj.grad is not None:
                tensors.append(obj.grad)
        handles = {handle for handle in map(self.handle_of, tensors) if handle is not None}
        return handles, {self.tensor_storage[h] for h in handles if h in self.tensor_storage}

    def handle_of(self, obj: object) -> str | None:
        """The handle `obj` is paired under, checked by identity: an id alone may belong to a dead object."""
        handle = self.handles.get(id(obj))
        return handle if handle is not None and self.objects.get(handle) is obj else None

    def pair_array(self, handle: str, array: numpy.ndarray, tensor: torch.Tensor) -> None:
        """A NumPy array is what the test holds; the tensor on its memory is how it crosses."""
        for stale in [key for key, paired in self.handles.items() if paired == handle]:
            del self.handles[stale]
        self._pair(handle, array)
        self.array_tensors[handle] = tensor

    # ----- messages ------------------------------------------------------------------------

    def dumps(self, tree: object, storages: list[torch.Tensor]) -> bytes:
        buffer = io.BytesIO()
        torch.save({"tree": tree, "storages": storages}, buffer)
        return buffer.getvalue()

    @staticmethod
    def loads(data: bytes, trusted: bool = False) -> tuple[Any, list[Any]]:
        _check_archive(data)
        message = torch.load(io.BytesIO(data), weights_only=not trusted)
        if not isinstance(message, dict) or set(message) != {"tree", "storages"}:
            raise CrossingError("the message has the wrong shape")
        if not isinstance(message["storages"], list) or len(message["storages"]) > MAX_MESSAGE_STORAGES:
            raise CrossingError(f"a message may bring at most {MAX_MESSAGE_STORAGES} storages")
        return message["tree"], message["storages"]

    def outgoing(self, build: Callable[[_Encoder], object]) -> bytes:
        """Encode `build(encoder)` with this side's pending changes first; returns bytes.

        Only this scan looks at every paired object: what it saw is what both
        sides agree on once the message is read, plus what the message paired anew.
        """
        encoder = _Encoder(self)
        paired_before = (set(self.objects), set(self.storages))
        try:
            updates = encoder.changes()
            tree = build(encoder)
            data = self.dumps({"updates": updates, "body": tree}, encoder.storages)
        except BaseException:  # nothing was sent: what this message paired is unknown to the other side
            self._forget_all_but(*paired_before)
            raise
        self.agreed.update(encoder.seen_state)
        self.storage_digests.update(encoder.seen_digests)
        self.agree(set(self.objects) - set(encoder.seen_state), set(self.storages) - set(encoder.seen_digests))
        return data

    def _forget_all_but(self, handles: set[str], storage_handles: set[str]) -> None:
        """Unpair every object and storage paired since `handles` and `storage_handles` were the whole set."""
        for handle in set(self.objects) - handles:
            obj = self.objects.pop(handle)
            if self.handles.get(id(obj)) == handle:
                del self.handles[id(obj)]
            self.array_tensors.pop(handle, None)
            self.tensor_storage.pop(handle, None)
        for sh in set(self.storages) - storage_handles:
            storage = self.storages.pop(sh)
            if storage.nbytes() and self.storage_handles.get(storage.data_ptr()) == sh:
                del self.storage_handles[storage.data_ptr()]
            self.storage_views.pop(sh, None)

    def incoming(self, data: bytes) -> Any:
        """Decode a message made by `outgoing` on the other side: apply its changes, return its body.

        Whatever goes wrong while reading is a CrossingError, never an error a
        test could take for the student's own.
        """
        try:
            tree, storages = self.loads(data, trusted=self.trusts_messages)
            decoder = _Decoder(self, storages)
            for update in tree["updates"]:
                decoder.decode(update)
            body = decoder.decode(tree["body"])
        except CrossingError:
            raise
        except Exception as error:
            raise CrossingError(f"a message could not be read ({type(error).__name__}: {str(error)[:200]})") from None
        # Nothing else ran here since this side last agreed: only what the message touched moved.
        self.agree(decoder.touched | (set(self.objects) - set(self.agreed)), decoder.touched_storages)
        for handle in decoder.refused_handles:  # the kernel's copy differs: the next request sets it back
            self.agreed[handle] = None
        for sh in decoder.refused_storages:
            self.storage_digests[sh] = None
        return body

    def state_of(self, handle: str) -> object:
        """What a later scan compares: a tensor's facts, a container's item keys, or None."""
        obj = self.array_tensors.get(handle, self.objects[handle])
        if isinstance(obj, torch.Tensor):
            return _tensor_facts(obj)
        if isinstance(obj, (list, dict)):
            return _container_key(self, obj)
        return None

    def agree(self, handles: Iterable[str], storage_handles: Iterable[str]) -> None:
        """Record the current state of these paired objects and storages as the state both sides share."""
        for handle in handles:
            if handle in self.objects:
                self.agreed[handle] = self.state_of(handle)
        copies = self.copies_allowed()
        for sh in storage_handles:
            if sh in self.storages:  # kept as it was where the bytes did not move: no new copy
                self.storage_digests[sh] = self.fingerprint(sh, self.storage_digests.get(sh), copies)

    def fingerprint(self, sh: str, agreed: Fingerprint | None = None, copies: bool = True) -> Fingerprint:
        """What a later scan compares a paired storage's bytes with; `agreed` itself while they still match it.

        A copy of the bytes when `copies` (comparing reads memory several times faster than
        hashing), else their SHA-256. An agreed fingerprint of either kind is checked as it is.
        """
        view = self._bytes_view(sh)
        if isinstance(agreed, _Snapshot):
            current = view.tobytes()  # compared as bytes: a tenth of array_equal's cost on a small storage
            if current == agreed:
                return agreed
            return _Snapshot(current) if copies else hashlib.sha256(current).digest()
        digest = None
        if agreed is not None:
            digest = hashlib.sha256(view.data).digest()
            if digest == agreed:
                return agreed
        if copies:
            return _Snapshot(view)
        return digest or hashlib.sha256(view.data).digest()

    def copies_allowed(self) -> bool:
        """Whether fingerprints may be copies: while every storage this side pairs adds up to SNAPSHOT_BYTES at most."""
        return sum(storage.nbytes() for storage in self.storages.values()) <= SNAPSHOT_BYTES

    def _bytes_view(self, sh: str) -> numpy.ndarray:
        """A paired storage's bytes, through a view kept while the memory stays put."""
        storage = self.storages[sh]
        place = (storage.data_ptr(), storage.nbytes())
        if not place[1]:
            return NO_BYTES
        cached = self.storage_views.get(sh)
        if cached is None or cached[0] != place:  # new, or resized: the old view would read freed memory
            cached = self.storage_views[sh] = (place, _storage_bytes(storage).numpy())
        return cached[1]

    def register_storage(self, sh: str, storage: torch.UntypedStorage) -> None:
        self.storages[sh] = storage
        if storage.nbytes():
            self.storage_handles[storage.data_ptr()] = sh

    def locate(self, storage: torch.UntypedStorage) -> tuple[str, int] | None:
        """(storage handle, byte offset) of the paired storage that holds `storage`'s bytes, or None.

        Two storage objects can hold the same memory (a NumPy view of a
        tensor): what counts is where the bytes are.
        """
        start, size = storage.data_ptr(), storage.nbytes()
        if not size:
            return None
        if start in self.storage_handles:
            sh = self.storage_handles[start]
            if self.storages[sh].nbytes() >= size:
                return sh, 0
        for sh, paired in self.storages.items():
            base = paired.data_ptr()
            if paired.nbytes() and base <= start and start + size <= base + paired.nbytes():
                return sh, start - base
        return None

    def call(self, target: object, args: tuple[object, ...], kwargs: dict[str, object]) -> Any:
        """Grader side: run `target(*args, **kwargs)` in the kernel and return its result here."""
        if self._call is None:
            raise CrossingError("only the grader's side calls into the other side")
        return self._call(target, args, kwargs)


def _check_archive(data: bytes) -> None:
    """Refuse a message whose archive would inflate, or declares more bytes than a message may hold.

    `torch.save` stores every entry as it is; `torch.load` would inflate a
    compressed one before anything else is checked. The archive's own
    directory is read from the bytes, without inflating anything.
    """
    try:
        entries = zipfile.ZipFile(io.BytesIO(data)).infolist()
    except (zipfile.BadZipFile, ValueError, OSError) as error:
        raise CrossingError(f"the message is not a readable archive ({error})") from None
    if len(entries) > MAX_ARCHIVE_ENTRIES:
        raise CrossingError(f"the message holds {len(entries)} entries, more than the {MAX_ARCHIVE_ENTRIES} allowed")
    declared = 0
    for entry in entries:
        if entry.compress_type != zipfile.ZIP_STORED:
            raise CrossingError(
                f"the message's entry {entry.filename[:80]!r} is compressed; only stored entries are read"
            )
        if entry.file_size != entry.compress_size:
            raise CrossingError(f"the message's entry {entry.filename[:80]!r} declares two different sizes")
        if entry.filename.endswith(".pkl") and entry.file_size > MAX_STRUCTURE_BYTES:
            raise CrossingError(
                f"{TOO_LARGE}: its structure declares {entry.file_size} bytes, more than the {MAX_STRUCTURE_BYTES} allowed"
            )
        declared += entry.file_size
    if declared > MAX_MESSAGE_BYTES:
        raise CrossingError(f"the message declares {declared} bytes, more than the {MAX_MESSAGE_BYTES} allowed")


def _container_key(mirror: Mirror, obj: list | dict) -> tuple[tuple[object, object], ...]:
    items = obj.items() if isinstance(obj, dict) else enumerate(obj)
    return tuple((_item_key(mirror, k), _item_key(mirror, v)) for k, v in items)


def _item_key(mirror: Mirror, value: object) -> tuple[object, ...]:
    if type(value) in PLAIN_TYPES:
        return (type(value).__name__, value)
    return ("id", id(value), mirror.handle_of(value))


class _Encoder:
    def __init__(self, mirror: Mirror) -> None:
        self.mirror = mirror
        self.storages: list[torch.Tensor] = []
        self.changed_storages: set[str] = set()  # paired storages whose bytes must travel in this message
        self.seen_state: dict[str, object] = {}  # handle -> its state as the scan saw it
        self.seen_digests: dict[str, Fingerprint] = {}  # storage handle -> its fingerprint as the scan saw it

    def changes(self) -> list[Tree]:
        """Nodes for every paired object this side changed since both sides last agreed."""
        mirror = self.mirror
        updates = []
        agreed = mirror.storage_digests
        copies = mirror.copies_allowed()
        self.seen_digests = {sh: mirror.fingerprint(sh, agreed.get(sh), copies) for sh in mirror.storages}
        # A fingerprint is the agreed one itself exactly when the bytes are unchanged.
        self.changed_storages = {sh for sh, seen in self.seen_digests.items() if seen is not agreed.get(sh)}
        for handle in list(mirror.objects):
            state = self.seen_state[handle] = mirror.state_of(handle)
            obj = mirror.array_tensors.get(handle, mirror.objects[handle])
            if isinstance(obj, torch.Tensor):
                if mirror.agreed.get(handle) != state or mirror.tensor_storage.get(handle) in self.changed_storages:
                    updates.append(self._tensor(obj, handle))
            elif isinstance(obj, (list, dict)) and mirror.agreed.get(handle) != state:
                updates.append(self._container(obj, handle))
        return updates

    def encode(self, value: object) -> Tree:
        kind = type(value)
        if kind in PLAIN_TYPES:
            return (Node.PLAIN, value)
        handle = self.mirror.handle_of(value)
        if handle is not None:  # paired: its changes, if any, travel in the message's updates
            return (Node.REF, handle)
        node = self._array_like(value)
        if node is None:
            node = self._builtin(value, kind)
        if node is not None:
            return node
        if self.mirror.side == "kernel":
            return self._kernel_other(value)
        return self._grader_other(value)

    def _array_like(self, value: object) -> Tree | None:
        """Tensors, arrays, NumPy scalars and torch's own descriptions of them; None for anything else."""
        if isinstance(value, numpy.ndarray):
            return self._ndarray(value)
        if isinstance(value, torch.Tensor):
            return self._tensor(value, None)
        if isinstance(value, numpy.generic):
            return (Node.NPSCALAR, value.dtype.str, value.item())
        if isinstance(value, torch.dtype):
            return (Node.DTYPE, str(value).removeprefix("torch."))
        if isinstance(value, torch.Size):
            return (Node.SIZE, [int(n) for n in value])
        if isinstance(value, torch.device):
            return (Node.DEVICE, str(value))
        return None

    def _builtin(self, value: object, kind: type) -> Tree | None:
        """Python's own containers and index values, of their exact types; None for anything else."""
        if isinstance(value, slice):
            return (Node.SLICE, [self.encode(value.start), self.encode(value.stop), self.encode(value.step)])
        if isinstance(value, range):
            return (Node.RANGE, [value.start, value.stop, value.step])
        if value is Ellipsis:
            return (Node.ELLIPSIS,)
        if isinstance(value, (list, dict)) and kind in (list, dict):
            return self._container(value, None)
        if isinstance(value, tuple) and kind is tuple:
            return (Node.TUPLE, [self.encode(item) for item in value])
        if isinstance(value, (set, frozenset)) and kind in (set, frozenset):
            return (Node.SET if kind is set else Node.FROZENSET, [self.encode(item) for item in value])
        return None

    # Tensors: a storage (bytes once, then by handle) and a view on it, with autograd facts.
    def _storage(self, tensor: torch.Tensor) -> tuple[StorageNode, int | torch.SymInt]:
        """(storage node, element offset of `tensor` in that storage); bytes travel once per change."""
        mirror = self.mirror
        storage = tensor.untyped_storage()
        found = mirror.locate(storage)
        if found is not None and found[1] % tensor.element_size() == 0:
            sh, byte_offset = found
        else:
            sh, byte_offset = mirror._new_handle(), 0
            mirror.register_storage(sh, storage)
            self.changed_storages.add(sh)
        paired = mirror.storages[sh]
        offset = tensor.storage_offset() + byte_offset // tensor.element_size()
        if sh not in self.changed_storages:
            return (sh, -1, paired.nbytes()), offset
        self.changed_storages.discard(sh)  # its bytes are in this message now
        self.storages.append(_storage_bytes(paired).clone())
        return (sh, len(self.storages) - 1, paired.nbytes()), offset

    def _tensor(self, tensor: torch.Tensor, handle: str | None) -> Tree:
        mirror = self.mirror
        not_carried = _not_carried(tensor)
        if not_carried is not None:
            if mirror.side == "kernel":
                raise ValueCannotCross(
                    f"the result is {not_carried}, which cannot cross to the grader: grading reads "
                    "dense CPU tensors only (return tensor.to_dense(), .dequantize() or .cpu() instead)"
                )
            return self._other(tensor)
        if handle is None:
            if mirror.side == "grader" and not tensor.is_leaf:
                raise CrossingError(
                    "a tensor with a graph built by the test cannot reach the student's kernel; "
                    "build it there with in_kernel(...)"
                )
            handle = mirror._new_handle()
            mirror._pair(handle, tensor)
        storage, offset = self._storage(tensor)
        mirror.tensor_storage[handle] = storage[0]
        grad = tensor.grad if tensor.is_leaf or tensor.retains_grad else None
        facts = {
            "storage": storage,
            "offset": offset,
            "size": list(tensor.shape),
            "stride": list(tensor.stride()),
            "dtype": str(tensor.dtype).removeprefix("torch."),
            "requires_grad": tensor.requires_grad,
            "leaf": tensor.is_leaf,
            "grad_fn": type(tensor.grad_fn).__name__ if tensor.grad_fn is not None else None,
            "version": _version_of(tensor),
            "conj": tensor.is_conj(),
            "neg": tensor.is_neg(),
            "kind": _tensor_kind(tensor),
            "retains_grad": bool(not tensor.is_leaf and tensor.retains_grad),
        }
        facts["grad"] = self.encode(grad) if grad is not None else (Node.PLAIN, None)
        return (Node.TENSOR, handle, facts)

    def _ndarray(self, array: numpy.ndarray) -> Tree:
        try:
            tensor = torch.from_numpy(array)
        except (TypeError, ValueError):
            return self._other(array)
        node = self._tensor(tensor, None)
        self.mirror.pair_array(node[1], array, tensor)
        return (Node.NDARRAY, node)

    def _container(self, value: list | dict, handle: str | None) -> Tree:
        mirror = self.mirror
        if handle is None:
            handle = mirror._new_handle()
            mirror._pair(handle, value)
        if isinstance(value, dict):
            return (Node.DICT, handle, [[self.encode(k), self.encode(v)] for k, v in value.items()])
        return (Node.LIST, handle, [self.encode(item) for item in value])

    def _kernel_other(self, value: object) -> Tree:
        """Kernel side: a subclass of a data type crosses as its base value; anything else stays here."""
        for base in DATA_BASES:
            if isinstance(value, base):
                return (Node.PLAIN, base(value))
        if isinstance(value, tuple):
            return (Node.TUPLE, [self.encode(item) for item in tuple.__iter__(value)])
        if isinstance(value, list):
            return (Node.LIST, None, [self.encode(item) for item in list.__iter__(value)])
        if isinstance(value, dict):
            return (Node.DICT, None, [[self.encode(k), self.encode(v)] for k, v in dict.items(value)])
        if isinstance(value, frozenset):
            return (Node.FROZENSET, [self.encode(item) for item in frozenset.__iter__(value)])
        if isinstance(value, set):
            return (Node.SET, [self.encode(item) for item in set.__iter__(value)])
        return self._other(value)

    def _other(self, value: object) -> Tree:
        mirror = self.mirror
        if mirror.side != "kernel":
            raise CrossingError(
                f"a {type(value).__name__} cannot reach the student's kernel; build it there with in_kernel(...)"
            )
        handle = mirror.handle_of(value)
        if handle is None:
            handle = mirror._new_handle()
            mirror._pair(handle, value)
        return (Node.HANDLE, handle, type(value).__name__)

    def _grader_other(self, value: object) -> Tree:
        """Grader side: answers, kernel objects, modules, and functions the kernel can import by name."""
        if isinstance(value, RemoteObject):
            return (Node.REF, value._handle)
        if isinstance(value, _Getattr):
            return (Node.GETATTR,)
        answer_name = getattr(value, "_kit_answer_name", None)
        if answer_name is not None and type(value).__name__ == "RemoteAnswer":
            return (Node.ANSWER, answer_name)
        if isinstance(value, types.ModuleType):
            return (Node.MODULE, value.__name__)
        if isinstance(value, types.MethodType) and self.mirror.handle_of(value.__self__) is not None:
            return (Node.METHOD, self.encode(value.__self__), value.__func__.__name__)
        if (
            isinstance(value, (types.BuiltinFunctionType, types.BuiltinMethodType))
            and isinstance(getattr(value, "__self__", None), (torch.Tensor,))
            and self.mirror.handle_of(value.__self__) is not None
        ):
            return (Node.METHOD, self.encode(value.__self__), value.__name__)
        public = _public_name(value)
        if public is not None:
            return (Node.GLOBAL, PUBLIC_MODULE, public)
        path = _import_path(value) if callable(value) else None
        if path is not None:
            return (Node.GLOBAL, *path)
        if isinstance(value, functools.partial):
            return (
                Node.PARTIAL,
                self.encode(value.func),
                self.encode(tuple(value.args)),
                self.encode(dict(value.keywords)),
            )
        if callable(value):
            raise CrossingError(function_refusal(value))
        return self._other(value)  # refused: the grader sends no other object


class _RequestCheck(_Encoder):
    """Grader side: walks a request as `_Encoder` does and refuses the data it would refuse, copying no bytes.

    Tensors are judged as the wire judges them (a graph the test built, a
    layout the wire does not carry). Functions and other objects are passed
    over: whoever uses this judges functions by its own rule (the in-process
    check knows where a function's code lives), and an object it did not see
    come back from the student's side may still be one (`model.parameters()`
    of a model built there). A partial is still opened, for the data it carries.
    """

    def _storage(self, tensor: torch.Tensor) -> tuple[StorageNode, int | torch.SymInt]:
        return ("unsent", -1, 0), tensor.storage_offset()

    def _grader_other(self, value: object) -> Tree:
        if callable(value) and not isinstance(value, functools.partial):
            return ("judged elsewhere",)
        return super()._grader_other(value)

    def _other(self, value: object) -> Tree:
        if isinstance(value, torch.Tensor):
            return super()._other(value)
        return ("judged elsewhere",)


def refuse_unsendable(mirror: Mirror, value: object) -> None:
    """Grader side: raise the CrossingError that sending `value` to the kernel would raise, or return.

    `mirror` holds, paired, what is already on the kernel's side (sent as
    handles); what this walk meets for the first time is paired too, judged once.
    """
    _RequestCheck(mirror).encode(value)


def delivered(value: object) -> Any:
    """Kernel side to grader side: `value` after the round trip an answer's result makes, in fresh mirrors.

    The same encoder and decoder as a reply's, without the archive between
    them (torch.save of the tree, read back with weights_only): that layer
    carries any tree the encoder makes, and guards only against a kernel's
    forged bytes. A value the kernel refuses comes out as the error the
    grader would rebuild (`refusal_reply`), raised; a malformed one as a
    CrossingError.
    """
    encoder = _Encoder(Mirror("kernel"))
    try:
        tree = encoder.encode(("returned", value))
    except ValueCannotCross as refusal:
        raise raised_in_student_process(*refusal_reply(refusal)[1:]) from None
    try:
        reply = _Decoder(Mirror("grader"), encoder.storages).decode(tree)
    except CrossingError:
        raise
    except Exception as error:
        raise CrossingError(f"a reply could not be read ({type(error).__name__}: {str(error)[:200]})") from None
    return result_of(checked_reply(reply))


def crosses_by_name(value: object) -> bool:
    """True when the kernel finds `value` by importing it: from the course's public module or a library."""
    return _public_name(value) is not None or (callable(value) and _import_path(value) is not None)


def _public_name(value: object) -> str | None:
    """The name under which the course's public module holds `value`, or None."""
    name = getattr(value, "__qualname__", None)
    if getattr(value, "__module__", None) != PUBLIC_MODULE or not isinstance(name, str) or "<" in name:
        return None  # a function made inside another one has no name the kernel can look up
    return name


def function_refusal(function: object) -> str:
    """Why a test's own function cannot reach the kernel, and where to put it instead."""
    name = getattr(function, "__name__", None) or type(function).__name__
    return (
        f"the test's function {str(name)[:80]!r} cannot reach the student's kernel: no test code crosses. "
        f"Define it in the course's public module {PUBLIC_MODULE}.py and pass it by name, with data only"
    )


def _tensor_kind(tensor: torch.Tensor) -> str:
    if type(tensor) is torch.Tensor:
        return "Tensor"
    if type(tensor) is torch.nn.Parameter:
        return "Parameter"
    return "subclass:" + type(tensor).__name__


def _import_path(value: object) -> tuple[str, str] | None:
    """(module, dotted name) under which the kernel finds `value` by importing, or None."""
    module = getattr(value, "__module__", None) or ""
    if module.split(".")[0] not in MODULES_BY_NAME + ("builtins", "_operator"):
        return None
    try:
        found_module = importlib.import_module(module)
    except ImportError:
        return None
    for name in (getattr(value, "__qualname__", ""), getattr(value, "__name__", "")):
        found = found_module
        try:
            for part in name.split("."):
                found = getattr(found, part)
        except AttributeError:
            continue
        if found is value:
            return (module, name)
    return None


class _Walk:
    """The decoder's budget: nodes visited (per message and over the notebook), depth, and the call's time.

    Counted as the walk goes, so the first excess stops it; `mirror.deadline`
    (a `time.monotonic()` value the grader sets per call) is looked at every
    `TIME_EVERY` nodes, so decoding never runs past the call's own limit.
    """

    TIME_EVERY = 1024

    def __init__(self, mirror: Mirror) -> None:
        self.mirror, self.nodes, self.depth = mirror, 0, 0

    def enter(self) -> None:
        self.nodes += 1
        self.depth += 1
        self.mirror.decoded_nodes += 1
        if self.depth > MAX_DEPTH:
            raise CrossingError(f"{TOO_LARGE}: its values nest more than {MAX_DEPTH} deep")
        if self.nodes > MAX_MESSAGE_NODES:
            raise CrossingError(f"{TOO_LARGE}: it asks for more than {MAX_MESSAGE_NODES} values to be read")
        if self.mirror.decoded_nodes > MAX_NOTEBOOK_NODES:
            raise CrossingError(f"{TOO_LARGE}: this notebook's replies passed {MAX_NOTEBOOK_NODES} values")
        if self.nodes % self.TIME_EVERY == 0 and self.mirror.deadline is not None:
            if time.monotonic() > self.mirror.deadline:
                raise CrossingError(f"{TOO_LARGE}: reading it ran past the call's time limit")

    def leave(self) -> None:
        self.depth -= 1


class _View(NamedTuple):
    """Where a message says a tensor's values lie: its storage, and the dtype, shape, strides and offset read there."""

    storage: torch.UntypedStorage
    dtype: torch.dtype
    size: list[int]
    stride: list[int]
    offset: int


class _Decoder:
    def __init__(self, mirror: Mirror, storages: list[Any]) -> None:
        self.mirror = mirror
        self.walk = _Walk(mirror)
        self.storage_data = storages
        self.touched: set[str] = set()  # handles this message created or changed
        self.touched_storages: set[str] = set()
        self.brought_bytes = 0  # bytes of the storages this message paired anew or grew
        self.refused_handles: set[str] = set()  # the grader's own tensors whose change was not applied
        self.refused_storages: set[str] = set()
        self.writable_handles, self.writable_storages = mirror.writable() if mirror.side == "grader" else (set(), set())

    def _refuse(self, what: str, handle: str | None = None, sh: str | None = None) -> None:
        """Record a change to the grader's own objects that is not applied."""
        self.mirror.refused.append(what)
        self.mirror.refusals.append((what, handle, sh))
        if handle is not None:
            self.refused_handles.add(handle)
        if sh is not None:
            self.refused_storages.add(sh)

    def _own(self, handle: object, known: object, kind: type) -> None:
        """A grader handle in the kernel's message must name an object of `kind` the grader gave it."""
        if self.mirror.grader_made(handle) and not isinstance(known, kind):
            raise CrossingError(
                f"the message names {str(handle)[:20]!r}, which the grader never sent as a {kind.__name__}"
            )

    def decode(self, node: Any) -> Any:
        self.walk.enter()
        try:
            return self._decode_node(node)
        finally:
            self.walk.leave()

    def _decode_node(self, node: Any) -> Any:
        if not isinstance(node, tuple) or not node or not isinstance(node[0], str):
            raise CrossingError("a node of the message is malformed")
        side = self.mirror.side
        read = _READERS[side].get(node[0])
        if read is None:
            raise CrossingError(
                f"unknown node {node[0]!r}" if side == "kernel" else f"the grader does not accept {node[0]!r} nodes"
            )
        return read(self, node)

    # Both sides: values.
    def _plain(self, node: Tree) -> object:
        value = node[1]
        if type(value) not in PLAIN_TYPES:
            raise CrossingError("a plain value has the wrong type")
        return value

    def _ref(self, node: Tree) -> object:
        if node[1] not in self.mirror.objects:
            raise CrossingError(f"unknown handle {node[1]!r}")
        return self.mirror.objects[node[1]]

    def _tensor_node(self, node: Tree) -> torch.Tensor:
        return self._tensor(node[1], node[2])

    def _ndarray(self, node: Tree) -> numpy.ndarray:
        mirror = self.mirror
        _, handle, facts = node[1]
        known = mirror.objects.get(handle)
        if isinstance(known, numpy.ndarray):  # its bytes live in a paired storage
            self._storage(facts["storage"])
            self.touched.add(handle)
            return known
        tensor = self._tensor(handle, facts).detach()
        array = tensor.numpy()
        mirror.pair_array(handle, array, tensor)
        return array

    def _list(self, node: Tree) -> list | dict:
        return self._container(node[1], node[2], is_dict=False)

    def _dict(self, node: Tree) -> list | dict:
        return self._container(node[1], node[2], is_dict=True)

    def _tuple(self, node: Tree) -> tuple:
        return tuple(self.decode(item) for item in node[1])

    def _set(self, node: Tree) -> set | frozenset:
        return (set if node[0] == Node.SET else frozenset)(self.decode(item) for item in node[1])

    def _npscalar(self, node: Tree) -> numpy.generic:
        dtype = numpy.dtype(str(node[1]))
        if dtype.kind not in "biufc?" or dtype.fields or dtype.shape:
            raise CrossingError("a NumPy scalar of an unexpected kind")
        return dtype.type(node[2])

    def _dtype_node(self, node: Tree) -> torch.dtype:
        return _dtype(node[1])

    def _size(self, node: Tree) -> torch.Size:
        return torch.Size([int(n) for n in node[1]])

    def _device(self, node: Tree) -> torch.device:
        return torch.device(str(node[1]))

    def _slice(self, node: Tree) -> slice:
        return slice(*(self.decode(part) for part in node[1]))

    def _range(self, node: Tree) -> range:
        return range(*(int(part) for part in node[1]))

    def _ellipsis(self, node: Tree) -> types.EllipsisType:
        return Ellipsis

    # The grader's side only: the student's objects, by handle.
    def _handle(self, node: Tree) -> object:
        mirror = self.mirror
        known = mirror.objects.get(node[1])
        if known is None:
            known = RemoteObject(mirror, str(node[1]), str(node[2])[:80])
            mirror._pair(node[1], known)
        return known

    # The kernel's side only: what the test calls, found by name.
    def _answer(self, node: Tree) -> object:
        if self.mirror._resolve_answer is None:
            raise CrossingError("this side has no answers to call")
        return self.mirror._resolve_answer(node[1])

    def _module(self, node: Tree) -> types.ModuleType:
        return importlib.import_module(node[1])

    def _global(self, node: Tree) -> object:
        found = importlib.import_module(node[1])
        for part in node[2].split("."):
            found = getattr(found, part)
        return found

    def _method(self, node: Tree) -> object:
        return getattr(self.decode(node[1]), node[2])

    def _getattr(self, node: Tree) -> Callable[..., object]:
        return getattr

    def _partial(self, node: Tree) -> functools.partial:
        return functools.partial(self.decode(node[1]), *self.decode(node[2]), **self.decode(node[3]))

    def _storage(self, spec: StorageNode) -> torch.UntypedStorage:
        mirror = self.mirror
        sh, index, nbytes = spec
        nbytes = int(nbytes)
        self.touched_storages.add(sh)
        if len(self.touched_storages) > MAX_MESSAGE_STORAGES:
            raise CrossingError(f"a message may bring at most {MAX_MESSAGE_STORAGES} storages")
        storage = mirror.storages.get(sh)
        self._own(sh, storage, torch.UntypedStorage)
        data = self.storage_data[index] if index >= 0 else None
        if (
            nbytes < 0
            or ((storage is None or storage.nbytes() != nbytes) and data is None)
            or (data is not None and not _plain_bytes(data, nbytes))
        ):
            raise CrossingError("a storage's bytes do not match its size")
        if storage is not None and mirror.grader_made(sh) and sh not in self.writable_storages:  # (_own: never None)
            if storage.nbytes() != nbytes or (data is not None and not torch.equal(_storage_bytes(storage), data)):
                self._refuse("the values of a tensor the test made", sh=sh)
            return storage
        self._count(nbytes - (storage.nbytes() if storage is not None else 0))
        if storage is None:
            storage = torch.UntypedStorage(nbytes)
            mirror.register_storage(sh, storage)
        elif storage.nbytes() != nbytes:
            storage.resize_(nbytes)
            mirror.register_storage(sh, storage)  # its bytes may have moved
        if data is not None:
            _storage_bytes(storage).copy_(data)
        return storage

    def _count(self, growth: int) -> None:
        """Count bytes a message pairs anew, against the caps of one message and of the whole notebook."""
        if growth <= 0:
            return
        self.brought_bytes += growth
        self.mirror.paired_bytes += growth
        if self.brought_bytes > MAX_MESSAGE_STORAGE_BYTES:
            raise CrossingError(f"a message may bring at most {MAX_MESSAGE_STORAGE_BYTES} bytes of tensors")
        if self.mirror.paired_bytes > MAX_PAIRED_STORAGE_BYTES:
            raise CrossingError(f"the tensors sent over this notebook passed {MAX_PAIRED_STORAGE_BYTES} bytes")

    def _tensor(self, handle: str, facts: Facts) -> torch.Tensor:
        mirror = self.mirror
        storage = self._storage(facts["storage"])
        self.touched.add(handle)
        dtype = _dtype(facts["dtype"])
        if len(facts["size"]) > 16 or len(facts["stride"]) != len(facts["size"]):
            raise CrossingError(f"a tensor of {len(facts['size'])} dimensions is not accepted")
        size, stride, offset = [int(n) for n in facts["size"]], [int(n) for n in facts["stride"]], int(facts["offset"])
        if any(n < 0 for n in size) or _product(size) > MAX_ELEMENTS:
            raise CrossingError(f"a tensor of shape {size[:16]} is not accepted")
        known = mirror.objects.get(handle)
        self._own(handle, known, torch.Tensor)
        if isinstance(known, torch.Tensor):
            if mirror.grader_made(handle) and handle not in self.writable_handles:
                self._keep(known, handle, _View(storage, dtype, size, stride, offset), facts)
                return known
            mirror.tensor_storage[handle] = facts["storage"][0]
            self._update(known, handle, _View(storage, dtype, size, stride, offset), facts)
            return known
        mirror.tensor_storage[handle] = facts["storage"][0]
        tensor = torch.empty(0, dtype=dtype).set_(storage, offset, size, stride)
        _set_version(tensor, facts["version"])  # before any view is taken of it: a view records its base's version
        tensor = _with_view_bits(tensor, facts)
        tensor = self._with_autograd(tensor, facts)
        mirror._pair(handle, tensor)
        self._grad(tensor, handle, facts)
        return tensor

    def _with_autograd(self, tensor: torch.Tensor, facts: Facts) -> torch.Tensor:
        kind = str(facts["kind"])
        requires_grad = bool(facts["requires_grad"])
        if kind == "Parameter":
            return torch.nn.Parameter(tensor, requires_grad=requires_grad)
        if requires_grad and not facts["leaf"]:
            tensor = _stand_in_for_graph(tensor, facts["grad_fn"])
            if facts.get("retains_grad"):  # so that the gradient the kernel kept can be set here too
                tensor.retain_grad()
        elif requires_grad:
            tensor.requires_grad_()
        if kind.startswith("subclass:"):
            name = _identifier(kind.removeprefix("subclass:"), "TensorSubclass")
            tensor = torch.Tensor._make_subclass(
                type(name, (torch.Tensor,), {"__module__": "student"}), tensor, requires_grad
            )
        return tensor

    def _update(self, tensor: torch.Tensor, handle: str, view: _View, facts: Facts) -> None:
        storage, dtype, size, stride, offset = view
        moved = tensor.untyped_storage().data_ptr() != storage.data_ptr()  # `p.data = ...` swaps the storage
        if tensor.dtype == dtype and (
            moved or (list(tensor.shape), list(tensor.stride()), tensor.storage_offset()) != (size, stride, offset)
        ):
            with torch.no_grad():
                try:
                    tensor.set_(storage, offset, size, stride)
                except RuntimeError:
                    pass
        if tensor.is_leaf and tensor.requires_grad != bool(facts["requires_grad"]):
            tensor.requires_grad_(bool(facts["requires_grad"]))
        if not tensor.is_leaf and facts.get("retains_grad") and not tensor.retains_grad:
            tensor.retain_grad()
        self._grad(tensor, handle, facts)
        if tensor.is_leaf:  # a stand-in for a kernel graph would take a new version for an in-place change
            _set_version(tensor, facts["version"])

    def _keep(self, tensor: torch.Tensor, handle: str, view: _View, facts: Facts) -> None:
        """A read-only tensor of the test's: only its `.grad` follows the kernel; any other change is refused."""
        storage, dtype, size, stride, offset = view
        place = (
            tensor.untyped_storage().data_ptr(),
            list(tensor.shape),
            list(tensor.stride()),
            tensor.storage_offset(),
        )
        changed = [
            what
            for what, differs in (
                ("storage, shape or strides", place != (storage.data_ptr(), size, stride, offset)),
                ("dtype", tensor.dtype != dtype),
                ("requires_grad", tensor.requires_grad != bool(facts["requires_grad"])),
            )
            if differs
        ]
        if changed:
            self._refuse(f"the {' and '.join(changed)} of a tensor the test made", handle=handle)
        if not tensor.is_leaf and facts.get("retains_grad") and not tensor.retains_grad:
            tensor.retain_grad()
        self._grad(tensor, handle, facts)

    def _grad(self, tensor: torch.Tensor, handle: str, facts: Facts) -> None:
        grad = self.decode(facts["grad"])
        if not (tensor.is_leaf or tensor.retains_grad) or grad is tensor.grad:
            return
        made_by_test = self.mirror.handle_of(grad) if grad is not None else None
        if self.mirror.grader_made(made_by_test) and made_by_test not in self.writable_handles:
            # A gradient's bytes are writable: a read-only tensor must not become one.
            self._refuse("a tensor the test made into a gradient", handle=handle)
            return
        try:
            tensor.grad = grad
        except (RuntimeError, TypeError):
            pass

    def _container(self, handle: str | None, items: list[Any], is_dict: bool) -> list | dict:
        mirror = self.mirror
        known = mirror.objects.get(handle) if handle is not None else None
        self._own(handle, known, dict if is_dict else list)
        if handle is not None:
            self.touched.add(handle)
        fresh: dict | list
        if is_dict:
            fresh = {self.decode(k): self.decode(v) for k, v in items}
        else:
            fresh = [self.decode(item) for item in items]
        if known is None:
            if handle is not None:
                mirror._pair(handle, fresh)
            return fresh
        if is_dict:
            known.clear()
            known.update(fresh)
        else:
            known[:] = fresh
        return known


_VALUE_READERS = {
    Node.PLAIN: _Decoder._plain,
    Node.REF: _Decoder._ref,
    Node.TENSOR: _Decoder._tensor_node,
    Node.NDARRAY: _Decoder._ndarray,
    Node.LIST: _Decoder._list,
    Node.DICT: _Decoder._dict,
    Node.TUPLE: _Decoder._tuple,
    Node.SET: _Decoder._set,
    Node.FROZENSET: _Decoder._set,
    Node.NPSCALAR: _Decoder._npscalar,
    Node.DTYPE: _Decoder._dtype_node,
    Node.SIZE: _Decoder._size,
    Node.DEVICE: _Decoder._device,
    Node.SLICE: _Decoder._slice,
    Node.RANGE: _Decoder._range,
    Node.ELLIPSIS: _Decoder._ellipsis,
}
# What each side reads: the values, and what only the other side sends it.
_READERS = types.MappingProxyType(
    {
        "grader": types.MappingProxyType({**_VALUE_READERS, Node.HANDLE: _Decoder._handle}),
        "kernel": types.MappingProxyType(
            {
                **_VALUE_READERS,
                Node.ANSWER: _Decoder._answer,
                Node.MODULE: _Decoder._module,
                Node.GLOBAL: _Decoder._global,
                Node.METHOD: _Decoder._method,
                Node.GETATTR: _Decoder._getattr,
                Node.PARTIAL: _Decoder._partial,
            }
        ),
    }
)


def _plain_bytes(data: object, nbytes: int) -> bool:
    """True for a plain uint8 tensor that holds exactly `nbytes` bytes of its own (no stride-0 stretch)."""
    return (
        type(data) is torch.Tensor
        and data.dtype == torch.uint8
        and data.dim() == 1
        and data.numel() == nbytes
        and data.is_contiguous()
        and data.untyped_storage().nbytes() == nbytes
    )


def _product(numbers: Iterable[int]) -> int:
    total = 1
    for number in numbers:
        total *= number
    return total


def _dtype(name: object) -> torch.dtype:
    dtype = getattr(torch, str(name), None)
    if not isinstance(dtype, torch.dtype):
        raise CrossingError(f"unknown dtype {name!r}")
    return dtype


def _with_view_bits(tensor: torch.Tensor, facts: Facts) -> torch.Tensor:
    """The conjugate and negative bits of a lazy view: its bytes alone would read other values."""
    if facts.get("conj") is True:
        if not tensor.is_complex():
            raise CrossingError("a conjugate view of a tensor that is not complex")
        tensor = tensor.conj()
    if facts.get("neg") is True:
        tensor = tensor._neg_view()
    return tensor


def _set_version(tensor: torch.Tensor, version: int) -> None:
    try:
        torch._C._autograd._unsafe_set_version_counter((tensor,), (int(version),))
    except (RuntimeError, TypeError):
        pass


_GRAPH_STAND_INS: dict[str, type[torch.autograd.Function]] = {}


def _graph_stand_in(name: str) -> type[torch.autograd.Function]:
    """An autograd function whose node is named like the kernel's `grad_fn` and whose backward refuses."""
    if name not in _GRAPH_STAND_INS:

        class GraphInTheKernel(torch.autograd.Function):
            @staticmethod
            def forward(ctx: Any, tensor: torch.Tensor) -> torch.Tensor:
                return tensor.view_as(tensor)

            @staticmethod
            def backward(ctx: Any, grad: torch.Tensor) -> NoReturn:
                raise RuntimeError(
                    "this tensor's graph lives in the student's kernel: differentiate it there "
                    "(call_answer(tensor.backward) or in_kernel(...))"
                )

        GraphInTheKernel._backward_cls.__name__ = name
        _GRAPH_STAND_INS[name] = GraphInTheKernel
    return _GRAPH_STAND_INS[name]


def _stand_in_for_graph(tensor: torch.Tensor, grad_fn_name: str | None) -> torch.Tensor:
    """A non-leaf on the grader's side, its `grad_fn` named as in the kernel, whose graph cannot be walked here."""
    return _graph_stand_in(_identifier(grad_fn_name or "", "GraphInTheKernel")).apply(tensor.requires_grad_())
