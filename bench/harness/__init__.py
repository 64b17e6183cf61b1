"""The harness every benchmark stands on: the corpus and its tiers (`corpus`, `prepare`), the
real service in its processes on a loopback port (`service`, `demo_server`) and the stand-ins
beside it (`loopback`, `embed_stub`), the embedding model with its vectors cached (`encoder`)
and its own rate (`model`), headless Chromium (`chromium`), the figures taken of a run
(`figures`: timings, percentiles, nDCG and recall, disk), and where the data and the results
go with the machine and its load beside them (`results`). Nothing here is measured on its own,
and nothing here imports a benchmark."""
