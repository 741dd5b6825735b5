"""Use cases shared by the API, the CLI, the worker and the UI. No HTTP in here."""
