"""Search and answers: the caller's scope, the question's applicability scope, tag sets, knowledge-graph
evidence, retrieval and the cited answer."""
