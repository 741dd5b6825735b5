"""The API's contracts: every request and response model, one module per domain.

A leaf package: it imports nothing of ragloom but :mod:`ragloom.errors` and :mod:`ragloom.states`,
so the SDK, the CLI and the web pages can use the models without loading the service, the stores or
the pipeline. The functions that build a response from stored rows live beside their service (the
``views.py`` of each :mod:`ragloom.service` sub-package, on the shared :mod:`ragloom.service.views`).

The modules: :mod:`~ragloom.schemas.base` (what every model shares), :mod:`~ragloom.schemas.datasets`,
:mod:`~ragloom.schemas.documents`, :mod:`~ragloom.schemas.chunks`, :mod:`~ragloom.schemas.chunking`,
:mod:`~ragloom.schemas.options` (a retrieval's options), :mod:`~ragloom.schemas.scope`,
:mod:`~ragloom.schemas.retrieval`, :mod:`~ragloom.schemas.answers`, :mod:`~ragloom.schemas.assistants`,
:mod:`~ragloom.schemas.chats`, :mod:`~ragloom.schemas.sessions`, :mod:`~ragloom.schemas.builds`,
:mod:`~ragloom.schemas.graph`, :mod:`~ragloom.schemas.accounts`, :mod:`~ragloom.schemas.workspaces`,
:mod:`~ragloom.schemas.keys`, :mod:`~ragloom.schemas.audit`, :mod:`~ragloom.schemas.providers`,
:mod:`~ragloom.schemas.system` (the error body, /health), :mod:`~ragloom.schemas.names` (the rules of
a name a person gives), and the compatible APIs' bodies, :mod:`~ragloom.schemas.dify` and
:mod:`~ragloom.schemas.openai`, and what the MCP server's tools return, :mod:`~ragloom.schemas.mcp`.
"""
