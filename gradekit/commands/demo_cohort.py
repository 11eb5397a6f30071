"""The demo's class: students who hand in every notebook, each with their own mix of right and wrong answers.

Every answer function of a student's notebooks is the reference, a correct
alternative or a negative control, drawn with one seeded generator, so the
same seed always gives the same class. A student's strength decides how often
they make a mistake. Among honest students no two hand in the same alternative
or control, as classmates who work alone rarely write the same wrong line.

A few students stand for what a TA meets besides mistakes: one hands in after
the due date, one hands in a notebook that is not valid JSON, one copies a
classmate's notebook and written answers (with a word changed), and a few leave
the written answers of 090 blank. The written answers of the others come from
a pool of plausible texts, one text per student.
"""

from __future__ import annotations

import dataclasses
import random

from gradekit.authoring.solutions import NegativeControl
from gradekit.core.manifest import Manifest

DEMO_SEED = 23
DEMO_SIZE = 8  # grading a whole class takes about 10 s of two cores per student: 8 keep the demo near two minutes
# (first name, last name); the student id is the first name in lower case.
NAMES = (
    ("Amara", "Okafor"),
    ("Bruno", "Lindqvist"),
    ("Chen", "Wei"),
    ("Dalia", "Haddad"),
    ("Emeka", "Nwosu"),
    ("Farah", "Siddiqui"),
    ("Goran", "Petrovic"),
    ("Hana", "Kobayashi"),
    ("Ines", "Moreau"),
    ("Jonas", "Becker"),
    ("Kiri", "Tane"),
    ("Lucia", "Ferreira"),
)
MINUTES_LATE = 95  # the late student's hand-in, after the due date
EARLIEST_MINUTES = 3 * 24 * 60  # on-time students hand in up to three days before the due date
ALTERNATIVE_RATE = 0.15  # how often a right answer is written unlike the reference, when an alternative exists
# A class finds a couple of exercises hard: most students get them wrong, each in their own way, so the
# report has weak cells to put first. Only functions with enough controls for most of the class qualify.
HARD_FUNCTIONS = 2
HARD_MISTAKE_RATE = 0.7
HARD_MIN_CONTROLS = 6
WRITTEN_NOTEBOOK = "090_decisions"

# Plausible answers to written answer A (090, the hand-drawn graph at x = 3, y = 4, w = -1, b = 2), of uneven quality.
HAND_GRAPH_TEXTS = (
    "x = 3 and y = 4 are plain data, w = -1 and b = 2 are leaves with requires_grad. pred = w*x + b = -1, "
    "err = pred - y = -5, loss = err**2 = 25; pred, err and loss have a grad_fn. dloss/derr = 2*err = -10, "
    "derr/dpred = 1, dpred/dw = x = 3, dpred/db = 1. So dL/dw = -10 * 3 = -30 in w.grad and dL/db = -10 in b.grad; "
    "x.grad and y.grad stay None.",
    "Graph: w and x go into a multiply, b is added, y is subtracted, then squared. Values: -3, -1, -5, 25. "
    "The derivative of the square is 2*err = -10, the subtraction and addition pass it on unchanged and the "
    "multiply gives x for w. w.grad = -30, b.grad = -10. Only w and b get a .grad because only they require grad.",
    "All four of x, y, w, b are leaves; w and b require grad. Forward: pred = 2, err = -2, loss = 4 (as in the "
    "lesson). Backward goes through the graph in reverse: dL/dw = 2 * err * x and dL/db = 2 * err, which land "
    "in w.grad and b.grad. The intermediate tensors do not keep a gradient.",
    "pred = -1, err = -5 and loss = 25 are non-leaves made by MulBackward0, AddBackward0, SubBackward0 and "
    "PowBackward0. Local derivatives: 2*err = -10 for the square, 1 for the subtraction and the addition, x = 3 "
    "for the product. Multiplying along the path, dL/dw = -30 and dL/db = -10. Backward inverts each operation "
    "to get back to the inputs.",
    "Leaves x, y (no grad) and w, b (requires_grad=True). The loss is (w*x + b - y)^2 = (-3 + 2 - 4)^2 = 25. "
    "Chain rule: dL/dw = 2(wx + b - y) * x = 2 * (-5) * 3 = -30, dL/db = 2 * (-5) = -10, stored in w.grad and "
    "b.grad after loss.backward(). pred and err have no .grad unless retain_grad() is called on them.",
)
# Plausible answers to written answer B (090, why not compile every model by default).
COMPILE_TEXTS = (
    "Compiling costs time on the first call, so a short script may never earn it back. Changing input shapes "
    "cause recompiles, and Python the compiler cannot trace causes graph breaks. I would time the first call "
    "apart from later steps and check the outputs and gradients against eager within a tolerance.",
    "torch.compile is not always faster: small models are dominated by overhead, graph breaks split the model, "
    "and dynamic shapes recompile again and again. It also makes debugging harder. Measure steady-state step "
    "time against eager mode before switching it on.",
    "It can be slower because of compilation time, and errors get harder to read. I would benchmark the "
    "average time of a hundred steps with and without compile and keep whichever is faster.",
    "Three risks: the warm-up compile can take longer than the whole run, guards that fail make it compile "
    "again, and prints or hooks inside the model break the graph. Before deciding, compare compiled and eager "
    "outputs and gradients with assert_close, and time the compiling call separately over realistic shapes.",
    "Compile always gives a speed-up once it has warmed up, so the only cost is the first call. I would just "
    "check that the loss curve looks the same as before.",
)
WRITTEN_POOLS = {"answer_hand_graph": HAND_GRAPH_TEXTS, "answer_compile_blindly": COMPILE_TEXTS}


@dataclasses.dataclass(frozen=True)
class DemoStudent:
    """One student of the demo class: every function not in `answers` is handed in as the reference."""

    student_id: str
    first_name: str
    last_name: str
    answers: tuple[NegativeControl, ...]  # the controls and alternatives their code holds, at most one per function
    written: tuple[tuple[str, str], ...] = ()  # (answer cell, text) of the written answers they wrote
    minutes_after_due: int = -60  # negative: handed in on time
    broken: tuple[str, ...] = ()  # notebooks handed in as text that is not a notebook
    copied_from: str = ""  # the classmate whose work they copied
    copied: tuple[str, ...] = ()  # the notebooks copied whole

    @property
    def late(self) -> bool:
        return self.minutes_after_due > 0

    @property
    def mistakes(self) -> tuple[NegativeControl, ...]:
        return tuple(a for a in self.answers if not a.is_alternative)

    def answers_of(self, notebook: str) -> tuple[NegativeControl, ...]:
        return tuple(a for a in self.answers if a.notebook == notebook)


def demo_cohort(
    manifest: Manifest, controls: tuple[NegativeControl, ...], seed: int = DEMO_SEED, size: int = DEMO_SIZE
) -> tuple[DemoStudent, ...]:
    """A class of `size` students (4 to len(NAMES)), the same for the same seed, with every case the demo shows."""
    if not 4 <= size <= len(NAMES):
        raise ValueError(f"a demo class has 4 to {len(NAMES)} students, not {size}")
    rng = random.Random(seed)
    slots = _slots(manifest, controls)
    hard = _hard_slots(rng, slots)
    taken: set[str] = set()  # the alternatives and controls some student already holds
    students = []
    for first, last in NAMES[:size]:
        strength = rng.uniform(0.85, 0.98)
        answers = tuple(
            pick
            for index, slot in enumerate(slots)
            if (pick := _draw(rng, slot, 1 - HARD_MISTAKE_RATE if index in hard else strength, taken)) is not None
        )
        minutes = -rng.randrange(20, EARLIEST_MINUTES)
        students.append(DemoStudent(first.lower(), first, last, answers, minutes_after_due=minutes))
    late, broken, copier, source, *others = rng.sample(range(size), size)
    students[late] = dataclasses.replace(students[late], minutes_after_due=MINUTES_LATE)
    students[broken] = dataclasses.replace(students[broken], broken=(_broken_notebook(rng, manifest),))
    writers = [source, *(i for i in (late, broken, *others) if rng.random() < 0.75)]
    for question, pool in WRITTEN_POOLS.items():
        texts = rng.sample(pool, len(pool))
        for index in writers[: len(pool)]:
            student = students[index]
            students[index] = dataclasses.replace(student, written=(*student.written, (question, texts.pop())))
    students[copier] = _copy_of(students[copier], students[source], manifest)
    return tuple(students)


def _slots(manifest: Manifest, controls: tuple[NegativeControl, ...]) -> list[tuple[NegativeControl, ...]]:
    """Per answer function that has any, in the course's order: its controls and alternatives."""
    slots = []
    for exercise in manifest.exercises:
        for function in exercise.functions:
            found = tuple(c for c in controls if (c.notebook, c.function) == (exercise.notebook, function))
            if found:
                slots.append(found)
    return slots


def _hard_slots(rng: random.Random, slots: list[tuple[NegativeControl, ...]]) -> set[int]:
    """The indexes of the functions most of the class gets wrong."""
    able = [i for i, slot in enumerate(slots) if sum(not c.is_alternative for c in slot) >= HARD_MIN_CONTROLS]
    return set(rng.sample(able, min(HARD_FUNCTIONS, len(able))))


def _draw(rng: random.Random, slot: tuple[NegativeControl, ...], strength: float, taken: set[str]):
    """A mistake with chance 1 - strength, else sometimes an alternative; None for the reference. Each is drawn once."""
    chance = rng.random()
    if chance > strength:
        kind = [c for c in slot if not c.is_alternative and c.name not in taken]
    elif chance < ALTERNATIVE_RATE:
        kind = [c for c in slot if c.is_alternative and c.name not in taken]
    else:
        return None
    if not kind:
        return None
    pick = rng.choice(kind)
    taken.add(pick.name)
    return pick


def _broken_notebook(rng: random.Random, manifest: Manifest) -> str:
    """Any notebook but the one with written answers, which the copy and the waiting points are about."""
    names = [entry.name for entry in manifest.notebooks]
    return rng.choice([name for name in names if name != WRITTEN_NOTEBOOK] or names)


def _copy_of(student: DemoStudent, source: DemoStudent, manifest: Manifest) -> DemoStudent:
    """The student with the source's notebook that differs most from the reference, and its written answers.

    One word of each written answer is changed, as a copier does; the copied code is kept as it was.
    """
    notebooks = [entry.name for entry in manifest.notebooks if entry.name not in student.broken]
    notebook = max(notebooks, key=lambda name: (len(source.answers_of(name)), name == WRITTEN_NOTEBOOK))
    answers = tuple(a for a in student.answers if a.notebook != notebook) + source.answers_of(notebook)
    written = tuple((cell, _reworded(text)) for cell, text in source.written)
    return dataclasses.replace(
        student,
        answers=answers,
        written=written,
        copied_from=source.student_id,
        copied=(notebook,),
    )


def _reworded(text: str) -> str:
    """The text with its first common word swapped for another, as a copier hides a copy."""
    for old, new in ((" and ", " as well as "), (" the ", " this "), (" is ", " was ")):
        if old in text:
            return text.replace(old, new, 1)
    return text + " That is all."
