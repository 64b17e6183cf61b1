"""The benchmarks: what the service costs and what it finds, measured on this machine against the
real service (and, side by side, its peers) and written to bench/results/, from which the docs
are rendered. `run` is the speed benchmark in one command (tiers, latency, throughput, memory,
the live index with `--live`) and `report` renders its results; the benchmarks are grouped by
what they measure: the index and its engine (`index`), the ranking (`quality`), file
extraction (`files`), the surfaces a client meets (`surfaces`); `peers` runs the other engines
on the same points, and `harness` is what all of them stand on."""
