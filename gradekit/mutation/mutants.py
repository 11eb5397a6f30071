"""Every mutant of the course's reference functions: one small change each, named and stable.

A mutant is the reference function with one syntax node replaced by one
operator. Its id hashes the notebook, the function and the mutated text, so it
stays the same from run to run until the reference function itself changes:
the equivalence file can name it.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import difflib
import hashlib
from typing import Iterator

from gradekit.authoring.cells import function_source
from gradekit.authoring.solutions import reference_function
from gradekit.core.manifest import Manifest
from gradekit.mutation.lesson_operators import LESSON_OPERATORS
from gradekit.mutation.operators import DELETE, GENERAL_OPERATORS, Operator

OPERATORS = GENERAL_OPERATORS + LESSON_OPERATORS


@dataclasses.dataclass(frozen=True)
class Mutant:
    id: str
    notebook: str
    function: str
    operator: str
    source: str  # the whole mutated function, as the answer cell would hold it
    diff: str  # unified diff against the reference, both written out the same way

    @property
    def change(self) -> str:
        """The changed lines, one line: `- old` then `+ new`."""
        lines = [line for line in self.diff.splitlines()[2:] if line[:1] in "+-"]
        return " | ".join(f"{line[0]} {line[1:].strip()}" for line in lines)


def course_mutants(manifest: Manifest, operators: tuple[Operator, ...] = OPERATORS) -> tuple[Mutant, ...]:
    """Every mutant of every exercise function of every notebook in the manifest, in order."""
    found = []
    for entry in manifest.notebooks:
        for exercise in manifest.exercises_of(entry.name):
            for name in exercise.functions:
                source = function_source(reference_function(manifest, entry.name, name))
                found.extend(function_mutants(entry.name, name, source, operators))
    return tuple(found)


def function_mutants(
    notebook: str, function: str, source: str, operators: tuple[Operator, ...] = OPERATORS
) -> list[Mutant]:
    """The distinct mutants of one function; a change that writes the same code twice counts once."""
    tree = ast.parse(source)
    original = ast.unparse(tree)
    seen = {original}
    found = []
    for path, node in _nodes_with_paths(tree):
        if _is_docstring(tree, path):
            continue
        for operator in operators:
            for replacement in operator.mutate(node):
                text = _mutated_text(tree, path, replacement)
                if text is None or text in seen:
                    continue
                seen.add(text)
                found.append(_mutant(notebook, function, operator.name, original, text))
    return found


def _mutant(notebook: str, function: str, operator: str, original: str, text: str) -> Mutant:
    digest = hashlib.sha256(f"{notebook}/{function}\n{text}".encode()).hexdigest()[:10]
    diff = "".join(
        difflib.unified_diff(
            (original + "\n").splitlines(keepends=True),
            (text + "\n").splitlines(keepends=True),
            "reference",
            "mutant",
            n=1,
        )
    )
    return Mutant(f"{notebook.split('_')[0]}-{function}-{digest}", notebook, function, operator, text + "\n", diff)


def _nodes_with_paths(tree: ast.AST, path: tuple = ()) -> Iterator[tuple[tuple, ast.AST]]:
    """Every node below `tree` with its path: a tuple of (field, index or None) steps."""
    for field, value in ast.iter_fields(tree):
        if isinstance(value, list):
            for index, item in enumerate(value):
                if isinstance(item, ast.AST):
                    yield path + ((field, index),), item
                    yield from _nodes_with_paths(item, path + ((field, index),))
        elif isinstance(value, ast.AST):
            yield path + ((field, None),), value
            yield from _nodes_with_paths(value, path + ((field, None),))


def _is_docstring(tree: ast.Module, path: tuple) -> bool:
    """The function's docstring, or a node within it: its body's first statement when that is a string."""
    if len(path) < 2 or path[1] != ("body", 0):
        return False
    function = tree.body[0]
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return False
    first = function.body[0]
    return isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)


def _mutated_text(tree: ast.AST, path: tuple, replacement) -> str | None:
    """The source with the node at `path` replaced; None when the result is not valid Python."""
    mutated = copy.deepcopy(tree)
    parent = mutated
    for field, index in path[:-1]:
        parent = getattr(parent, field) if index is None else getattr(parent, field)[index]
    field, index = path[-1]
    if index is None:
        if replacement is DELETE or isinstance(replacement, list):
            return None
        setattr(parent, field, replacement)
    else:
        siblings = getattr(parent, field)
        spliced = [] if replacement is DELETE else replacement if isinstance(replacement, list) else [replacement]
        siblings[index : index + 1] = spliced
        if not siblings:
            siblings.append(ast.Pass())
    try:
        text = ast.unparse(ast.fix_missing_locations(mutated))
        compile(text, "<mutant>", "exec")
    except (SyntaxError, ValueError, TypeError, AttributeError):
        return None
    return text
