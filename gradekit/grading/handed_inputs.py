"""A change the student's code made to a tensor a check handed it: the student's mistake, not a forgery.

Every tensor a test makes is read-only to the kernel: a change to it is refused (crossing.py).
Refused changes to a tensor the test passed to the student's function in that very call (its
`requires_grad` switched on, its values updated in place) are what a plain mistake does, such as
`x.requires_grad_()` on a `vjp`'s input: they cost the cell its points with advice, and leave no
finding. A refused change to any other tensor of the test, one the call never handed over, can only
have been reached on purpose, and stays a finding that withholds the notebook.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch

if TYPE_CHECKING:
    from gradekit.sandbox.crossing import Mirror

# How deep a call's arguments are searched for tensors: an argument, or a list or dict of them.
SEARCH_DEPTH = 3
ABOUT_THE_TEST = " of a tensor the test made"


def tensors_in(value: object, depth: int = SEARCH_DEPTH) -> list[torch.Tensor]:
    """The tensors in `value`, in lists, tuples and dict values down to `depth` levels."""
    if isinstance(value, torch.Tensor):
        return [value]
    if depth == 0:
        return []
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [tensor for item in value for tensor in tensors_in(item, depth - 1)]
    return []


def take_changes_to_arguments(mirror: Mirror, since: int, arguments: object) -> list[str]:
    """What the call changed in the tensors it was handed ("requires_grad", "values"), taken off `mirror.refused`.

    `since` is how many refusals the mirror held before the call; refusals of other tensors stay.
    """
    handed = tensors_in(arguments)
    handles = {handle for handle in map(mirror.handle_of, handed) if handle is not None}
    storages = {mirror.tensor_storage[handle] for handle in handles if handle in mirror.tensor_storage}
    changed = []
    for refusal in list(mirror.refusals[since:]):
        what, handle, storage = refusal
        if handle in handles or storage in storages:
            mirror.refusals.remove(refusal)
            mirror.refused.remove(what)
            changed.append(what.removeprefix("the ").removesuffix(ABOUT_THE_TEST))
    return list(dict.fromkeys(changed))
