"""Submissions of 020_leaves for the similarity tests: honest answers written independently, planted copies, blank stubs.

Each answer is the body of one function; the release cell's signature and docstring are kept,
as a student keeps them.
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import nbformat

from gradekit.core.course import REPO_ROOT
from gradekit.proof.subjects import fill_answers
from gradekit.report.answer_text import answer_cells

NOTEBOOK = "020_leaves"
ASSIGNMENT = "autograd"
RELEASE = REPO_ROOT / "release" / ASSIGNMENT / f"{NOTEBOOK}.ipynb"
STUB = "# YOUR CODE HERE\nraise NotImplementedError()"
CELLS = ("answer_scaled_parameter", "answer_chain_gradients", "answer_why_grad_is_none", "answer_can_require_grad")

HONEST = {
    "honest-ada": (
        """
        generator = torch.Generator().manual_seed(seed)
        values = torch.randn(shape, dtype=torch.float64, generator=generator) * scale
        return values.requires_grad_()
        """,
        """
        y = x**2
        y.retain_grad()
        w = torch.sin(y) + 5
        w.backward()
        return x.grad, y.grad
        """,
        """
        if not tensor.requires_grad:
            return "not_tracked"
        if not tensor.is_leaf:
            return "non_leaf"
        if not output.requires_grad:
            return "no_grad"
        pending, seen = [output.grad_fn], set()
        connected = False
        while pending and not connected:
            node = pending.pop()
            if node is None or node in seen:
                continue
            seen.add(node)
            connected = getattr(node, "variable", None) is tensor
            pending.extend(parent for parent, _ in node.next_functions)
        if not connected:
            return "unused"
        if not backward_ran:
            return "no_backward"
        return "reset"
        """,
        """
        try:
            torch.zeros((), dtype=dtype).requires_grad_()
        except RuntimeError:
            return False
        return True
        """,
    ),
    "honest-bo": (
        """
        gen = torch.Generator()
        gen.manual_seed(seed)
        draws = torch.randn(shape, generator=gen, dtype=torch.float64)
        param = (draws * scale).detach()
        param.requires_grad = True
        return param
        """,
        """
        squared = x ** 2
        squared.retain_grad()
        result = squared.sin().add(5)
        result.backward()
        return (x.grad, squared.grad)
        """,
        """
        def reaches(node):
            if node is None:
                return False
            if getattr(node, "variable", None) is tensor:
                return True
            return any(reaches(child) for child, _ in node.next_functions)

        if tensor.requires_grad is False:
            return "not_tracked"
        elif tensor.grad_fn is not None:
            return "non_leaf"
        elif output.grad_fn is None:
            return "no_grad"
        elif not reaches(output.grad_fn):
            return "unused"
        return "reset" if backward_ran else "no_backward"
        """,
        """
        return dtype.is_floating_point or dtype.is_complex
        """,
    ),
    "honest-cy": (
        """
        torch_gen = torch.Generator().manual_seed(seed)
        leaf = torch.randn(shape, dtype=torch.float64, generator=torch_gen).mul_(scale)
        leaf.requires_grad_(True)
        return leaf
        """,
        """
        intermediate = torch.pow(x, 2)
        intermediate.retain_grad()
        total = torch.add(torch.sin(intermediate), 5.0)
        total.backward()
        gx, gy = x.grad, intermediate.grad
        return gx, gy
        """,
        """
        from collections import deque

        if not tensor.requires_grad:
            return "not_tracked"
        if tensor.grad_fn is not None:
            return "non_leaf"
        if not output.requires_grad:
            return "no_grad"
        queue = deque([output.grad_fn])
        visited = []
        found = False
        while queue:
            fn = queue.popleft()
            if fn is None or any(fn is v for v in visited):
                continue
            visited.append(fn)
            if hasattr(fn, "variable") and fn.variable is tensor:
                found = True
                break
            for nxt, _index in fn.next_functions:
                queue.append(nxt)
        if found:
            return "no_backward" if not backward_ran else "reset"
        return "unused"
        """,
        """
        probe = torch.empty(1, dtype=dtype)
        try:
            probe.requires_grad = True
            return True
        except RuntimeError:
            return False
        """,
    ),
    "honest-dee": (
        """
        rng = torch.Generator()
        rng.manual_seed(seed)
        with torch.no_grad():
            data = torch.randn(shape, dtype=torch.float64, generator=rng)
            data *= scale
        return data.requires_grad_(True)
        """,
        """
        y_node = x * x
        y_node.retain_grad()
        z_node = y_node.sin()
        w_node = z_node + 5
        w_node.backward()
        return x.grad, y_node.grad
        """,
        """
        def feeds(node, seen):
            if node is None or id(node) in seen:
                return False
            seen.add(id(node))
            if getattr(node, "variable", None) is tensor:
                return True
            return any(feeds(parent, seen) for parent, _ in node.next_functions)

        reasons_in_order = (
            ("not_tracked", lambda: not tensor.requires_grad),
            ("non_leaf", lambda: not tensor.is_leaf),
            ("no_grad", lambda: output.grad_fn is None),
            ("unused", lambda: not feeds(output.grad_fn, set())),
            ("no_backward", lambda: not backward_ran),
        )
        for label, applies in reasons_in_order:
            if applies():
                return label
        return "reset"
        """,
        """
        allowed = {torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64, torch.complex128}
        return dtype in allowed
        """,
    ),
}

# ada's answers with every name changed.
RENAMED = (
    """
    g = torch.Generator().manual_seed(seed)
    vals = torch.randn(shape, dtype=torch.float64, generator=g) * scale
    return vals.requires_grad_()
    """,
    """
    sq = x**2
    sq.retain_grad()
    out = torch.sin(sq) + 5
    out.backward()
    return x.grad, sq.grad
    """,
    """
    if not tensor.requires_grad:
        return "not_tracked"
    if not tensor.is_leaf:
        return "non_leaf"
    if not output.requires_grad:
        return "no_grad"
    stack, visited_nodes = [output.grad_fn], set()
    hit = False
    while stack and not hit:
        n = stack.pop()
        if n is None or n in visited_nodes:
            continue
        visited_nodes.add(n)
        hit = getattr(n, "variable", None) is tensor
        stack.extend(p for p, _ in n.next_functions)
    if not hit:
        return "unused"
    if not backward_ran:
        return "no_backward"
    return "reset"
    """,
    HONEST["honest-ada"][3],
)

# dee's answers with the helper moved below the table that calls it and the statements shuffled where order is free.
REORDERED = (
    """
    rng = torch.Generator()
    rng.manual_seed(seed)
    with torch.no_grad():
        data = torch.randn(shape, dtype=torch.float64, generator=rng)
        data *= scale
    return data.requires_grad_(True)
    """,
    """
    y_node = x * x
    y_node.retain_grad()
    z_node = y_node.sin()
    w_node = z_node + 5
    w_node.backward()
    return x.grad, y_node.grad
    """,
    """
    reasons_in_order = (
        ("not_tracked", lambda: not tensor.requires_grad),
        ("non_leaf", lambda: not tensor.is_leaf),
        ("no_grad", lambda: output.grad_fn is None),
        ("unused", lambda: not feeds(output.grad_fn, set())),
        ("no_backward", lambda: not backward_ran),
    )

    def feeds(node, seen):
        if node is None or id(node) in seen:
            return False
        seen.add(id(node))
        if getattr(node, "variable", None) is tensor:
            return True
        return any(feeds(parent, seen) for parent, _ in node.next_functions)

    for label, applies in reasons_in_order:
        if applies():
            return label
    return "reset"
    """,
    """
    allowed = {torch.complex128, torch.complex64, torch.float64, torch.float32, torch.bfloat16, torch.float16}
    return dtype in allowed
    """,
)

# cy's answers with comments and blank lines added.
COMMENTED = (
    """
    # a seeded generator so the draw is repeatable
    torch_gen = torch.Generator().manual_seed(seed)

    # draw, then scale in place before asking for grad
    leaf = torch.randn(shape, dtype=torch.float64, generator=torch_gen).mul_(scale)
    leaf.requires_grad_(True)  # still a leaf
    return leaf
    """,
    """
    intermediate = torch.pow(x, 2)  # y = x**2
    intermediate.retain_grad()  # keep the non-leaf's grad
    total = torch.add(torch.sin(intermediate), 5.0)  # w = sin(y) + 5

    total.backward()
    gx, gy = x.grad, intermediate.grad
    return gx, gy
    """,
    """
    from collections import deque

    # the reasons in the table's order
    if not tensor.requires_grad:
        return "not_tracked"
    if tensor.grad_fn is not None:
        return "non_leaf"  # made by an operation
    if not output.requires_grad:
        return "no_grad"

    # walk the graph backwards from the output
    queue = deque([output.grad_fn])
    visited = []
    found = False
    while queue:
        fn = queue.popleft()
        if fn is None or any(fn is v for v in visited):
            continue
        visited.append(fn)
        if hasattr(fn, "variable") and fn.variable is tensor:
            found = True  # the leaf feeds the output
            break
        for nxt, _index in fn.next_functions:
            queue.append(nxt)
    if found:
        return "no_backward" if not backward_ran else "reset"
    return "unused"
    """,
    """
    probe = torch.empty(1, dtype=dtype)  # any shape will do
    try:
        probe.requires_grad = True
        return True
    except RuntimeError:
        # integer and boolean tensors refuse
        return False
    """,
)

COPIES = {
    "copy-renamed": ("honest-ada", RENAMED),
    "copy-reordered": ("honest-dee", REORDERED),
    "copy-commented": ("honest-cy", COMMENTED),
}
BLANK = ("blank-1", "blank-2")


def cell_with_body(starter: str, body: str) -> str:
    """The release cell with its stub replaced by `body`, indented as the stub was."""
    for line in starter.splitlines():
        if line.strip() == STUB.splitlines()[0]:
            indent = line[: len(line) - len(line.lstrip())]
            break
    stub = "\n".join(indent + part for part in STUB.splitlines())
    return starter.replace(stub, textwrap.indent(textwrap.dedent(body).strip("\n"), indent))


def write_answers(submitted_dir: Path, student: str, bodies: tuple[str, ...] | None) -> None:
    starters = dict(answer_cells(nbformat.read(RELEASE, as_version=4)))
    sources = (
        {} if bodies is None else {cell: cell_with_body(starters[cell], body) for cell, body in zip(CELLS, bodies)}
    )
    folder = submitted_dir / student / ASSIGNMENT
    folder.mkdir(parents=True)
    nbformat.write(fill_answers(RELEASE, sources), folder / f"{NOTEBOOK}.ipynb")


def planted_cohort(root: Path) -> tuple[Path, Path]:
    """submitted/ with the honest students, the copies and blank stubs, and a release/ holding the one notebook."""
    submitted, release = root / "submitted", root / "release"
    for student, bodies in HONEST.items():
        write_answers(submitted, student, bodies)
    for student, (_, bodies) in COPIES.items():
        write_answers(submitted, student, bodies)
    for student in BLANK:
        write_answers(submitted, student, None)
    release.mkdir()
    shutil.copy(RELEASE, release)
    return submitted, release
