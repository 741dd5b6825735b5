"""Connectors: where a knowledge base's documents come from and stay in sync with — a folder of the
server's disk, a web site, ... — each behind one :class:`Connector` protocol, registered by type
(:data:`connectors`, entry-point group ``ragloom.connectors``). Pure: no database, no object store;
:mod:`ragloom.service.sources` runs them."""

from ragloom.ingest.connectors.base import (
    Connector,
    ConnectorSpec,
    GroupSource,
    Item,
    SourceError,
    connectors,
    open_connector,
)

__all__ = ["Connector", "ConnectorSpec", "GroupSource", "Item", "SourceError", "connectors", "open_connector"]
