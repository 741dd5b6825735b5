"""Documents: upload, ingestion (parse, chunk, enrich, publish), versions, chunks and their manual edits,
the chunking preview, re-indexing, and the object store's garbage collection."""
