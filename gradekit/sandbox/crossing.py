"""The wire between the grader and a student's kernel: values cross as data, objects stay where they live.

Both processes hold a `Mirror`. Anything sent across is either data (plain
Python values of the exact builtin types, tensors and NumPy arrays as bytes
plus their autograd facts) or a handle to an object that stays on its side.
Tensors, lists and dicts that have crossed once stay paired with their copy on
the other side: when either side changes one (values, `.grad`,
`requires_grad`, `_version`, list items), the next message carries the change,
so a test reading `x.grad` after a call sees what the student's code left there.

Direction matters. From the grader to the kernel, no code of a test travels: a
function crosses only by name, when the kernel can import it (torch's own, or
the course's public module `autograd_checks`), and `functools.partial` of such a
function crosses with its arguments as data. Any other function is refused,
so a hidden test keeps its code, closures and constants on the grader's side.
From the kernel to the grader only data and handles travel: messages are read
with `torch.load(weights_only=True)` and every node is rebuilt as an exact
builtin type, a plain tensor or a `RemoteObject`, so nothing the student wrote
runs in the grader.

This file is loaded by path inside kernels (it imports only torch, numpy and
the standard library) and imported as part of gradekit in the grader.
"""

import builtins
import functools
import hashlib
import importlib
import io
import itertools
import keyword
import types

import numpy
import torch

TEXT_LIMIT = 1000  # characters of a student's exception message that cross
MAX_ELEMENTS = 2**27  # of one tensor rebuilt on the grader's side (a stride-0 view could claim any size)
PLAIN_TYPES = (bool, int, float, complex, str, bytes, type(None))
PUBLIC_MODULE = "autograd_checks"  # the course's module shipped beside the notebooks
MODULES_BY_NAME = ("torch", "numpy", "math", "functools", "operator", "itertools", "collections")


class CrossingError(BaseException):
    """A value cannot cross, or a message is malformed; the message says why.

    Not an Exception: a test's `except Exception` (around a call it expects to
    raise) must not take a broken channel for the student's error.
    """


class RemoteObject:
    """An object that stays in the student's kernel; calls and attribute reads go there."""

    def __init__(self, mirror, handle, type_name):
        object.__setattr__(self, "_mirror", mirror)
        object.__setattr__(self, "_handle", handle)
        object.__setattr__(self, "_type_name", type_name)

    @property
    def __name__(self):
        return self._type_name

    def __call__(self, *args, **kwargs):
        return self._mirror.call(self, args, kwargs)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return self._mirror.call(_GETATTR, (self, name), {})

    def __repr__(self):
        return f"<{self._type_name} in the student's kernel>"


def call_message(mirror, target, args, kwargs):
    """Grader side: the request to run `target(*args, **kwargs)` in the kernel."""
    return mirror.outgoing(lambda encoder: encoder.encode((target, tuple(args), tuple(kwargs.items()))))


def checked_reply(reply):
    """The kernel's decoded reply, if it has one of the three shapes `answer_server.respond` makes."""
    kind = reply[0] if isinstance(reply, tuple) and reply else None
    if (
        (kind == "returned" and len(reply) == 2)
        or (kind == "failed" and len(reply) == 2)
        or (kind == "raised" and len(reply) == 4 and all(isinstance(part, str) for part in reply[1:]))
    ):
        return reply
    raise CrossingError("the kernel's reply has the wrong shape")


def result_of(reply):
    """What a checked reply means on the grader's side: the value, the student's error, or a broken call."""
    if reply[0] == "returned":
        return reply[1]
    if reply[0] == "raised":
        raise raised_in_student_process(*reply[1:])
    raise CrossingError(f"the kernel could not answer: {str(reply[1])[:300]}")


class _Getattr:
    """Marker target: read an attribute of a kernel object."""


_GETATTR = _Getattr()


def _builtin_exception(error):
    for klass in type(error).__mro__:
        if klass.__module__ == "builtins" and issubclass(klass, BaseException):
            return klass.__name__
    return "Exception"


def _identifier(name, fallback):
    name = str(name)[:80]
    return name if name.isidentifier() and not keyword.iskeyword(name) else fallback


def raised_in_student_process(type_name, builtin_name, message):
    """The student's exception rebuilt on the grader's side: its type name and message only."""
    base = getattr(builtins, builtin_name, Exception)
    if not (isinstance(base, type) and issubclass(base, Exception)):
        base = Exception
    name = _identifier(type_name, base.__name__)
    klass = base if name == base.__name__ else type(name, (base,), {"__module__": "student"})
    error = klass(message)
    error.raised_in_student_process = True
    return error


def _storage_bytes(storage):
    return torch.empty(0, dtype=torch.uint8).set_(storage, 0, (storage.nbytes(),), (1,))


def _tensor_facts(tensor):
    """What a test may read of a tensor besides its values."""
    grad = tensor.grad if tensor.is_leaf or tensor.retains_grad else None
    return (
        tensor.untyped_storage().data_ptr(),
        tensor.storage_offset(),
        tuple(tensor.shape),
        tuple(tensor.stride()),
        tensor.requires_grad,
        tensor.is_leaf,
        id(grad) if grad is not None else None,
        tensor._version,
        not tensor.is_leaf and tensor.retains_grad,
    )


class Mirror:
    """One side's half of the pairing; `side` is "grader" or "kernel"."""

    def __init__(self, side, call=None, resolve_answer=None):
        self.side = side
        self._call = call  # grader: sends a request and returns the decoded reply
        self._resolve_answer = resolve_answer  # kernel: answer name -> the student's object
        self._numbers = itertools.count()
        self.objects = {}  # handle -> object on this side (kept alive while the notebook runs)
        self.handles = {}  # id(object) -> handle
        self.storages = {}  # storage handle -> UntypedStorage on this side
        self.storage_handles = {}  # address of a storage's first byte -> storage handle
        self.storage_digests = {}  # storage handle -> digest of the content both sides agree on
        self.agreed = {}  # handle -> the facts (tensors) or item keys (lists, dicts) both sides agree on
        self.array_tensors = {}  # handle of a NumPy array -> a tensor sharing its memory (kept for its storage)
        self.tensor_storage = {}  # handle of a tensor (or array) -> the handle of the storage its bytes are in
        self.storage_views = {}  # storage handle -> ((address, size), a NumPy view of its bytes)

    # ----- pairing -------------------------------------------------------------------------

    def _new_handle(self):
        return f"{self.side[0]}{next(self._numbers)}"

    def _pair(self, handle, obj):
        self.objects[handle] = obj
        self.handles[id(obj)] = handle

    def handle_of(self, obj):
        """The handle `obj` is paired under, checked by identity: an id alone may belong to a dead object."""
        handle = self.handles.get(id(obj))
        return handle if handle is not None and self.objects.get(handle) is obj else None

    def pair_array(self, handle, array, tensor):
        """A NumPy array is what the test holds; the tensor on its memory is how it crosses."""
        for stale in [key for key, paired in self.handles.items() if paired == handle]:
            del self.handles[stale]
        self._pair(handle, array)
        self.array_tensors[handle] = tensor

    # ----- messages ------------------------------------------------------------------------

    def dumps(self, tree, storages):
        buffer = io.BytesIO()
        torch.save({"tree": tree, "storages": storages}, buffer)
        return buffer.getvalue()

    @staticmethod
    def loads(data):
        message = torch.load(io.BytesIO(data), weights_only=True)
        if not isinstance(message, dict) or set(message) != {"tree", "storages"}:
            raise CrossingError("the message has the wrong shape")
        return message["tree"], message["storages"]

    def outgoing(self, build):
        """Encode `build(encoder)` with this side's pending changes first; returns bytes.

        Only this scan looks at every paired object: what it saw is what both
        sides agree on once the message is read, plus what the message paired anew.
        """
        encoder = _Encoder(self)
        updates = encoder.changes()
        tree = build(encoder)
        data = self.dumps({"updates": updates, "body": tree}, encoder.storages)
        self.agreed.update(encoder.seen_state)
        self.storage_digests.update(encoder.seen_digests)
        self.agree(set(self.objects) - set(encoder.seen_state), set(self.storages) - set(encoder.seen_digests))
        return data

    def incoming(self, data):
        """Decode a message made by `outgoing` on the other side: apply its changes, return its body.

        Whatever goes wrong while reading is a CrossingError, never an error a
        test could take for the student's own.
        """
        try:
            tree, storages = self.loads(data)
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
        return body

    def state_of(self, handle):
        """What a later scan compares: a tensor's facts, a container's item keys, or None."""
        obj = self.array_tensors.get(handle, self.objects[handle])
        if isinstance(obj, torch.Tensor):
            return _tensor_facts(obj)
        if isinstance(obj, (list, dict)):
            return _container_key(self, obj)
        return None

    def agree(self, handles, storage_handles):
        """Record the current state of these paired objects and storages as the state both sides share."""
        for handle in handles:
            if handle in self.objects:
                self.agreed[handle] = self.state_of(handle)
        for sh in storage_handles:
            if sh in self.storages:
                self.storage_digests[sh] = self.digest(sh)

    def digest(self, sh):
        """A digest of a paired storage's bytes, read through a view kept while the memory stays put."""
        storage = self.storages[sh]
        place = (storage.data_ptr(), storage.nbytes())
        if not place[1]:
            return b""
        cached = self.storage_views.get(sh)
        if cached is None or cached[0] != place:  # new, or resized: the old view would read freed memory
            cached = self.storage_views[sh] = (place, _storage_bytes(storage).numpy())
        return hashlib.blake2b(cached[1].data, digest_size=16).digest()

    def register_storage(self, sh, storage):
        self.storages[sh] = storage
        if storage.nbytes():
            self.storage_handles[storage.data_ptr()] = sh

    def locate(self, storage):
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

    def call(self, target, args, kwargs):
        """Grader side: run `target(*args, **kwargs)` in the kernel and return its result here."""
        return self._call(target, args, kwargs)


def _container_key(mirror, obj):
    items = obj.items() if isinstance(obj, dict) else enumerate(obj)
    return tuple((_item_key(mirror, k), _item_key(mirror, v)) for k, v in items)


def _item_key(mirror, value):
    if type(value) in PLAIN_TYPES:
        return (type(value).__name__, value)
    return ("id", id(value), mirror.handle_of(value))


class _Encoder:
    def __init__(self, mirror):
        self.mirror = mirror
        self.storages = []
        self.changed_storages = set()  # paired storages whose bytes must travel in this message
        self.seen_state = {}  # handle -> its state as the scan saw it
        self.seen_digests = {}  # storage handle -> its digest as the scan saw it

    def changes(self):
        """Nodes for every paired object this side changed since both sides last agreed."""
        mirror = self.mirror
        updates = []
        self.seen_digests = {sh: mirror.digest(sh) for sh in mirror.storages}
        self.changed_storages = {
            sh for sh, digest in self.seen_digests.items() if mirror.storage_digests.get(sh) != digest
        }
        for handle in list(mirror.objects):
            state = self.seen_state[handle] = mirror.state_of(handle)
            obj = mirror.array_tensors.get(handle, mirror.objects[handle])
            if isinstance(obj, torch.Tensor):
                if mirror.agreed.get(handle) != state or mirror.tensor_storage.get(handle) in self.changed_storages:
                    updates.append(self._tensor(obj, handle))
            elif isinstance(obj, (list, dict)) and mirror.agreed.get(handle) != state:
                updates.append(self._container(obj, handle))
        return updates

    def encode(self, value):
        mirror = self.mirror
        kind = type(value)
        if kind in PLAIN_TYPES:
            return ("v", value)
        handle = mirror.handle_of(value)
        if handle is not None:  # paired: its changes, if any, travel in the message's updates
            return ("ref", handle)
        if isinstance(value, numpy.ndarray):
            return self._ndarray(value)
        if isinstance(value, torch.Tensor):
            return self._tensor(value, None)
        if isinstance(value, numpy.generic):
            return ("npscalar", value.dtype.str, value.item())
        if isinstance(value, torch.dtype):
            return ("dtype", str(value).removeprefix("torch."))
        if isinstance(value, torch.Size):
            return ("size", [int(n) for n in value])
        if isinstance(value, torch.device):
            return ("device", str(value))
        if isinstance(value, slice):
            return ("slice", [self.encode(value.start), self.encode(value.stop), self.encode(value.step)])
        if isinstance(value, range):
            return ("range", [value.start, value.stop, value.step])
        if value is Ellipsis:
            return ("ellipsis",)
        if isinstance(value, (list, dict)) and kind in (list, dict):
            return self._container(value, None)
        if isinstance(value, tuple) and kind is tuple:
            return ("tuple", [self.encode(item) for item in value])
        if isinstance(value, (set, frozenset)) and kind in (set, frozenset):
            return (kind.__name__, [self.encode(item) for item in value])
        if mirror.side == "kernel":
            return self._kernel_other(value)
        return self._grader_other(value)

    # Tensors: a storage (bytes once, then by handle) and a view on it, with autograd facts.
    def _storage(self, tensor):
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

    def _tensor(self, tensor, handle):
        mirror = self.mirror
        if tensor.layout != torch.strided or tensor.device.type != "cpu" or tensor.is_quantized:
            return self._other(tensor)
        new = handle is None
        if new:
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
            "version": tensor._version,
            "kind": _tensor_kind(tensor),
            "retains_grad": bool(not tensor.is_leaf and tensor.retains_grad),
        }
        facts["grad"] = self.encode(grad) if grad is not None else ("v", None)
        return ("tensor", handle, facts)

    def _ndarray(self, array):
        try:
            tensor = torch.from_numpy(array)
        except (TypeError, ValueError):
            return self._other(array)
        node = self._tensor(tensor, None)
        self.mirror.pair_array(node[1], array, tensor)
        return ("ndarray", node)

    def _container(self, value, handle):
        mirror = self.mirror
        if handle is None:
            handle = mirror._new_handle()
            mirror._pair(handle, value)
        if isinstance(value, dict):
            return ("dict", handle, [[self.encode(k), self.encode(v)] for k, v in value.items()])
        return ("list", handle, [self.encode(item) for item in value])

    def _kernel_other(self, value):
        """Kernel side: a subclass of a data type crosses as its base value; anything else stays here."""
        for base in (int, float, complex, str, bytes):  # bool cannot be subclassed
            if isinstance(value, base):
                return ("v", base(value))
        if isinstance(value, tuple):
            return ("tuple", [self.encode(item) for item in tuple.__iter__(value)])
        if isinstance(value, list):
            return ("list", None, [self.encode(item) for item in list.__iter__(value)])
        if isinstance(value, dict):
            return ("dict", None, [[self.encode(k), self.encode(v)] for k, v in dict.items(value)])
        return self._other(value)

    def _other(self, value):
        mirror = self.mirror
        if mirror.side != "kernel":
            raise CrossingError(
                f"a {type(value).__name__} cannot reach the student's kernel; build it there with in_kernel(...)"
            )
        handle = mirror.handle_of(value)
        if handle is None:
            handle = mirror._new_handle()
            mirror._pair(handle, value)
        return ("handle", handle, type(value).__name__)

    def _grader_other(self, value):
        """Grader side: answers, kernel objects, modules, and functions the kernel can import by name."""
        if isinstance(value, RemoteObject):
            return ("ref", value._handle)
        if isinstance(value, _Getattr):
            return ("getattr",)
        answer_name = getattr(value, "_kit_answer_name", None)
        if answer_name is not None and type(value).__name__ == "RemoteAnswer":
            return ("answer", answer_name)
        if isinstance(value, types.ModuleType):
            return ("module", value.__name__)
        if isinstance(value, types.MethodType) and self.mirror.handle_of(value.__self__) is not None:
            return ("method", self.encode(value.__self__), value.__func__.__name__)
        if (
            isinstance(value, (types.BuiltinFunctionType, types.BuiltinMethodType))
            and isinstance(getattr(value, "__self__", None), (torch.Tensor,))
            and self.mirror.handle_of(value.__self__) is not None
        ):
            return ("method", self.encode(value.__self__), value.__name__)
        public = _public_name(value)
        if public is not None:
            return ("global", PUBLIC_MODULE, public)
        path = _import_path(value) if callable(value) else None
        if path is not None:
            return ("global", *path)
        if isinstance(value, functools.partial):
            return (
                "partial",
                self.encode(value.func),
                self.encode(tuple(value.args)),
                self.encode(dict(value.keywords)),
            )
        if callable(value):
            raise CrossingError(function_refusal(value))
        return self._other(value)  # refused: the grader sends no other object


def crosses_by_name(value):
    """True when the kernel finds `value` by importing it: from the course's public module or a library."""
    return _public_name(value) is not None or (callable(value) and _import_path(value) is not None)


def _public_name(value):
    """The name under which the course's public module holds `value`, or None."""
    name = getattr(value, "__qualname__", None)
    if getattr(value, "__module__", None) != PUBLIC_MODULE or not isinstance(name, str) or "<" in name:
        return None  # a function made inside another one has no name the kernel can look up
    return name


def function_refusal(function):
    """Why a test's own function cannot reach the kernel, and where to put it instead."""
    name = getattr(function, "__name__", None) or type(function).__name__
    return (
        f"the test's function {str(name)[:80]!r} cannot reach the student's kernel: no test code crosses. "
        f"Define it in the course's public module {PUBLIC_MODULE}.py and pass it by name, with data only"
    )


def _tensor_kind(tensor):
    if type(tensor) is torch.Tensor:
        return "Tensor"
    if type(tensor) is torch.nn.Parameter:
        return "Parameter"
    return "subclass:" + type(tensor).__name__


def _import_path(value):
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


class _Decoder:
    def __init__(self, mirror, storages):
        self.mirror = mirror
        self.storage_data = storages
        self.touched = set()  # handles this message created or changed
        self.touched_storages = set()

    def decode(self, node):
        mirror = self.mirror
        if not isinstance(node, tuple) or not node or not isinstance(node[0], str):
            raise CrossingError("a node of the message is malformed")
        tag = node[0]
        if tag == "v":
            value = node[1]
            if type(value) not in PLAIN_TYPES:
                raise CrossingError("a plain value has the wrong type")
            return value
        if tag == "ref":
            if node[1] not in mirror.objects:
                raise CrossingError(f"unknown handle {node[1]!r}")
            return mirror.objects[node[1]]
        if tag == "tensor":
            return self._tensor(node[1], node[2])
        if tag == "ndarray":
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
        if tag == "list":
            return self._container(node[1], node[2], is_dict=False)
        if tag == "dict":
            return self._container(node[1], node[2], is_dict=True)
        if tag == "tuple":
            return tuple(self.decode(item) for item in node[1])
        if tag in ("set", "frozenset"):
            return (set if tag == "set" else frozenset)(self.decode(item) for item in node[1])
        if tag == "npscalar":
            dtype = numpy.dtype(str(node[1]))
            if dtype.kind not in "biufc?" or dtype.fields or dtype.shape:
                raise CrossingError("a NumPy scalar of an unexpected kind")
            return dtype.type(node[2])
        if tag == "dtype":
            return _dtype(node[1])
        if tag == "size":
            return torch.Size([int(n) for n in node[1]])
        if tag == "device":
            return torch.device(str(node[1]))
        if tag == "slice":
            return slice(*(self.decode(part) for part in node[1]))
        if tag == "range":
            return range(*(int(part) for part in node[1]))
        if tag == "ellipsis":
            return Ellipsis
        if tag == "handle" and mirror.side == "grader":
            known = mirror.objects.get(node[1])
            if known is None:
                known = RemoteObject(mirror, str(node[1]), str(node[2])[:80])
                mirror._pair(node[1], known)
            return known
        if mirror.side == "kernel":
            return self._kernel_only(node)
        raise CrossingError(f"the grader does not accept {tag!r} nodes")

    def _kernel_only(self, node):
        tag = node[0]
        if tag == "answer":
            return self.mirror._resolve_answer(node[1])
        if tag == "module":
            return importlib.import_module(node[1])
        if tag == "global":
            found = importlib.import_module(node[1])
            for part in node[2].split("."):
                found = getattr(found, part)
            return found
        if tag == "method":
            return getattr(self.decode(node[1]), node[2])
        if tag == "getattr":
            return getattr
        if tag == "partial":
            return functools.partial(self.decode(node[1]), *self.decode(node[2]), **self.decode(node[3]))
        raise CrossingError(f"unknown node {tag!r}")

    def _storage(self, spec):
        mirror = self.mirror
        sh, index, nbytes = spec
        self.touched_storages.add(sh)
        storage = mirror.storages.get(sh)
        data = self.storage_data[index] if index >= 0 else None
        if ((storage is None or storage.nbytes() != int(nbytes)) and data is None) or (
            data is not None
            and not (isinstance(data, torch.Tensor) and data.dtype == torch.uint8 and data.numel() == int(nbytes))
        ):
            raise CrossingError("a storage's bytes do not match its size")
        if storage is None:
            storage = torch.UntypedStorage(int(nbytes))
            mirror.register_storage(sh, storage)
        elif storage.nbytes() != int(nbytes):
            storage.resize_(int(nbytes))
            mirror.register_storage(sh, storage)  # its bytes may have moved
        if data is not None:
            _storage_bytes(storage).copy_(data)
        return storage

    def _tensor(self, handle, facts):
        mirror = self.mirror
        storage = self._storage(facts["storage"])
        self.touched.add(handle)
        mirror.tensor_storage[handle] = facts["storage"][0]
        dtype = _dtype(facts["dtype"])
        size, stride, offset = [int(n) for n in facts["size"]], [int(n) for n in facts["stride"]], int(facts["offset"])
        if len(size) > 16 or len(stride) != len(size) or any(n < 0 for n in size) or _product(size) > MAX_ELEMENTS:
            raise CrossingError(f"a tensor of shape {size[:16]} is not accepted")
        known = mirror.objects.get(handle)
        if isinstance(known, torch.Tensor):
            self._update(known, storage, dtype, size, stride, offset, facts)
            return known
        tensor = torch.empty(0, dtype=dtype).set_(storage, offset, size, stride)
        _set_version(tensor, facts["version"])  # before any view is taken of it: a view records its base's version
        tensor = self._with_autograd(tensor, facts)
        mirror._pair(handle, tensor)
        self._grad(tensor, facts)
        return tensor

    def _with_autograd(self, tensor, facts):
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

    def _update(self, tensor, storage, dtype, size, stride, offset, facts):
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
        self._grad(tensor, facts)
        if tensor.is_leaf:  # a stand-in for a kernel graph would take a new version for an in-place change
            _set_version(tensor, facts["version"])

    def _grad(self, tensor, facts):
        grad = self.decode(facts["grad"])
        if not (tensor.is_leaf or tensor.retains_grad) or grad is tensor.grad:
            return
        try:
            tensor.grad = grad
        except (RuntimeError, TypeError):
            pass

    def _container(self, handle, items, is_dict):
        mirror = self.mirror
        known = mirror.objects.get(handle) if handle is not None else None
        if handle is not None:
            self.touched.add(handle)
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


def _product(numbers):
    total = 1
    for number in numbers:
        total *= number
    return total


def _dtype(name):
    dtype = getattr(torch, str(name), None)
    if not isinstance(dtype, torch.dtype):
        raise CrossingError(f"unknown dtype {name!r}")
    return dtype


def _set_version(tensor, version):
    try:
        torch._C._autograd._unsafe_set_version_counter((tensor,), (int(version),))
    except (RuntimeError, TypeError):
        pass


_GRAPH_STAND_INS: dict[str, type[torch.autograd.Function]] = {}


def _graph_stand_in(name):
    """An autograd function whose node is named like the kernel's `grad_fn` and whose backward refuses."""
    if name not in _GRAPH_STAND_INS:

        class GraphInTheKernel(torch.autograd.Function):
            @staticmethod
            def forward(ctx, tensor):
                return tensor.view_as(tensor)

            @staticmethod
            def backward(ctx, grad):
                raise RuntimeError(
                    "this tensor's graph lives in the student's kernel: differentiate it there "
                    "(call_answer(tensor.backward) or in_kernel(...))"
                )

        GraphInTheKernel._backward_cls.__name__ = name
        _GRAPH_STAND_INS[name] = GraphInTheKernel
    return _GRAPH_STAND_INS[name]


def _stand_in_for_graph(tensor, grad_fn_name):
    """A non-leaf on the grader's side, its `grad_fn` named as in the kernel, whose graph cannot be walked here."""
    return _graph_stand_in(_identifier(grad_fn_name or "", "GraphInTheKernel")).apply(tensor.requires_grad_())
