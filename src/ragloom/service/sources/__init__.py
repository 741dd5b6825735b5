"""Sources of knowledge bases kept in sync: adding, changing and removing them (``manage``), the sync job
(``sync``) and their views (``views``)."""
