"""Web pages (a status page for now)."""
