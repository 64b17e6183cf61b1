"""The ranking: what a search finds and what its settings cost. nDCG@10 and recall@100 of every
algorithm, fusion and feedback over HTTP, cross-validated (`retrieval`, rendered by `report`),
the candidate depth against quality, paging and time (`depth`), each lever's latency in one
process (`levers_ab`), and how the strong-match floor was chosen (`strong_matches`)."""
