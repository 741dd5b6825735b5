"""Knowledge built over a document or a knowledge base, as pure libraries (the service layer stores
and schedules them): tables of contents (``toc``, ``toc_llm``), RAPTOR summary trees (``raptor``), the
knowledge graph (``graph``), tag features (``tags``) and chat-model enrichment of chunks (``enrich``)."""
