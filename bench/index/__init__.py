"""The index and the engine under it: the live index fed over HTTP and measured from outside
(`live`) and the designs weighed for it (`live_designs`), plain segments against HNSW
(`hnsw`), how many segments a rebuild keeps (`rebuild_segments`), int8 quantization
(`quantization`), facet counts from memory against the engine (`facets`), RAM and disk per
chunk (`sizing`), backup and restore times (`backup`), and what ingest costs with the model
(`embedding`) and without it (`ingest_ceiling`)."""
