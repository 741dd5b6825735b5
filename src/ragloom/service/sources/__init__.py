"""Sources of knowledge bases kept in sync: the use cases (``sources``), the sync job (``sync``) and the
views (``source_views``)."""
