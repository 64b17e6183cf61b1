"""The search capability on the wire, by endpoint family: `requests` (the search body and the
viz parameters), `results` (the search response), `viz` (the PCA map), `navigation` (folders,
chunk context)."""
