"""Provider adapters: one per API family, behind one streaming interface.

The official SDKs (``anthropic``, ``openai``) are imported only when a
provider is first called, so the daemon starts fast.
"""
