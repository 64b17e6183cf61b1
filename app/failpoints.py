"""Named steps where a kill -9 test makes this process kill itself (`ASTROLABE_FAILPOINT`, as the
engine supervisor's handover steps do): the crash happens exactly there, every run."""

import os
import signal

from app.store.embedded import FAILPOINT_ENV


def failpoint(step: str) -> None:
    if os.environ.get(FAILPOINT_ENV) == step:
        os.kill(os.getpid(), signal.SIGKILL)
