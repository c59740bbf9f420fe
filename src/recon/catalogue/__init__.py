"""What the provider offers: each list resource, its fields and its records' models."""
