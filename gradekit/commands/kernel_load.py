"""Students' own kernels at a stated activity: how many of them a core and a GiB of the hub's machine hold.

Each simulated student is a real kernel of this environment (the one a
student's JupyterLab starts), working in a folder that holds the release's
files. It runs the code cells of one of the lesson's notebooks, filled with the
reference answers, top to bottom and again, pausing between cells for a think
time drawn between half and one and a half times the stated one, so that the
class does not work in step; the students are spread over the notebooks. A
kernel's start and first cell (torch imported) are timed on their own; the
other figures are read over a window that opens once every kernel has
started: the kernels' CPU time, each kernel's memory (shared pages split among
the kernels sharing them), and how long each cell took to answer. The figures
are printed, never asserted on.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math
import os
import random
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager

from gradekit.commands.precheck_load import percentile
from gradekit.core.course import Course
from gradekit.core.manifest import Manifest
from gradekit.core.process_readings import (
    machine_busy_seconds,
    memory_bytes,
    process_cpu_seconds,
    proportional_bytes,
)
from gradekit.precheck.engine import without_hub_credentials
from gradekit.proof.subjects import answer_sources, fill_answers

THINK_SPREAD = (0.5, 1.5)  # a think time is the stated one times a number drawn in this range
CELL_LIMIT_SECONDS = 600.0  # a cell (or a kernel's start) still unanswered after this counts as failed
# What one kernel that imported torch may take, generously (they measure about 250 MiB each): only to refuse,
# before any starts, a class whose kernels would not fit in the machine's memory.
KERNEL_BYTES_AT_MOST = 350 * 2**20


@dataclasses.dataclass(frozen=True)
class KernelPlan:
    classes: tuple[int, ...] = (10, 20, 40)  # class sizes, run one after another
    think_seconds: float = 30.0  # the stated activity: a cell run every this many seconds, on average
    window_seconds: float = 180.0  # how long the figures are read over, once every kernel has started
    seed: int = 0  # the think times' draw, so that two runs of one plan pause alike


@dataclasses.dataclass(frozen=True)
class ClassLoad:
    students: int
    start_seconds: tuple[float, ...]  # per kernel: from asking for it to the answer of its first cell
    cell_seconds: tuple[float, ...]  # how long each cell run in the window took to answer
    failed_cells: tuple[str, ...]  # "<notebook> cell <n>: <why>" for each cell that raised or went unanswered
    kernel_cpu_seconds: float  # the kernels' own CPU time over the window
    machine_busy_seconds: float  # every core's busy time over the window, this command's included
    window_seconds: float
    kernel_bytes: tuple[int, ...]  # each kernel's proportional memory at the window's end

    @property
    def kernel_cores(self) -> float:
        """How many cores the kernels kept busy, on average over the window."""
        return self.kernel_cpu_seconds / self.window_seconds

    @property
    def machine_cores(self) -> float:
        return self.machine_busy_seconds / self.window_seconds

    @property
    def students_per_core(self) -> float:
        return self.students / self.kernel_cores if self.kernel_cores else math.inf

    @property
    def mean_kernel_bytes(self) -> float:
        return sum(self.kernel_bytes) / len(self.kernel_bytes) if self.kernel_bytes else 0.0

    @property
    def students_per_gib(self) -> float:
        return 2**30 / self.mean_kernel_bytes if self.mean_kernel_bytes else math.inf

    @property
    def cell_p50(self) -> float:
        return percentile(self.cell_seconds, 50)

    @property
    def cell_p95(self) -> float:
        return percentile(self.cell_seconds, 95)

    @property
    def start_p95(self) -> float:
        return percentile(self.start_seconds, 95)


@dataclasses.dataclass(frozen=True)
class KernelLoadResult:
    plan: KernelPlan
    notebooks: tuple[str, ...]
    cores: int
    memory_bytes: int  # the machine's
    load_average: float  # the one-minute load when the run began
    classes: tuple[ClassLoad, ...]

    @property
    def ok(self) -> bool:
        """Every cell of every student answered without an error, and each class ran cells in its window."""
        return all(not c.failed_cells and c.cell_seconds for c in self.classes)


def run_kernel_load(course: Course, manifest: Manifest, plan: KernelPlan) -> KernelLoadResult:
    """Each class of the plan in turn: its kernels started, worked for the window, read, then shut down."""
    if not plan.classes or min(plan.classes) < 1 or plan.think_seconds < 0 or plan.window_seconds <= 0:
        raise ValueError("a plan needs class sizes of 1 or more, a think time of 0 s or more and a window over 0 s")
    refuse_what_cannot_fit(max(plan.classes), memory_bytes("MemAvailable"))
    notebooks = tuple(entry.name for entry in manifest.notebooks)
    cells = {name: code_cells(course, manifest, name) for name in notebooks}
    if not all(cells.values()):
        raise ValueError(f"no code cell to run in {', '.join(name for name, found in cells.items() if not found)}")
    load_average = os.getloadavg()[0]
    classes = []
    for size in plan.classes:
        with tempfile.TemporaryDirectory(prefix="gradekit-kernel-load-") as home:
            shutil.copytree(course.release_dir, home, dirs_exist_ok=True)  # what a student's folder holds
            spread = [notebooks[number % len(notebooks)] for number in range(size)]
            students = [SimulatedStudent(notebook, cells[notebook]) for notebook in spread]
            classes.append(asyncio.run(run_class(students, Path(home), plan)))
    cores = len(os.sched_getaffinity(0))
    return KernelLoadResult(plan, notebooks, cores, memory_bytes("MemTotal"), load_average, tuple(classes))


def refuse_what_cannot_fit(students: int, available_bytes: int) -> None:
    """A clear refusal, before any kernel starts, of a class whose kernels could exhaust the machine's memory."""
    needed = students * KERNEL_BYTES_AT_MOST
    if available_bytes and needed > available_bytes:
        raise ValueError(
            f"{students} kernels may need {needed / 2**30:.1f} GiB and this machine has "
            f"{available_bytes / 2**30:.1f} GiB available: ask for a smaller class"
        )


def code_cells(course: Course, manifest: Manifest, notebook: str) -> tuple[str, ...]:
    """The code cells of the release notebook with the reference answers filled in, as a student runs them."""
    filled = fill_answers(course.release_dir / f"{notebook}.ipynb", answer_sources(manifest, notebook, None))
    return tuple(cell.source for cell in filled.cells if cell.cell_type == "code" and cell.source.strip())


async def run_class(students: list[SimulatedStudent], home: Path, plan: KernelPlan) -> ClassLoad:
    """Start the class, open the window once all are up, let them work through it, read what it cost."""
    draw = random.Random(plan.seed)
    environment = without_hub_credentials(dict(os.environ))
    try:
        starts = await asyncio.gather(*(student.start(home, environment) for student in students))
        cpu_before = [process_cpu_seconds(student.pid) for student in students]
        busy_before, opened = machine_busy_seconds(), time.monotonic()
        until = opened + plan.window_seconds
        pauses = [random.Random(draw.random()) for _ in students]
        await asyncio.gather(*(s.work(until, plan.think_seconds, p) for s, p in zip(students, pauses)))
        window = time.monotonic() - opened
        busy = machine_busy_seconds() - busy_before
        cpu = sum(process_cpu_seconds(s.pid) - before for s, before in zip(students, cpu_before))
        memory = tuple(proportional_bytes(student.pid) for student in students)
    finally:
        await asyncio.gather(*(student.stop() for student in students), return_exceptions=True)
    return ClassLoad(
        students=len(students),
        start_seconds=tuple(starts),
        cell_seconds=tuple(seconds for student in students for seconds in student.cell_seconds),
        failed_cells=tuple(failure for student in students for failure in student.failures),
        kernel_cpu_seconds=cpu,
        machine_busy_seconds=busy,
        window_seconds=window,
        kernel_bytes=memory,
    )


class SimulatedStudent:
    """One kernel working through one notebook's cells, again and again."""

    def __init__(self, notebook: str, cells: tuple[str, ...]):
        self.notebook, self.cells = notebook, cells
        self.manager = AsyncKernelManager(kernel_name="python3")  # this environment's kernel, as JupyterLab starts it
        self.client: AsyncKernelClient | None = None
        self.cell_seconds: list[float] = []
        self.failures: list[str] = []

    @property
    def pid(self) -> int:
        return int(getattr(self.manager.provisioner, "pid", 0) or 0)

    async def start(self, home: Path, environment: dict[str, str]) -> float:
        """Seconds from asking for the kernel to the answer of its first cell (its imports).

        The kernel's own notes go to a file of its own in `home`, kept off the terminal and read back
        only when the kernel dies before it answers.
        """
        started = time.monotonic()
        notes = home / f"kernel-{id(self)}.log"
        with notes.open("wb") as written:
            await self.manager.start_kernel(cwd=str(home), env=environment, stdout=subprocess.DEVNULL, stderr=written)
        self.client = self.manager.client()
        self.client.start_channels()
        try:
            await self.client.wait_for_ready(timeout=CELL_LIMIT_SECONDS)
        except RuntimeError as error:  # jupyter_client's word for a kernel that died or never answered
            said = notes.read_text(errors="replace").strip().splitlines()[-12:]
            raise RuntimeError(f"{self.notebook}'s kernel: {error}; its last words:\n" + "\n".join(said)) from None
        await self._run(0, timed=False)
        return time.monotonic() - started

    async def work(self, until: float, think_seconds: float, pauses: random.Random) -> None:
        """Cells from the second on, a think time apart, until the window closes; the first pause spreads the class."""
        pause = pauses.uniform(0, think_seconds)
        index = 1
        while time.monotonic() + pause < until:
            await asyncio.sleep(pause)
            await self._run(index % len(self.cells))
            index += 1
            pause = think_seconds * pauses.uniform(*THINK_SPREAD)
        await asyncio.sleep(max(0.0, until - time.monotonic()))  # still thinking when the window closes

    async def _run(self, index: int, timed: bool = True) -> None:
        assert self.client is not None  # started
        started = time.monotonic()
        try:
            reply = await self.client.execute_interactive(
                self.cells[index], timeout=CELL_LIMIT_SECONDS, output_hook=lambda message: None
            )
            content = reply["content"]
            if content["status"] != "ok":
                self.failures.append(f"{self.notebook} cell {index}: {content.get('ename')}: {content.get('evalue')}")
        except TimeoutError:
            self.failures.append(f"{self.notebook} cell {index}: no answer within {CELL_LIMIT_SECONDS:.0f} s")
        if timed:
            self.cell_seconds.append(time.monotonic() - started)

    async def stop(self) -> None:
        if self.client is not None:
            self.client.stop_channels()
        if self.manager.has_kernel:
            await self.manager.shutdown_kernel(now=True)


def activity_words(plan: KernelPlan) -> str:
    low, high = (plan.think_seconds * share for share in THINK_SPREAD)
    return f"a cell every {plan.think_seconds:g} s (pauses drawn between {low:g} and {high:g} s)"


def kernel_load_lines(result: KernelLoadResult) -> list[str]:
    """What the command prints: the plan and the machine, a line per class, then every failed cell."""
    lines = [
        f"students' kernels at work: {activity_words(result.plan)}, read over {result.plan.window_seconds:g} s "
        "once every kernel had started",
        f"{len(result.notebooks)} notebook(s), the students spread over them; {result.cores} cores, "
        f"{result.memory_bytes / 2**30:.1f} GiB, load {result.load_average:.1f} at the start",
        "",
        f"{'students':>8}  {'cores used':>10}  {'students/core':>13}  {'MiB/kernel':>10}  {'GiB, all':>8}  "
        f"{'cell p50 s':>10}  {'cell p95 s':>10}  {'start p95 s':>11}  {'cells':>5}  {'failed':>6}",
    ]
    for c in result.classes:
        lines.append(
            f"{c.students:>8}  {c.kernel_cores:>10.3f}  {c.students_per_core:>13.0f}  "
            f"{c.mean_kernel_bytes / 2**20:>10.0f}  {sum(c.kernel_bytes) / 2**30:>8.1f}  {c.cell_p50:>10.2f}  "
            f"{c.cell_p95:>10.2f}  {c.start_p95:>11.1f}  {len(c.cell_seconds):>5}  {len(c.failed_cells):>6}"
        )
    failures = [failure for c in result.classes for failure in c.failed_cells]
    return lines + [f"failed: {failure}" for failure in failures]
