"""The engine's reads enter one at a time, in the order they arrived."""

import threading
import time
from collections.abc import Callable

from app.store.engine.turnstile import Turnstile


def wait_until(condition: Callable[[], bool]) -> None:
    """Polls `condition` until it holds; fails after 10 s."""
    deadline = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.001)


def test_waiting_reads_enter_in_the_order_they_arrived() -> None:
    turnstile = Turnstile()
    entered: list[int] = []
    inside = 0
    most_inside = 0
    count = threading.Lock()

    def read(number: int) -> None:
        nonlocal inside, most_inside
        with turnstile.turn():
            with count:
                inside += 1
                most_inside = max(most_inside, inside)
            entered.append(number)
            time.sleep(0.002)
            with count:
                inside -= 1

    threads = []
    with turnstile.turn():  # every read below has to wait
        for number in range(8):
            thread = threading.Thread(target=read, args=(number,))
            thread.start()
            threads.append(thread)
            wait_until(lambda: turnstile.waiting == len(threads))  # in the queue
    for thread in threads:
        thread.join()
    assert entered == list(range(8))
    assert most_inside == 1


def test_a_turn_free_again_is_taken_at_once() -> None:
    turnstile = Turnstile()
    for _ in range(3):
        with turnstile.turn():
            assert turnstile.waiting == 0
    done = threading.Event()

    def read() -> None:
        with turnstile.turn():
            done.set()

    thread = threading.Thread(target=read)
    thread.start()
    assert done.wait(5), "the turn was left taken"
    thread.join()
