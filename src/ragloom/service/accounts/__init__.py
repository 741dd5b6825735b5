"""Accounts and workspaces: people, sign-in and passwords, workspaces and their members, API keys, the
workspace's own model providers and their encrypted secrets, who sees what (sharing), the audit log."""
