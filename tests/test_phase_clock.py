"""The phase clock: one timeline, each moment charged to the phase running then, adding up to the wall time."""

import threading

import pytest

from gradekit.grading import phase_clock
from gradekit.grading.phase_clock import Phase, PhaseClock, PhaseTimes

pytestmark = pytest.mark.unit


class StoppedTime:
    """A monotonic clock that moves only when the test moves it."""

    def __init__(self) -> None:
        self.now = 100.0

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
def moments(monkeypatch) -> StoppedTime:
    stopped = StoppedTime()
    monkeypatch.setattr(phase_clock, "time", stopped)
    return stopped


def test_a_phase_entered_within_another_is_taken_out_of_it_and_the_phases_add_up_to_the_wall_time(moments):
    clock = PhaseClock()
    moments.now += 1.0
    with clock.phase(Phase.TEST_CELLS):
        moments.now += 2.0
        with clock.phase(Phase.SEALED_WIRE):
            moments.now += 0.5
            with clock.phase(Phase.SEALED_KERNEL):
                moments.now += 3.0
                assert clock.running is Phase.SEALED_KERNEL
            moments.now += 0.25
        moments.now += 1.0
    moments.now += 0.5
    assert clock.running is Phase.OTHER
    times = clock.times()
    assert dict(times.seconds) == {
        Phase.OTHER: 1.5,
        Phase.TEST_CELLS: 3.0,
        Phase.SEALED_WIRE: 0.75,
        Phase.SEALED_KERNEL: 3.0,
    }
    assert times.total == 8.25


def test_a_phase_left_open_inside_another_ends_with_it(moments):
    clock = PhaseClock()
    with clock.phase(Phase.TEST_CELLS):
        given_up = clock.phase(Phase.SEALED_WIRE)  # a call given up by its watchdog does not leave its phase
        given_up.__enter__()
        moments.now += 2.0
    moments.now += 1.0
    assert clock.times().of(Phase.SEALED_WIRE) == 2.0
    assert clock.times().of(Phase.OTHER) == 1.0


def test_a_phase_entered_from_another_thread_interrupts_the_running_one(moments):
    clock = PhaseClock()

    def answer() -> None:
        with clock.phase(Phase.SEALED_KERNEL):
            moments.now += 4.0

    with clock.phase(Phase.TEST_CELLS):
        moments.now += 1.0
        other = threading.Thread(target=answer)
        other.start()
        other.join()
    assert (clock.times().of(Phase.TEST_CELLS), clock.times().of(Phase.SEALED_KERNEL)) == (1.0, 4.0)


def test_restarting_forgets_the_last_submission(moments):
    clock = PhaseClock()
    with clock.phase(Phase.ANSWER_CELLS):
        moments.now += 5.0
    clock.restart()
    moments.now += 1.0
    assert dict(clock.times().seconds) == {Phase.OTHER: 1.0}


def test_moving_time_charges_another_phase_but_never_more_than_the_first_had(moments):
    clock = PhaseClock()
    with clock.phase(Phase.KERNEL_START):
        moments.now += 3.0
    clock.move(1.0, Phase.KERNEL_START, Phase.BOX_START)
    assert (clock.times().of(Phase.KERNEL_START), clock.times().of(Phase.BOX_START)) == (2.0, 1.0)
    clock.move(9.0, Phase.KERNEL_START, Phase.BOX_START)
    assert (clock.times().of(Phase.KERNEL_START), clock.times().of(Phase.BOX_START)) == (0.0, 3.0)


def test_times_add_up_phase_by_phase_in_the_phases_order():
    first = PhaseTimes({Phase.GRADEBOOK: 1.0, Phase.KERNEL_START: 2.0})
    second = PhaseTimes({Phase.KERNEL_START: 0.5}).with_phase(Phase.WORKER_START, 3.0)
    both = first.plus(second)
    assert list(both) == [Phase.WORKER_START, Phase.KERNEL_START, Phase.GRADEBOOK]
    assert (both.of(Phase.KERNEL_START), both.of(Phase.FEEDBACK), both.total) == (2.5, 0.0, 6.5)
