"""The API's contracts: every request and response model, one module per domain.

A leaf package: it imports nothing of ragloom but :mod:`ragloom.errors` and :mod:`ragloom.states`,
so the SDK, the CLI and the web pages can use the models without loading the service, the stores or
the pipeline. The functions that build a response from stored rows live beside their service
(:mod:`ragloom.service.views` and its neighbours).
"""
