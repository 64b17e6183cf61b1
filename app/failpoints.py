"""Named steps where a kill -9 test makes this process kill itself (`ASTROLABE_FAILPOINT`): the
crash happens exactly there, every run. Steps: the engine supervisor's handover (`copied`,
`caught_up`, `sealed`, `finished`, `switched`, `retired`), a backup's (`backup_copied`,
`backup_sent_file`, `backup_received_file`) and a reindex's (`reindexed_page`)."""

import os
import signal

FAILPOINT_ENV = "ASTROLABE_FAILPOINT"


def failpoint(step: str) -> None:
    if os.environ.get(FAILPOINT_ENV) == step:
        os.kill(os.getpid(), signal.SIGKILL)
