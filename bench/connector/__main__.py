"""`python -m bench.connector`: see bench/connector/run.py."""

import signal
import sys

from bench.connector.run import main

if __name__ == "__main__":
    # Stopped with SIGTERM, the run still stops the service and the stub it started.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    main()
