"""The queue of waiting pre-checks: served round robin across students, at most one running per student.

A student with many notebooks waiting does not push the others back: each
turn goes to the next student in the order they first joined the rotation.
"""

from __future__ import annotations

from collections import OrderedDict, deque
from typing import Generic, TypeVar

Item = TypeVar("Item")


class FairQueue(Generic[Item]):
    def __init__(self) -> None:
        self._waiting: OrderedDict[str, deque[Item]] = OrderedDict()  # rotation order: next student first
        self._running: set[str] = set()

    def put(self, student: str, item: Item) -> None:
        self._waiting.setdefault(student, deque()).append(item)

    def take(self) -> tuple[str, Item] | None:
        """The next student's oldest item, that student marked running; None when nobody can be served."""
        for student in list(self._waiting):
            if student in self._running:
                continue
            items = self._waiting.pop(student)
            item = items.popleft()
            if items:  # back of the rotation with what is left
                self._waiting[student] = items
            self._running.add(student)
            return student, item
        return None

    def done(self, student: str) -> None:
        """The student's running item is finished: they may be served again."""
        self._running.discard(student)

    def position(self, student: str, item: Item) -> int:
        """How many waiting items are served before `item` (0: it is next), by the round robin's order."""
        rotation = OrderedDict((name, deque(items)) for name, items in self._waiting.items())
        served = 0
        while rotation:
            name = next(iter(rotation))
            items = rotation.pop(name)
            if name == student and items[0] is item:
                return served
            items.popleft()
            served += 1
            if items:
                rotation[name] = items
        return served

    def waiting(self, student: str) -> tuple[Item, ...]:
        return tuple(self._waiting.get(student, ()))

    def running(self, student: str) -> bool:
        return student in self._running

    def __len__(self) -> int:
        return sum(len(items) for items in self._waiting.values())
