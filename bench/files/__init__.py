"""File extraction: how fast each format is read, beside the embedding model's own rate, and
what reading large files does to the searches running beside it (`extraction`)."""
