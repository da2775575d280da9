"""textkit: small text helpers, one module per task (slug, wrap, count)."""
